#include "packs/cpu_gemv_speed.hpp"

#include "core/env_number.hpp"

namespace dense::packs {

bool arithmetic_bound_on_cpu(dense_type_id weight) {
    // DENSE_CPU_COST_CLASSES=0: no format counts as arithmetic-bound (the order before session 25;
    // for A/B measurements; a session runs the placement its plan chose, so they still agree). Read
    // when a split is planned: a bad value is an error then.
    static const bool classes = env_whole_number("DENSE_CPU_COST_CLASSES", 1, 0, 1) == 1;
    if (!classes) return false;
    switch (weight) {
        case DENSE_TYPE_Q2_K:
        case DENSE_TYPE_Q3_K:
        case DENSE_TYPE_IQ2_XS:
        case DENSE_TYPE_IQ2_S:
        case DENSE_TYPE_IQ3_XXS:
        case DENSE_TYPE_IQ3_S: return true;
        default: return false;
    }
}

std::function<CpuGemvCost(dense_type_id)> cpu_gemv_cost_checker(const PackManager& packs,
                                                                std::function<dense_type_id(dense_type_id)> activation_for) {
    const auto ranks = packs.ranks_for(0);
    return [&packs, ranks, activation_for = std::move(activation_for)](dense_type_id weight) {
        const OpKey key{DENSE_OP_GEMV_Q, weight, activation_for(weight), DENSE_DEVICE_CPU};
        for (const auto& c : packs.registry().candidates(key)) {
            const auto* r = ranks.find(c.pack);
            if (r != nullptr && r->score > 0 && c.priority > 0)
                return arithmetic_bound_on_cpu(weight) ? CpuGemvCost::ArithmeticBound : CpuGemvCost::ReadBound;
        }
        return CpuGemvCost::ReferenceOnly;
    };
}

}  // namespace dense::packs
