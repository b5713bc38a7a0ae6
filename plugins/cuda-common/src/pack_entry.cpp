// The three exported entry points of a CUDA pack (cuda-sm90, cuda-sm120: same source, see
// target_tuning.hpp). Neither score nor init makes a CUDA call: scoring must not create a context,
// and init only registers ops and hands out the device api, so both work on a machine without a
// GPU or driver. The first CUDA call happens when the host uses the device api or runs an op.
#include "activation_ops.hpp"
#include "dequant_ops.hpp"
#include "device_api.hpp"
#include "formats.hpp"
#include "gemm_ops.hpp"
#include "gemv_ops.hpp"
#include "pack_score.hpp"
#include "pack_state.hpp"
#include "target_tuning.hpp"

#include <dense/sdk/pack.hpp>

#include <cuda_runtime_api.h>  // CUDART_VERSION only: no runtime call here

#include <memory>
#include <string>

namespace dense::cuda {
namespace {

uint32_t score(const dense_hw_desc& hw) {
    return score_for_target(hw, tuning::kTargetCcMajor, tuning::kTargetCcMinor, CUDART_VERSION);
}

std::string version_string() {
    const std::string cc = std::to_string(DENSE_CUDA_TARGET_CC);
    return std::string(DENSE_CUDA_PACK_VERSION) + " (sm_" + cc + " cubin + compute_" + cc + " PTX, CUDA runtime " +
           std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) + " static)";
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    auto state = std::make_unique<PackState>(host);
    state->name = DENSE_CUDA_PACK_NAME;
    state->version = version_string();
    state->device = make_device_api();

    // Each op family appends its contexts; one registration loop below.
    plan_dequant_ops(*state);
    plan_gemv_ops(*state);
    plan_gemm_ops(*state);
    plan_activation_ops(*state);
    for (OpContext& ctx : state->ops) {
        const dense_status s = host.register_op(ctx.make_impl(ctx));
        if (s != DENSE_OK) {
            host.error(state->name + ": registering " + ctx.name + " failed with status " + std::to_string(s));
            // The host may already hold the impls registered before this one, whose `user` points into
            // the state: keep it alive rather than leave them dangling.
            (void)state.release();
            return s;
        }
    }

    state->pack = dense::sdk::make_struct<dense_pack>();
    state->pack.name = state->name.c_str();
    state->pack.version = state->version.c_str();
    state->pack.device_kind = DENSE_DEVICE_CUDA;
    state->pack.device = &state->device;
    state->pack.user = state.get();
    *out = &state->pack;
    (void)state.release();  // owned by the host's dense_pack from here on; freed by release()
    return DENSE_OK;
}

void release(dense_pack* pack) {
    if (pack == nullptr) return;
    delete static_cast<PackState*>(pack->user);
}

}  // namespace
}  // namespace dense::cuda

DENSE_PACK_ENTRY_POINTS(dense::cuda::score, dense::cuda::init, dense::cuda::release)
