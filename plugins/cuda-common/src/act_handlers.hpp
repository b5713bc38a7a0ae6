// One handler per activation op kind (internal to the pack). A handler validates a call completely
// (counts, types, shapes, strides, overlap, same device, params) and, in the Run phase, launches its
// kernels through launch(). activation_ops.cpp wraps the handlers in the C callbacks.
#pragma once

#include "act_view_checks.hpp"
#include "call_envelope.hpp"
#include "cuda_status.hpp"
#include "pack_state.hpp"

#include <dense/abi/dense_abi.h>
#include <dense/sdk/pack.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <initializer_list>
#include <string>

namespace dense::cuda::act {

// Check: what supports() answers. Workspace: the same checks, then set Invocation::workspace_needed.
// Run: the same, then launch. Device memory is never read on the host in any phase.
enum class Phase { Check, Workspace, Run };

struct Invocation {
    const OpContext& ctx;
    const dense_op_call& call;  // the envelope (header, kind, arrays) is already checked
    Phase phase;
    // Out: why a refused call is refused (DENSE_E_INVALID_ARGUMENT unless the handler says otherwise).
    dense_status refusal = DENSE_E_INVALID_ARGUMENT;
    // Out (Workspace, Run): scratch bytes the call needs in dense_op_call.workspace.
    uint64_t workspace_needed = 0;
    // Out (Run): DENSE_OK, or the status of the failed device switch / launch (already logged).
    dense_status launched = DENSE_OK;
};

// "" when the call is acceptable (and, in the Run phase, launched: see Invocation::launched), else the
// one-line reason it is refused.
using Handler = std::string (*)(Invocation& inv);

// nullptr for a kind this file does not handle.
Handler activation_handler(dense_op_kind kind) noexcept;

// The fused ops' fallback (GDN_STEP, ATTN_PREP): runs the calls they stand for (pack-common built and
// checked them) one after the other in the Run phase with their own handlers; the first refusal is
// returned, the first failed launch left in inv.launched.
std::string run_parts(Invocation& inv, std::initializer_list<const dense_op_call*> parts);

// act_norm_ops.cpp
std::string handle_rms_norm(Invocation& inv);
std::string handle_l2_norm(Invocation& inv);
std::string handle_gated_rms_norm(Invocation& inv);
// act_attention_ops.cpp
std::string handle_rope(Invocation& inv);
std::string handle_kv_store(Invocation& inv);
std::string handle_attn_decode(Invocation& inv);
std::string handle_attn_prep(Invocation& inv);
// act_gdn_ops.cpp
std::string handle_conv1d_causal(Invocation& inv);
std::string handle_gdn_gates(Invocation& inv);
std::string handle_gdn_decode(Invocation& inv);
std::string handle_gdn_step(Invocation& inv);
// act_elementwise_ops.cpp
std::string handle_swiglu(Invocation& inv);
std::string handle_check_finite(Invocation& inv);
std::string handle_argmax(Invocation& inv);
std::string handle_top_k(Invocation& inv);

// ---- helpers shared by the handlers ---------------------------------------------------------------

// Exactly n_src sources and n_dst destinations, with non-NULL arrays, all on one CUDA device.
std::string check_counts(const dense_op_call& c, uint32_t n_src, uint32_t n_dst);

using cuda::first_error;  // call_envelope.hpp

using pack_common::read_params;  // dense/pack_common/call_checks.hpp (with DENSE_PACK_FIELD_END)

// Run phase: makes the call's device current, then calls f(stream) (which enqueues the kernels and
// returns cudaGetLastError()); failures are logged once and left in inv.launched.
template <class F>
void launch(Invocation& inv, const char* what, F&& f) {
    const dense::sdk::Host& host = inv.ctx.pack->host;
    inv.launched = use_device(host, inv.ctx.name, inv.call.dst[0].device_index);
    if (inv.launched != DENSE_OK) return;
    inv.launched = report_cuda(host, inv.ctx.name, what, f(static_cast<cudaStream_t>(inv.call.stream)));
}

// Data pointers of validated F32 / I32 views.
inline const float* f32_in(const dense_tensor_view& v) noexcept {
    return static_cast<const float*>(v.data);
}
inline float* f32_out(const dense_tensor_view& v) noexcept {
    return static_cast<float*>(v.data);
}
inline const int32_t* i32_in(const dense_tensor_view& v) noexcept {
    return static_cast<const int32_t*>(v.data);
}

}  // namespace dense::cuda::act
