// One handler per op kind: it validates a call completely (counts, types, shapes, strides, overlap,
// params) and, when asked to, runs it through the kernels library. ops.cpp wraps the handlers in the
// C callbacks; the *_ops.cpp files hold them, grouped like the kernels.
#pragma once

#include "pack/op_context.hpp"
#include "pack/view_checks.hpp"

#include <dense/pack_common/call_checks.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>

namespace dense::cpuref::pack {

// Check: what supports() answers — everything knowable without reading tensor contents (counts,
// types, shapes, strides, overlap, params). The executor may ask before its I32 inputs are written.
// Run: the same, then the values of the I32 inputs (positions, lengths, rows), then the op runs.
enum class Phase { Check, Run };

// "" when the call is acceptable (and, in Phase::Run, has been executed), else the one-line reason
// it is refused (the host log line of DENSE_E_INVALID_ARGUMENT). Nothing is written on a refusal.
using OpHandler = std::string (*)(const OpContext& ctx, const dense_op_call& call, Phase phase);

// nullptr for an op kind cpu-ref does not implement.
OpHandler handler_for(dense_op_kind kind) noexcept;

// The fused ops (GDN_STEP, ATTN_PREP): runs the calls they stand for (pack-common built and checked
// them) one after the other with their own handlers; the first refusal is returned.
std::string run_parts(const OpContext& ctx, std::initializer_list<const dense_op_call*> parts);

// format_ops.cpp
std::string handle_dequantize(const OpContext&, const dense_op_call&, Phase);
std::string handle_quantize_act(const OpContext&, const dense_op_call&, Phase);
std::string handle_gemv_q(const OpContext&, const dense_op_call&, Phase);
std::string handle_embed_row(const OpContext&, const dense_op_call&, Phase);
// gemv_multi_ops.cpp
std::string handle_gemv_q_multi(const OpContext&, const dense_op_call&, Phase);
// gemm_ops.cpp
std::string handle_gemm_q(const OpContext&, const dense_op_call&, Phase);
// norm_ops.cpp
std::string handle_rms_norm(const OpContext&, const dense_op_call&, Phase);
std::string handle_l2_norm(const OpContext&, const dense_op_call&, Phase);
std::string handle_gated_rms_norm(const OpContext&, const dense_op_call&, Phase);
// attention_ops.cpp
std::string handle_rope(const OpContext&, const dense_op_call&, Phase);
std::string handle_kv_store(const OpContext&, const dense_op_call&, Phase);
std::string handle_attn_decode(const OpContext&, const dense_op_call&, Phase);
// gdn_ops.cpp
std::string handle_conv1d_causal(const OpContext&, const dense_op_call&, Phase);
std::string handle_gdn_gates(const OpContext&, const dense_op_call&, Phase);
std::string handle_gdn_decode(const OpContext&, const dense_op_call&, Phase);
std::string handle_gdn_step(const OpContext&, const dense_op_call&, Phase);
std::string handle_attn_prep(const OpContext&, const dense_op_call&, Phase);
// elementwise_ops.cpp
std::string handle_swiglu(const OpContext&, const dense_op_call&, Phase);
std::string handle_check_finite(const OpContext&, const dense_op_call&, Phase);
std::string handle_argmax(const OpContext&, const dense_op_call&, Phase);
std::string handle_top_k(const OpContext&, const dense_op_call&, Phase);

// ---- helpers shared by the handlers ---------------------------------------------------------------

// GEMV_Q's arithmetic (format_ops.cpp), for GEMM_Q's columns too: y = W x, or y += W x (each row's
// dot product added to y[r] with one rounding). `act` holds `in` elements of ctx.act's format.
void run_gemv(const OpContext& ctx, const void* weight, int64_t in, int64_t out, const void* act, float* y,
              bool accumulate);

using pack_common::check_counts;  // dense/pack_common/call_checks.hpp
using pack_common::first_error;
using pack_common::read_params;
using pack_common::check_gemm_order;

// The data of a validated F32 view.
inline const float* f32_in(const dense_tensor_view& v) noexcept {
    return static_cast<const float*>(v.data);
}
inline float* f32_out(const dense_tensor_view& v) noexcept {
    return static_cast<float*>(v.data);
}

}  // namespace dense::cpuref::pack
