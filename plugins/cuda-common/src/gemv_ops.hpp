// DENSE_OP_GEMV_Q and DENSE_OP_QUANTIZE_ACT on CUDA devices.
//
//   GEMV_Q        src0: contiguous weight {IN, OUT} of a format; src1: contiguous activation {IN};
//                 dst: contiguous F32 {OUT}, disjoint from both sources; params (optional)
//                 dense_gemv_params: accumulate != 0 means dst += W x, else dst = W x.
//                 Registered for the 12 quantized formats with act_type Q8_32 (codes 16-byte
//                 aligned) and for F32 / F16 / BF16 weights with act_type F32. The weight may sit at
//                 any address (a 16-byte-aligned one takes the fast load path).
//   QUANTIZE_ACT  src0: contiguous F32 (any shape, one vector of all its elements); dst: the same
//                 shape in the activation type, disjoint from src0. act_type Q8_32 (n % 32 == 0, dst
//                 16-byte aligned; bit-exact with cpu-ref) and F32 (a copy).
// Both validate the whole call on the host first (bad call: DENSE_E_INVALID_ARGUMENT plus one log
// line, nothing launched, dst untouched), make the views' device current, enqueue their kernel on
// dense_op_call.stream and never synchronise; a launch error is DENSE_E_DEVICE plus one log line.
#pragma once

#include "pack_state.hpp"

#include <string>

namespace dense::cuda {

// Appends the GEMV_Q and QUANTIZE_ACT contexts to state.ops.
void plan_gemv_ops(PackState& state);

// The call's optional dense_gemv_params (GEMV_Q, GEMM_Q): "" with `accumulate` set (false without
// params), or why the params are refused.
std::string read_accumulate(const dense_op_call& c, bool& accumulate);

}  // namespace dense::cuda
