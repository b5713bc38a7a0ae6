// Views and params for calling the cpu-ref activation ops through the C ABI in tests: the same
// shapes and strides the graph builder hands to the executor (ggml convention, strides in bytes).
#pragma once

#include "cpu-ref/pack_harness.hpp"
#include "kernels/formats.hpp"

#include <dense/sdk/pack.hpp>

#include <cstdint>
#include <vector>

namespace dense::test {

// F32 {ne0, ne1} on the CPU; row_stride in elements (0 = contiguous).
inline dense_tensor_view f32(float* data, int64_t ne0, int64_t ne1 = 1, int64_t row_stride = 0) {
    dense_tensor_view v{};
    v.data = data;
    v.type = DENSE_TYPE_F32;
    v.device_kind = DENSE_DEVICE_CPU;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.ne[2] = v.ne[3] = 1;
    v.nb[0] = 4;
    v.nb[1] = (row_stride != 0 ? row_stride : ne0) * 4;
    v.nb[2] = v.nb[3] = v.nb[1] * ne1;
    return v;
}

// `rows` contiguous rows of n elements of any cpu-ref format (weights, activations, F32 outputs).
inline dense_tensor_view rows_of(void* data, dense_type_id type, int64_t n, int64_t rows) {
    dense_tensor_view v{};
    v.data = data;
    v.type = type;
    v.ne[0] = n;
    v.ne[1] = rows;
    v.ne[2] = v.ne[3] = 1;
    v.nb[0] = cpuref::format(type).block_bytes;
    v.nb[1] = static_cast<int64_t>(cpuref::row_bytes(type, n));
    v.nb[2] = v.nb[3] = v.nb[1] * rows;
    return v;
}

// I32 {1} (position, n_kv, row, status word).
inline dense_tensor_view i32(int32_t* data) {
    dense_tensor_view v{};
    v.data = data;
    v.type = DENSE_TYPE_I32;
    v.device_kind = DENSE_DEVICE_CPU;
    for (int i = 0; i < 4; ++i) {
        v.ne[i] = 1;
        v.nb[i] = 4;
    }
    return v;
}

// I32 {n}, contiguous (TOP_K's ids).
inline dense_tensor_view i32s(int32_t* data, int64_t n) {
    dense_tensor_view v = i32(data);
    v.ne[0] = n;
    for (int i = 1; i < 4; ++i) v.nb[i] = 4 * n;
    return v;
}

// A contiguous KV cache {d, heads, n_ctx} of F16 or F32.
inline dense_tensor_view cache(void* data, dense_type_id type, int64_t d, int64_t heads, int64_t n_ctx) {
    dense_tensor_view v{};
    v.data = data;
    v.type = type;
    v.device_kind = DENSE_DEVICE_CPU;
    v.ne[0] = d;
    v.ne[1] = heads;
    v.ne[2] = n_ctx;
    v.ne[3] = 1;
    v.nb[0] = type == DENSE_TYPE_F16 ? 2 : 4;
    v.nb[1] = v.nb[0] * d;
    v.nb[2] = v.nb[1] * heads;
    v.nb[3] = v.nb[2] * n_ctx;
    return v;
}

inline dense_norm_params norm_params(float eps) {
    auto p = dense::sdk::make_struct<dense_norm_params>();
    p.eps = eps;
    return p;
}
inline dense_rope_params rope_params(int32_t n_rot, float base, float freq_scale = 1.0f) {
    auto p = dense::sdk::make_struct<dense_rope_params>();
    p.n_rot = n_rot;
    p.mode = DENSE_ROPE_NEOX;
    p.freq_base = base;
    p.freq_scale = freq_scale;
    return p;
}
inline dense_attn_params attn_params(float scale) {
    auto p = dense::sdk::make_struct<dense_attn_params>();
    p.scale = scale;
    return p;
}
inline dense_conv_params conv_params(bool silu) {
    auto p = dense::sdk::make_struct<dense_conv_params>();
    p.apply_silu = silu ? 1u : 0u;
    return p;
}
inline dense_gdn_params gdn_params(float scale) {
    auto p = dense::sdk::make_struct<dense_gdn_params>();
    p.scale = scale;
    return p;
}

inline dense_gdn_step_params gdn_step_params(float scale, float l2_eps) {
    auto p = dense::sdk::make_struct<dense_gdn_step_params>();
    p.scale = scale;
    p.l2_eps = l2_eps;
    p.apply_silu = 1;
    return p;
}

// A fixture for cpu-ref's untyped activation ops (RMS norm, RoPE, the Gated DeltaNet ops, attention,
// ...): find an op by kind, and run one call expecting DENSE_OK with nothing logged.
class CpuRefActivationOps : public PackHarness {
protected:
    const dense_op_impl* impl(dense_op_kind kind) {
        const dense_op_impl* p = host_.find(kind, DENSE_TYPE_NONE, DENSE_TYPE_NONE);
        EXPECT_NE(p, nullptr) << "op kind " << kind << " is not registered";
        return p;
    }

    void ok(dense_op_kind kind, const std::vector<dense_tensor_view>& src, const std::vector<dense_tensor_view>& dst,
            const void* params = nullptr) {
        const dense_op_impl* p = impl(kind);
        ASSERT_NE(p, nullptr);
        const auto call = make_call(kind, src, dst, params);
        ASSERT_EQ(p->supports(p->user, &call), 1u) << "supports() refused op kind " << kind;
        const std::size_t logs = host_.logs.size();
        ASSERT_EQ(run(p, call), DENSE_OK) << (host_.logs.size() > logs ? host_.logs.back().second : "");
        ASSERT_EQ(host_.logs.size(), logs);
    }
};

}  // namespace dense::test
