// The call contracts of the attention ops (ROPE, KV_STORE, ATTN_DECODE, ATTN_PREP; dense_abi.h), one for every
// pack, as gdn_contracts.hpp does for the Gated DeltaNet ops: each returns "" with the call's shape
// and params filled in, or the first thing wrong with the call (one line naming the view or field).
// They assume the call has the op's counts of sources and destinations (each pack checks those
// first). The position / n_kv VALUES are not checked here: cpu-ref reads them on the host when the
// call runs and checks their range there; a CUDA pack cannot, and its kernels handle an
// out-of-range value without going out of bounds.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::pack_common {

// ROPE's params: NEOX mode, n_rot even in [2, head_dim], freq_base and freq_scale finite and > 0.
std::string check_rope_params(const dense_rope_params& p, int64_t head_dim);

// src0 x {head_dim, heads, T} F32 (strided rows), src1 position I32 {T}; dst {head_dim, heads, T}
// F32 (strided rows), x itself or apart from it; params as check_rope_params.
struct RopeCall {
    int64_t head_dim = 0, heads = 0, tokens = 0;
    dense_rope_params params{};
};
std::string check_rope(const dense_op_call& c, RopeCall& out);

// src0 k and src1 v {d, Hkv, T} F32 (contiguous rows and tokens), src2 position I32 {T}; dst0 K and
// dst1 V caches {d, Hkv, n_ctx} of one type, apart from every source and from each other. No params.
struct KvStoreCall {
    int64_t d = 0, hkv = 0, tokens = 0;
};
std::string check_kv_store(const dense_op_call& c, KvStoreCall& out);

// src0 q {d, Hq, T} F32 (strided rows), src1 K and src2 V caches {d, Hkv, n_ctx} of one type (Hq a
// multiple of Hkv), src3 n_kv I32 {T}, optional src4 gate like q; dst {d, Hq, T} F32 (contiguous
// rows), apart from every source; params scale finite.
struct AttnDecodeCall {
    int64_t d = 0, hq = 0, hkv = 0, tokens = 0;
    bool gated = false;
    dense_attn_params params{};
};
std::string check_attn_decode(const dense_op_call& c, AttnDecodeCall& out);

// ABI 1.11 ATTN_PREP (dense_abi.h): the call checked as the five calls it stands for — RMS_NORM of the q
// heads and of the k heads, ROPE of both in place, KV_STORE — which it fills in (`norm_q`, `norm_k`,
// `rope_q`, `rope_k`, `kv_store`, with their views and params) and checks with their contracts. A
// pack runs them, or one kernel that leaves the same bits. The sub-calls point into this struct: it
// is neither copied nor moved.
struct AttnPrepCall {
    int64_t d = 0, hq = 0, hkv = 0, n_ctx = 0;
    dense_attn_prep_params params{};
    dense_op_call norm_q{}, norm_k{}, rope_q{}, rope_k{}, kv_store{};
    dense_tensor_view norm_q_src[2]{}, norm_k_src[2]{}, q_out[1]{}, k_out[1]{}, rope_q_src[2]{}, rope_k_src[2]{};
    dense_tensor_view kv_src[3]{}, kv_dst[2]{};
    dense_norm_params norm_params{};
    dense_rope_params rope_params{};

    AttnPrepCall() = default;
    AttnPrepCall(const AttnPrepCall&) = delete;
    AttnPrepCall& operator=(const AttnPrepCall&) = delete;
};
std::string check_attn_prep(const dense_op_call& c, AttnPrepCall& out);

}  // namespace dense::pack_common
