// DENSE_OP_DEQUANTIZE and DENSE_OP_EMBED_ROW on CUDA devices, for every format in formats.hpp.
//
//   DEQUANTIZE  src0: contiguous blocks of the format (any shape), dst: contiguous F32 with the same
//               element count.
//   EMBED_ROW   src0: contiguous {D, V, 1, 1} table of the format, params: dense_embed_row_params
//               with 0 <= row < V, dst: contiguous F32 {D, 1, 1, 1} = row `row` decoded.
// Both validate the whole call on the host before touching the device (bad call:
// DENSE_E_INVALID_ARGUMENT plus one log line, nothing launched), make the views' device current,
// enqueue one kernel on dense_op_call.stream (NULL = the legacy default stream) and never
// synchronise; a launch error is DENSE_E_DEVICE plus one log line.
#pragma once

#include "pack_state.hpp"

#include <dense/abi/dense_abi.h>

namespace dense::cuda {

// Appends the DEQUANTIZE and EMBED_ROW contexts of every format to state.ops.
void plan_dequant_ops(PackState& state);

}  // namespace dense::cuda
