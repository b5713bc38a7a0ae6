#include "packs/cpu_gemv_speed.hpp"

namespace dense::packs {

std::function<bool(dense_type_id)> fast_cpu_gemv_checker(const PackManager& packs,
                                                         std::function<dense_type_id(dense_type_id)> activation_for) {
    const auto ranks = packs.ranks_for(0);
    return [&packs, ranks, activation_for = std::move(activation_for)](dense_type_id weight) {
        const OpKey key{DENSE_OP_GEMV_Q, weight, activation_for(weight), DENSE_DEVICE_CPU};
        for (const auto& c : packs.registry().candidates(key)) {
            const auto* r = ranks.find(c.pack);
            if (r != nullptr && r->score > 0 && c.priority > 0) return true;
        }
        return false;
    };
}

}  // namespace dense::packs
