// Helpers of the contracts of the fused ops (GDN_STEP, ATTN_PREP), which check a call as the calls it
// stands for: views of parts of a checked view, the sub-calls (their params made with
// sdk::make_struct), and the sub-call's name on its refusal. Internal to pack-common.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::pack_common {

// A contiguous F32 {ne0, ne1} view of `elements` [first, first + ne0 * ne1) of `whole` (a contiguous
// F32 view the caller has checked), on the same device.
inline dense_tensor_view f32_part(const dense_tensor_view& whole, int64_t first, int64_t ne0, int64_t ne1) {
    dense_tensor_view v = whole;
    v.data = static_cast<float*>(whole.data) + first;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.ne[2] = 1;
    v.ne[3] = 1;
    v.nb[0] = 4;
    v.nb[1] = 4 * ne0;
    v.nb[2] = v.nb[1] * ne1;
    v.nb[3] = v.nb[2];
    return v;
}

// `c` (stream, workspace, threads) as a call of `kind` on these views and params.
inline dense_op_call sub_call(const dense_op_call& c, dense_op_kind kind, const dense_tensor_view* src, uint32_t n_src,
                              const dense_tensor_view* dst, uint32_t n_dst, const void* params) {
    dense_op_call s = c;
    s.op_kind = kind;
    s.src = src;
    s.n_src = n_src;
    s.dst = dst;
    s.n_dst = n_dst;
    s.params = params;
    return s;
}

// A sub-call's refusal as the fused call's: "as GDN_DECODE: src0 (q): ...", or "" when it was accepted.
inline std::string as_part(const char* op, std::string error) {
    return error.empty() ? error : std::string("as ") + op + ": " + error;
}

}  // namespace dense::pack_common
