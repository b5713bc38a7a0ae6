// The op registry: which pack implements which op for which types on which kind of device.
//
// Key: (op kind, weight type, activation type, device kind) -> candidates, each with the pack that
// registered it, its priority and a size-limited copy of its dense_op_impl. select() picks, for one
// concrete call on one device, the best candidate whose supports() accepts the call:
//   1. only candidates of packs that can run on that device (PackRanks: score > 0; the PackManager
//      also leaves out every other pack on the main device when the policy forces one);
//   2. a pack named in policy.prefer first (earlier in the list first),
//   3. then the higher impl priority (set by the pack),
//   4. then the pack's higher score on that device (exact-arch build over a JIT fallback),
//   5. then the earlier registration.
// The registry is filled while packs load and read-only afterwards; it is not thread-safe to modify.
#pragma once

#include <dense/abi/dense_abi.h>

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dense::packs {

// "gemv_q", "rms_norm", ...; "op#<n>" outside the closed list.
std::string op_kind_name(dense_op_kind kind);
// The inverse, for config files and tests; nullopt for an unknown name.
std::optional<dense_op_kind> op_kind_from_name(std::string_view name);
// "cpu", "cuda"; "device#<n>" otherwise.
std::string device_kind_name(dense_device_kind kind);
// "q4_k", "f32", "vendor.format" (from the global type table); "-" for DENSE_TYPE_NONE; "#<id>" if unknown.
std::string type_name(dense_type_id id);

struct OpKey {
    dense_op_kind op = 0;
    dense_type_id weight = DENSE_TYPE_NONE;
    dense_type_id act = DENSE_TYPE_NONE;
    dense_device_kind device = DENSE_DEVICE_CPU;

    auto operator<=>(const OpKey&) const = default;
};
std::string to_string(const OpKey& key);  // "gemv_q(q4_k, q8_1, cuda)"

struct OpCandidate {
    std::string pack;       // name of the pack that registered it
    std::string impl_name;  // the impl's own name (copied from the pack's string)
    int32_t priority = 0;
    // Size-limited copy: fields past the writer's struct_size are zero, and hdr.struct_size is
    // lowered to the bytes this copy really holds (so has_bytes() checks stay truthful).
    dense_op_impl impl{};
    uint64_t order = 0;  // registration order, the last tie-breaker

    OpKey key() const { return {impl.op_kind, impl.weight_type, impl.act_type, impl.device_kind}; }
};

// How one device ranks packs for op selection. Built by PackManager::ranks_for(device).
struct PackRank {
    uint32_t score = 0;       // the pack's score on the device; 0 = cannot run there
    uint32_t preference = 0;  // 0 = not in policy.prefer; higher = earlier in the list
};
struct PackRanks {
    std::map<std::string, PackRank, std::less<>> by_pack;  // absent = not eligible
    const PackRank* find(std::string_view pack) const;
};

class OpRegistry {
public:
    // "" if the pack-written *impl may be registered, else the reason: header (major, size at least
    // ABI 1.0's), op kind in the closed list, device kind known, run set, weight/act types known.
    static std::string validate(const dense_op_impl* impl);

    // Adds a size-limited copy of the pack-written impl under `pack`. Throws dense::Error (Pack)
    // with validate()'s reason if it is not acceptable.
    void add(std::string_view pack, const dense_op_impl& impl);

    // Removes every candidate `pack` registered; returns how many.
    size_t remove_pack(std::string_view pack);

    // Candidates under key, in registration order (empty if none).
    const std::vector<OpCandidate>& candidates(const OpKey& key) const;

    // The best candidate for `call` (see the file comment), or nullptr if none is eligible or none
    // supports the call.
    const OpCandidate* select(const OpKey& key, const dense_op_call& call, const PackRanks& ranks) const;

    // Everything `pack` registered, ordered by key (for listings).
    std::vector<const OpCandidate*> of_pack(std::string_view pack) const;

    const std::map<OpKey, std::vector<OpCandidate>>& all() const noexcept { return by_key_; }
    size_t size() const noexcept;

private:
    std::map<OpKey, std::vector<OpCandidate>> by_key_;
    uint64_t next_order_ = 0;
};

}  // namespace dense::packs
