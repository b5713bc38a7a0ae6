// The activation ops of the qwen35 token step on CUDA devices: every op except the weight ops
// (DEQUANTIZE, EMBED_ROW: dequant_ops.hpp; QUANTIZE_ACT and GEMV live in their own files):
//
//   RMS_NORM, L2_NORM, GATED_RMS_NORM         act_norm_ops.cpp       kernels/ops_norm.cu
//   ROPE, KV_STORE, ATTN_DECODE               act_attention_ops.cpp  kernels/ops_rope.cu, ops_attention.cu
//   CONV1D_CAUSAL, GDN_GATES, GDN_DECODE      act_gdn_ops.cpp        kernels/ops_conv.cu, ops_gdn.cu, ops_elementwise.cu
//   SWIGLU, CHECK_FINITE                      act_elementwise_ops.cpp kernels/ops_elementwise.cu
//   ARGMAX                                    act_elementwise_ops.cpp kernels/ops_argmax.cu
//   TOP_K                                     act_elementwise_ops.cpp kernels/ops_top_k.cu
//
// The views each op accepts are exactly cpu-ref's (plugins/cpu-ref/src/pack/*_ops.cpp), with the data
// on one CUDA device: every call is validated completely on the host first (bad call:
// DENSE_E_INVALID_ARGUMENT plus one log line naming the view, nothing launched; supports() answers
// the same question without logging). Then the views' device is made current and the kernels are
// enqueued on dense_op_call.stream: no synchronisation, no allocation (ATTN_DECODE's split partials
// and TOP_K's group maxima and filtered keys live in dense_op_call.workspace, sized by their workspace_bytes
// callback). The per-token scalars
// (position, n_kv) stay on the device and are read by the kernels; see kernels/act_launchers.hpp for
// what a kernel does with an out-of-range value.
#pragma once

#include "pack_state.hpp"

namespace dense::cuda {

// Appends one context per activation op kind to state.ops (weight type and activation type NONE).
void plan_activation_ops(PackState& state);

}  // namespace dense::cuda
