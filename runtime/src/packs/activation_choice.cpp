#include "packs/activation_choice.hpp"

#include "core/type_table.hpp"

namespace dense::packs {

std::function<dense_type_id(dense_type_id)> gemv_activation_chooser(const PackManager& packs, size_t device,
                                                                    dense_type_id first_choice) {
    const auto kind = packs.devices().at(device).kind();
    const auto ranks = packs.ranks_for(device);
    return [&packs, kind, ranks, first_choice](dense_type_id weight) {
        auto usable = [&](dense_type_id act) {
            for (const auto& c : packs.registry().candidates(OpKey{DENSE_OP_GEMV_Q, weight, act, kind})) {
                const auto* r = ranks.find(c.pack);
                if (r != nullptr && r->score > 0) return true;
            }
            return false;
        };
        if (first_choice != DENSE_TYPE_NONE && usable(first_choice)) return first_choice;
        const TypeInfo* t = global_type_table().find(weight);
        const dense_type_id preferred = t ? t->act_type : DENSE_TYPE_NONE;
        if (usable(preferred)) return preferred;
        for (dense_type_id act : {DENSE_TYPE_Q8_32, DENSE_TYPE_Q8_0, DENSE_TYPE_Q8_K, DENSE_TYPE_F32, DENSE_TYPE_F16,
                                  DENSE_TYPE_BF16})
            if (usable(act)) return act;
        return preferred;  // op selection then reports the missing op precisely
    };
}

std::function<bool(dense_op_kind, dense_type_id)> quantize_fusion_checker(const PackManager& packs, size_t device) {
    return [&packs, device](dense_op_kind op, dense_type_id act) { return implements_op(packs, device, op, act); };
}

bool implements_op(const PackManager& packs, size_t device, dense_op_kind op, dense_type_id act) {
    const auto kind = packs.devices().at(device).kind();
    const auto ranks = packs.ranks_for(device);
    for (const auto& c : packs.registry().candidates(OpKey{op, DENSE_TYPE_NONE, act, kind})) {
        const auto* r = ranks.find(c.pack);
        if (r != nullptr && r->score > 0) return true;
    }
    return false;
}

}  // namespace dense::packs
