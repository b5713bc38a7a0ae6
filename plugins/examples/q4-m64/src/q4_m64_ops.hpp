// The three CPU ops the example pack implements for example.q4_m64. Each function both checks a call
// (run == false: the `supports` callback) and runs it (run == true); it returns "" when the call is
// acceptable (and, with run, done), else one line saying what is wrong, which the pack logs through
// the host before it answers DENSE_E_INVALID_ARGUMENT.
#pragma once

#include <dense/abi/dense_abi.h>

#include <string>

namespace example_q4m64 {

// The runtime-assigned id of example.q4_m64 (set once in init, read by the checks).
struct OpEnv {
    dense_type_id type_id = DENSE_TYPE_NONE;
};

// DEQUANTIZE: src0 q4_m64 blocks (contiguous, any shape), dst F32 with the same element count.
std::string dequantize(const OpEnv& env, const dense_op_call& call, bool run);

// GEMV_Q: src0 q4_m64 {IN, OUT}, src1 F32 {IN}, dst F32 {OUT}; dense_gemv_params.accumulate != 0
// means dst += W x. Uses the workspace for the per-block sums of x when the host gave one.
std::string gemv_f32(const OpEnv& env, const dense_op_call& call, bool run);
// Bytes of workspace gemv_f32 uses for a call: one float per 64 activations.
uint64_t gemv_workspace_bytes(const dense_op_call& call);

// EMBED_ROW: src0 q4_m64 {D, V}, src1 (optional) I32 {1} row, dst F32 {D}; without src1 the row is
// dense_embed_row_params.row.
std::string embed_row(const OpEnv& env, const dense_op_call& call, bool run);

}  // namespace example_q4m64
