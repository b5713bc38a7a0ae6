// The cpu-ref math of every non-GEMV op of the qwen35 forward pass (spec/qwen35-architecture.md
// sections 4-7), as plain functions on pointers and element strides. This is the oracle: each
// function is the textbook formula, evaluated in double from the float inputs and rounded to float
// once per output element, single-threaded, O(work) with no hidden quadratic cost.
//
// Preconditions (the pack's view checks guarantee them; the functions do not re-check): sizes are
// >= 1, row strides are >= the row length, pointers are valid for the described extents, and outputs
// do not overlap inputs except where a function says "may alias" (then it must be the very same
// memory with the same strides, and the result is still exact).
//
// Layout conventions (ggml): a "{n, rows}" matrix has row r at base + r * stride (stride in
// elements); "{a, b, c}" contiguous means element (i, j, k) at (k * b + j) * a + i.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>

namespace dense::cpuref {

// ---- norms (ops_norm.cpp) -------------------------------------------------------------------------

// y = x / sqrt(mean(x^2) + eps) * w, per row of n. y may alias x.
void rms_norm(const float* x, int64_t x_stride, const float* w, float* y, int64_t y_stride, int64_t n, int64_t rows,
              float eps);

// y = x / sqrt(sum(x^2) + eps), per row of n (eps inside the root, as the spec's L2 norm; not ggml's
// max(norm, eps)). y may alias x.
void l2_norm(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t n, int64_t rows, float eps);

// y = x / sqrt(mean(x^2) + eps) * w * silu(z), per row of n (order of the spec, 7.6). y may alias x.
void gated_rms_norm(const float* x, int64_t x_stride, const float* z, int64_t z_stride, const float* w, float* y,
                    int64_t y_stride, int64_t n, int64_t rows, float eps);

// ---- elementwise (ops_elementwise.cpp) ------------------------------------------------------------

// y = silu(gate) * up over n contiguous elements. y may alias gate or up.
void swiglu(const float* gate, const float* up, float* y, int64_t n);

// GDN gates per head h < heads: beta = sigmoid(b); decay = exp(softplus(a + dt_bias) * A), with
// softplus(x) = x for x > 20 (spec 4). Outputs may alias inputs elementwise.
void gdn_gates(const float* b, const float* a, const float* dt_bias, const float* A, float* beta, float* decay,
               int64_t heads);

// True if any of x[0..n) is NaN or +-Inf.
bool has_non_finite(const float* x, int64_t n);

// ARGMAX (n >= 1): the lowest index of the largest of x[0..n), as std::max_element gives it: a NaN is
// never chosen (it compares false) unless it is x[0], which then stays the answer.
int64_t first_largest_index(const float* x, int64_t n);

// TOP_K (n >= 1, 1 <= k): the elements of x[0..n) that are neither NaN nor -inf, by value descending
// and equal values (float ==: -0.0 ties +0.0) by the lower index first; ids[i], values[i] = the i-th
// one's index and its value as stored (bit for bit), for i < k; slots past the last one get -1, -inf.
void top_k(const float* x, int64_t n, int64_t k, int32_t* ids, float* values);

// ---- rotary embedding (ops_rope.cpp) --------------------------------------------------------------

// NeoX RoPE of `heads` rows of head_dim: for i < n_rot/2 the pair (x[i], x[i + n_rot/2]) rotates by
// theta_i = pos * freq_scale * freq_base^(-2i/n_rot); dims >= n_rot are copied. n_rot even, <= head_dim.
// y may alias x.
void rope_neox(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t head_dim, int64_t heads,
               int64_t n_rot, int64_t pos, float freq_base, float freq_scale);

// ---- KV cache and attention (ops_attention.cpp) ---------------------------------------------------

// Writes slot `pos` of two contiguous caches {d, hkv, n_ctx} of `cache_type` (F16: round to nearest
// even; F32: copy) from k and v, {d, hkv} with row strides k_stride / v_stride. Throws
// std::invalid_argument for another cache type.
void kv_store(dense_type_id cache_type, const float* k, int64_t k_stride, const float* v, int64_t v_stride, int64_t d,
              int64_t hkv, int64_t pos, void* k_cache, void* v_cache);

struct AttnDecodeArgs {
    const float* q = nullptr;  // {d, hq}, row stride q_stride
    int64_t q_stride = 0;
    const float* gate = nullptr;  // optional {d, hq}, row stride gate_stride; nullptr = no output gate
    int64_t gate_stride = 0;
    dense_type_id cache_type = DENSE_TYPE_F32;  // F16 or F32
    const void* k_cache = nullptr;              // contiguous {d, hkv, >= n_kv}
    const void* v_cache = nullptr;
    int64_t d = 0, hq = 0, hkv = 0;  // hq a multiple of hkv
    int64_t n_kv = 0;                // positions 0 .. n_kv-1 are attended
    float scale = 0;
    float* out = nullptr;  // contiguous {d, hq}
};

// Query head h attends with KV head h / (hq / hkv): out_h = softmax_j(scale * q_h . K[j]) V[j], then
// out_h *= sigmoid(gate_h) if a gate is given. Dot products, softmax and the weighted sum in double.
// Throws std::invalid_argument for a cache type other than F16/F32.
void attn_decode(const AttnDecodeArgs& a);

// ---- Gated DeltaNet (ops_conv.cpp, ops_gdn.cpp) ---------------------------------------------------

// Depthwise causal conv of one step over `channels` channels with `kernel` taps (kernel >= 2):
// window = [state_in[c][0 .. kernel-2], x[c]] (oldest first); y[c] = sum_i taps[c][i] * window[i],
// then silu if apply_silu; state_out[c] = window[1 ..]. taps {kernel, channels}, states
// {kernel-1, channels}, all contiguous. state_out may alias state_in.
void conv1d_causal(const float* x, const float* taps, const float* state_in, float* y, float* state_out,
                   int64_t channels, int64_t kernel, bool apply_silu);

struct GdnDecodeArgs {
    const float* q = nullptr;  // {dk, hk}, row stride q_stride
    int64_t q_stride = 0;
    const float* k = nullptr;  // {dk, hk}, row stride k_stride
    int64_t k_stride = 0;
    const float* v = nullptr;  // {dv, hv}, row stride v_stride
    int64_t v_stride = 0;
    const float* beta = nullptr;      // {hv}
    const float* decay = nullptr;     // {hv}
    const float* state_in = nullptr;  // {dk*dv, hv}: head h's S[i][j] at h*dk*dv + j*dk + i
    float* state_out = nullptr;       // same layout; may alias state_in
    float* o = nullptr;               // {dv, hv} contiguous
    int64_t dk = 0, dv = 0, hk = 0, hv = 0;
    float scale = 0;  // query scale, usually 1/sqrt(dk)
};

// The gated delta rule for one token (spec 7.5), value head h with key head h % hk:
//   S = decay*S; u = S^T k; S += k (beta (v - u))^T; o = scale * S^T q (with the updated S).
// Each head's state is loaded to double, updated, and rounded to float once.
void gdn_decode(const GdnDecodeArgs& a);

}  // namespace dense::cpuref
