// The call contracts of the Gated DeltaNet ops (CONV1D_CAUSAL, GDN_GATES, GDN_DECODE, GDN_STEP; dense_abi.h),
// one for every pack: each returns "" with the call's shape and params filled in, or the first thing
// wrong with the call (one line naming the view or field). They assume the call has the op's
// counts of sources and destinations (each pack checks those first, with its own device rules).
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::pack_common {

// src0 x {channels, T} (strided rows), src1 taps {kernel >= 2, channels}, src2 state_in
// {kernel - 1, channels}; dst0 y {channels, T} (strided), dst1 state_out (may be exactly state_in).
struct Conv1dCall {
    int64_t channels = 0, kernel = 0, tokens = 0;
    dense_conv_params params{};
};
std::string check_conv1d_causal(const dense_op_call& c, Conv1dCall& out);

// src0 b and src1 a {heads, T}, src2 dt_bias and src3 A {heads}; dst0 beta and dst1 decay {heads, T}.
// No params.
struct GdnGatesCall {
    int64_t heads = 0, tokens = 0;
};
std::string check_gdn_gates(const dense_op_call& c, GdnGatesCall& out);

// src0 q and src1 k {dk, Hk, T}, src2 v {dv, Hv, T} (Hv a multiple of Hk), src3 beta and src4 decay
// {Hv, T}, src5 state_in {dk * dv, Hv}; dst0 o {dv, Hv, T}, dst1 state_out (may be exactly state_in).
struct GdnDecodeCall {
    int64_t dk = 0, hk = 0, dv = 0, hv = 0, state = 0, tokens = 0;
    dense_gdn_params params{};
};
std::string check_gdn_decode(const dense_op_call& c, GdnDecodeCall& out);

// ABI 1.11 GDN_STEP (dense_abi.h): the call checked as what it stands for, the four calls CONV1D_CAUSAL,
// L2_NORM (in place on y's q and k heads), GDN_GATES and GDN_DECODE, which it fills in (`conv`, `l2`,
// `gates`, `decode`, with their views and params) and checks with the contracts above. A pack runs
// them, or one kernel that leaves the same bits. The sub-calls point into this struct: it is neither
// copied nor moved.
struct GdnStepCall {
    int64_t channels = 0, kernel = 0, dk = 0, hk = 0, dv = 0, hv = 0;
    dense_gdn_step_params params{};
    dense_op_call conv{}, l2{}, gates{}, decode{};
    dense_tensor_view conv_src[3]{}, conv_dst[2]{}, l2_rows[1]{}, gates_src[4]{}, gates_dst[2]{};
    dense_tensor_view decode_src[6]{}, decode_dst[2]{};
    dense_conv_params conv_params{};
    dense_norm_params l2_params{};
    dense_gdn_params decode_params{};

    GdnStepCall() = default;
    GdnStepCall(const GdnStepCall&) = delete;
    GdnStepCall& operator=(const GdnStepCall&) = delete;
};
std::string check_gdn_step(const dense_op_call& c, GdnStepCall& out);

}  // namespace dense::pack_common
