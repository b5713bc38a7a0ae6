// Helpers of the op-call contracts every in-tree pack checks (gdn_contracts.hpp), and of each pack's
// own handlers: a chain of checks that stops at the first failure, and the reading of a params struct.
#pragma once

#include <dense/abi/dense_abi.h>
#include <dense/sdk/pack.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace dense::pack_common {

// Exactly n_src sources and n_dst destinations, with non-NULL arrays where any are expected.
std::string check_counts(const dense_op_call& c, uint32_t n_src, uint32_t n_dst);

// GEMM_Q's dense_gemv_params.order (ABI 1.13): "" for DENSE_GEMM_ORDER_EXACT and _FREE, else why not
// (an order a later minor may define; refused rather than guessed).
std::string check_gemm_order(uint32_t order);

// Runs the checks in order and keeps the first failure.
template <class... Checks>
std::string first_error(Checks&&... checks) {
    std::string err;
    ((err.empty() ? void(err = checks()) : void()), ...);
    return err;
}

// The call's params as a P: "" with *out filled, or why not (NULL, another ABI major, or a
// struct_size that ends before byte `needed`, the end of the last field the pack reads).
template <class P>
std::string read_params(const dense_op_call& c, const char* name, std::size_t needed, P* out) {
    const auto* p = static_cast<const P*>(c.params);
    if (p == nullptr) return std::string("params (") + name + ") is NULL";
    if (p->hdr.abi_major != DENSE_ABI_MAJOR)
        return std::string("params (") + name + ") has ABI major " + std::to_string(p->hdr.abi_major);
    if (!dense::sdk::has_bytes(p, needed))
        return "params struct_size " + std::to_string(p->hdr.struct_size) + " is too small for " + name + " (needs " +
               std::to_string(needed) + ")";
    *out = dense::sdk::read_struct(p);
    return {};
}

// The byte just past member M of struct P (the size a params struct must at least declare).
#define DENSE_PACK_FIELD_END(P, M) (offsetof(P, M) + sizeof(P::M))

}  // namespace dense::pack_common
