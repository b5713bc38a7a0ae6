#include "plan/vram_bill.hpp"

namespace dense::plan {

const char* to_string(Item item) noexcept {
    switch (item) {
        case Item::Weights: return "weights";
        case Item::KvCache: return "kv_cache";
        case Item::RecurrentState: return "recurrent_state";
        case Item::Activations: return "activations";
        case Item::Workspace: return "op_workspace";
        case Item::Staging: return "staging";
        case Item::Reserve: return "safety_reserve";
        case Item::PrefillScratch: return "prefill_scratch";
    }
    return "?";
}

const char* title(Item item) noexcept {
    switch (item) {
        case Item::Weights: return "weights";
        case Item::KvCache: return "KV cache";
        case Item::RecurrentState: return "recurrent state x 2 banks";
        case Item::Activations: return "activations (decode scratch)";
        case Item::Workspace: return "op workspace";
        case Item::Staging: return "staging (step inputs, logits)";
        case Item::Reserve: return "safety reserve";
        case Item::PrefillScratch: return "prefill scratch";
    }
    return "?";
}

uint64_t VramBill::allocated() const noexcept {
    uint64_t total = 0;
    for (const auto& a : allocations) total += a.bytes;
    return total;
}

uint64_t VramBill::bytes_of(Item item) const noexcept {
    uint64_t total = 0;
    for (const auto& l : lines)
        if (l.item == item) total += l.bytes;
    return total;
}

std::map<std::string, uint64_t> VramBill::bytes_by_label() const {
    std::map<std::string, uint64_t> out;
    for (const auto& a : allocations) out[a.label] += a.bytes;
    return out;
}

}  // namespace dense::plan
