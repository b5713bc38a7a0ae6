// Device helpers shared by the activation-op kernels (ops_*.cu): fixed-order reductions, the scalar
// nonlinearities of spec 4 in fp32, launch-size arithmetic.
//
// Reductions are trees in a FIXED order (xor butterflies inside a warp, then the warps' partials in
// warp order), so every launch of the same shape gives bit-identical results, and every lane of a
// warp (every thread of a block) gets the very same value. Block reductions need blockDim.x to be a
// multiple of 32 (every launcher uses such sizes).
//
// The files are compiled with --fmad=false (DenseCudaPack.cmake): `a * b + c` is two roundings.
// Where a fused multiply-add is wanted (dot products, the delta-rule update) the code says __fmaf_rn.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace dense::cuda::act {

inline constexpr unsigned kFullMask = 0xFFFFFFFFu;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}

__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
    return v;
}

// Sum over the block; every thread gets the result. `scratch` is shared memory for 33 values of T.
// Ends with a barrier, so scratch may be reused right after.
template <class T>
__device__ __forceinline__ T block_sum(T v, T* scratch) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int n_warps = static_cast<int>((blockDim.x + 31u) >> 5);
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T t = lane < n_warps ? scratch[lane] : T(0);
        t = warp_sum(t);
        if (lane == 0) scratch[32] = t;
    }
    __syncthreads();
    const T total = scratch[32];
    __syncthreads();
    return total;
}

// Max over the block (fmaxf: a NaN operand is ignored unless all are NaN); like block_sum.
__device__ __forceinline__ float block_max(float v, float* scratch) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int n_warps = static_cast<int>((blockDim.x + 31u) >> 5);
    v = warp_max(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float t = lane < n_warps ? scratch[lane] : -INFINITY;
        t = warp_max(t);
        if (lane == 0) scratch[32] = t;
    }
    __syncthreads();
    const float total = scratch[32];
    __syncthreads();
    return total;
}

// spec 4, in fp32 with the accurate expf (the build has no fast-math): relative error a few ulp.
// 1 + exp(-x) >= 1, so there is no cancellation; exp(-x) = inf gives exactly 0.
__device__ __forceinline__ float sigmoid_f(float x) {
    return 1.0f / (1.0f + expf(-x));
}
__device__ __forceinline__ float silu_f(float x) {
    return x / (1.0f + expf(-x));
}
__device__ __forceinline__ float softplus_f(float x) {
    return x > 20.0f ? x : log1pf(expf(x));
}

__device__ __forceinline__ bool is_finite_bits(float x) {
    return (__float_as_uint(x) & 0x7F800000u) != 0x7F800000u;
}

// fp32 -> fp16 bits, round to nearest even, overflow to inf, NaN keeps its sign and top payload bits
// with the quiet bit set: the same bits as core/half.hpp's fp32_to_fp16 for every input, so KV_STORE
// is bit-exact with cpu-ref even for non-finite values.
__device__ __forceinline__ uint16_t f32_to_f16_bits(float f) {
    const uint32_t x = __float_as_uint(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7FFFFFFFu;
    if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
    if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
    if (abs < 0x38800000u) {
        if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
        const uint32_t e = abs >> 23;
        const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
        const uint32_t shift = 126u - e;
        uint32_t r = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
        return static_cast<uint16_t>(sign | r);
    }
    uint32_t r = abs - 0x38000000u;
    const uint32_t rem = r & 0x1FFFu;
    r >>= 13;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
}

// ---- eight consecutive floats per thread (the norms' layout: a Q8_32 block in 4 lanes) ----
// v[0..7] = p[i0 .. i0 + 7], zeros past n; two 16-byte loads when `vec` (p + i0 16-byte aligned).
__device__ __forceinline__ void load_octet(const float* p, int64_t i0, int64_t n, bool vec, float (&v)[8]) {
    if (vec && i0 + 8 <= n) {
        const float4 a = *reinterpret_cast<const float4*>(p + i0);
        const float4 b = *reinterpret_cast<const float4*>(p + i0 + 4);
        v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
        v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
    } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = i0 + j < n ? p[i0 + j] : 0.0f;
    }
}

__device__ __forceinline__ void store_octet(float* p, int64_t i0, int64_t n, bool vec, const float (&v)[8]) {
    if (vec && i0 + 8 <= n) {
        *reinterpret_cast<float4*>(p + i0) = make_float4(v[0], v[1], v[2], v[3]);
        *reinterpret_cast<float4*>(p + i0 + 4) = make_float4(v[4], v[5], v[6], v[7]);
    } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
            if (i0 + j < n) p[i0 + j] = v[j];
    }
}

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// Grid size for a grid-stride loop over `items` with `threads` per block, capped at `max_blocks`.
inline unsigned grid_for(int64_t items, int threads, int64_t max_blocks) {
    int64_t blocks = (items + threads - 1) / threads;
    if (blocks < 1) blocks = 1;
    if (blocks > max_blocks) blocks = max_blocks;
    return static_cast<unsigned>(blocks);
}

// Elementwise kernels: 256 threads, at most this many blocks (a few waves on any current GPU; the
// grid-stride loops cover the rest).
inline constexpr int kEltThreads = 256;
inline constexpr int64_t kEltMaxBlocks = 2048;
// Row-wise kernels: one block per row, a grid-stride loop over rows beyond this many.
inline constexpr int64_t kMaxRowBlocks = 65535;

}  // namespace dense::cuda::act
