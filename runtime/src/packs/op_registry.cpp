#include "packs/op_registry.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "packs/abi_struct_copy.hpp"

#include <algorithm>
#include <array>
#include <tuple>

namespace dense::packs {
namespace {

// Index = dense_op_kind; the closed list owned by the core (dense_abi.h).
constexpr std::array<std::string_view, DENSE_OP_KIND_COUNT> kOpNames = {
    "",        "dequantize",    "quantize_act", "gemv_q",     "gemm_q",      "embed_row",     "rms_norm",
    "rope",    "attn_decode",   "attn_prefill", "gdn_decode", "gdn_prefill", "conv1d_causal", "swiglu",
    "l2_norm", "gated_rms_norm", "gdn_gates",    "kv_store",   "check_finite",
    "gemv_q_multi", "gdn_step", "attn_prep", "argmax", "top_k"};

bool known_type(dense_type_id id) {
    return id == DENSE_TYPE_NONE || global_type_table().find(id) != nullptr;
}

}  // namespace

std::string op_kind_name(dense_op_kind kind) {
    if (kind > 0 && kind < DENSE_OP_KIND_COUNT) return std::string(kOpNames[kind]);
    return "op#" + std::to_string(kind);
}

std::optional<dense_op_kind> op_kind_from_name(std::string_view name) {
    for (uint32_t k = 1; k < DENSE_OP_KIND_COUNT; ++k)
        if (kOpNames[k] == name) return k;
    return std::nullopt;
}

std::string device_kind_name(dense_device_kind kind) {
    switch (kind) {
        case DENSE_DEVICE_CPU:
            return "cpu";
        case DENSE_DEVICE_CUDA:
            return "cuda";
        default:
            return "device#" + std::to_string(kind);
    }
}

std::string type_name(dense_type_id id) {
    if (id == DENSE_TYPE_NONE) return "-";
    if (const TypeInfo* t = global_type_table().find(id); t != nullptr) return t->name;
    return "#" + std::to_string(id);
}

std::string to_string(const OpKey& key) {
    return op_kind_name(key.op) + "(" + type_name(key.weight) + ", " + type_name(key.act) + ", " +
           device_kind_name(key.device) + ")";
}

const PackRank* PackRanks::find(std::string_view pack) const {
    const auto it = by_pack.find(pack);
    return it == by_pack.end() ? nullptr : &it->second;
}

std::string OpRegistry::validate(const dense_op_impl* impl) {
    if (std::string why = check_pack_struct(impl, kAbi10OpImplSize, "dense_op_impl"); !why.empty()) return why;
    const dense_op_impl c = copy_pack_struct(*impl);
    const std::string what = "op impl '" + pack_string(c.name, "?") + "'";
    if (c.op_kind == 0 || c.op_kind >= DENSE_OP_KIND_COUNT)
        return what + ": op kind " + std::to_string(c.op_kind) + " is not in this runtime's list";
    if (c.device_kind != DENSE_DEVICE_CPU && c.device_kind != DENSE_DEVICE_CUDA)
        return what + ": unknown device kind " + std::to_string(c.device_kind);
    if (c.run == nullptr) return what + ": run is NULL";
    if (!known_type(c.weight_type)) return what + ": unknown weight type id " + std::to_string(c.weight_type);
    if (!known_type(c.act_type)) return what + ": unknown activation type id " + std::to_string(c.act_type);
    return {};
}

void OpRegistry::add(std::string_view pack, const dense_op_impl& impl) {
    if (std::string why = validate(&impl); !why.empty())
        throw Error(ErrorKind::Pack, "pack '" + std::string(pack) + "': " + why);
    OpCandidate c;
    c.pack = std::string(pack);
    c.impl = copy_pack_struct(impl);
    c.impl.hdr.struct_size = std::min<uint32_t>(impl.hdr.struct_size, static_cast<uint32_t>(sizeof(dense_op_impl)));
    c.impl_name = pack_string(c.impl.name, "?");
    c.priority = c.impl.priority;
    c.order = next_order_++;
    by_key_[c.key()].push_back(std::move(c));
}

size_t OpRegistry::remove_pack(std::string_view pack) {
    size_t removed = 0;
    for (auto it = by_key_.begin(); it != by_key_.end();) {
        auto& v = it->second;
        const auto old = v.size();
        std::erase_if(v, [&](const OpCandidate& c) { return c.pack == pack; });
        removed += old - v.size();
        it = v.empty() ? by_key_.erase(it) : std::next(it);
    }
    return removed;
}

const std::vector<OpCandidate>& OpRegistry::candidates(const OpKey& key) const {
    static const std::vector<OpCandidate> kNone;
    const auto it = by_key_.find(key);
    return it == by_key_.end() ? kNone : it->second;
}

const OpCandidate* OpRegistry::select(const OpKey& key, const dense_op_call& call, const PackRanks& ranks) const {
    struct Ranked {
        const OpCandidate* c;
        PackRank rank;
    };
    std::vector<Ranked> eligible;
    for (const auto& c : candidates(key)) {
        const PackRank* r = ranks.find(c.pack);
        if (r != nullptr && r->score > 0) eligible.push_back({&c, *r});
    }
    // Best first: preferred pack, impl priority, pack score, earlier registration.
    std::sort(eligible.begin(), eligible.end(), [](const Ranked& a, const Ranked& b) {
        return std::tuple(a.rank.preference, a.c->priority, a.rank.score, b.c->order) >
               std::tuple(b.rank.preference, b.c->priority, b.rank.score, a.c->order);
    });
    for (const auto& e : eligible) {
        const dense_op_impl& impl = e.c->impl;
        if (impl.supports == nullptr || impl.supports(impl.user, &call) != 0) return e.c;
    }
    return nullptr;
}

std::vector<const OpCandidate*> OpRegistry::of_pack(std::string_view pack) const {
    std::vector<const OpCandidate*> out;
    for (const auto& [key, v] : by_key_)
        for (const auto& c : v)
            if (c.pack == pack) out.push_back(&c);
    return out;
}

size_t OpRegistry::size() const noexcept {
    size_t n = 0;
    for (const auto& [key, v] : by_key_) n += v.size();
    return n;
}

}  // namespace dense::packs
