// test-minimal: a valid CPU pack. Scores 1 on the CPU. Registers two RMS-norm implementations under
// one key (a general one, priority 0, and a "vectorised" one, priority 10, that supports only rows
// whose length is a multiple of 4) so registry selection can be tested through a real pack.
#include "test_pack_util.hpp"

#include <cmath>

namespace {

// dst = x / sqrt(mean(x^2) + eps) * w for one row; src[0] = x, src[1] = w (F32, contiguous).
dense_status rms_norm_row(void*, const dense_op_call* call) {
    if (call->n_src < 2 || call->n_dst < 1) return DENSE_E_INVALID_ARGUMENT;
    const auto* x = static_cast<const float*>(call->src[0].data);
    const auto* w = static_cast<const float*>(call->src[1].data);
    auto* y = static_cast<float*>(call->dst[0].data);
    const int64_t n = call->src[0].ne[0];
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(n) + 1e-6));
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
    return DENSE_OK;
}

uint32_t multiple_of_4(void*, const dense_op_call* call) {
    return call->n_src > 0 && call->src[0].ne[0] % 4 == 0 ? 1u : 0u;
}

uint32_t score(const dense_hw_desc& hw) {
    return hw.device_kind == DENSE_DEVICE_CPU ? 1u : 0u;
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    dense_op_impl general = test_packs::make_impl(DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU,
                                                  0, "rms_norm_general");
    general.run = rms_norm_row;
    dense_op_impl vec4 = general;
    vec4.priority = 10;
    vec4.name = "rms_norm_vec4";
    vec4.supports = multiple_of_4;
    for (const auto* impl : {&general, &vec4})
        if (const dense_status s = host.register_op(*impl); s != DENSE_OK) return s;
    host.info("minimal pack ready");
    *out = test_packs::static_pack("test-minimal", "1.2.3", DENSE_DEVICE_CPU);
    return DENSE_OK;
}

void release(dense_pack*) {}

}  // namespace

DENSE_PACK_ENTRY_POINTS(score, init, release)
