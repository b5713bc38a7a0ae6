// GEMV of F32 / F16 / BF16 weights against an F32 activation: dst[r] (+)= sum_i w[r][i] * x[i].
// Small matrices only in practice (float weights are rare in quantized models), so a plain design:
// one warp per row (rows grid-strided over all warps), each lane a strided share of the row, in
// 16-byte vectors when the matrix, its rows and x are 16-byte aligned. Each lane accumulates with
// one fused multiply-add per element in order, the lanes combine by a fixed xor-shuffle tree, so
// the result is deterministic; against the exact dot it is off by at most about
// (in/32 + 5) * 2^-24 * sum |w x| (gemv_gpu_test.cpp).
#include "kernels/launch_chain.cuh"
#include "kernels/decode_common.cuh"
#include "kernels/gemv_launchers.hpp"
#include "target_tuning.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace dense::cuda {
namespace {

enum class FloatKind { F32, F16, BF16 };

template <FloatKind K>
struct FloatWeight {
    static constexpr int kBytes = K == FloatKind::F32 ? 4 : 2;
    static constexpr int kPerVector = 16 / kBytes;
    __device__ static float one(const uint8_t* p) {
        if constexpr (K == FloatKind::F32) return *reinterpret_cast<const float*>(p);
        else if constexpr (K == FloatKind::F16) return __half2float(*reinterpret_cast<const __half*>(p));
        else return decode::bf16_to_f32(*reinterpret_cast<const uint16_t*>(p));
    }
    // The kPerVector values of 16 bytes.
    __device__ static void vec(uint4 raw, float (&out)[kPerVector]) {
        const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
        if constexpr (K == FloatKind::F32) {
            for (int i = 0; i < 4; ++i) out[i] = __uint_as_float(w[i]);
        } else if constexpr (K == FloatKind::F16) {
            for (int i = 0; i < 4; ++i) {
                const __half2 h = *reinterpret_cast<const __half2*>(&w[i]);
                out[2 * i] = __low2float(h);
                out[2 * i + 1] = __high2float(h);
            }
        } else {
            for (int i = 0; i < 4; ++i) {
                out[2 * i] = __uint_as_float(w[i] << 16);
                out[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
            }
        }
    }
};

template <FloatKind K, bool kVector>
__global__ void __launch_bounds__(tuning::kFloatGemvThreads)
    gemv_float_kernel(const uint8_t* __restrict__ w, int64_t row_bytes, int64_t in, int64_t rows,
                      const float* __restrict__ x, float* __restrict__ dst, int accumulate) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    using W = FloatWeight<K>;
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    for (int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; row < rows; row += warps) {
        const uint8_t* rp = w + row * row_bytes;
        float acc = 0.0f;
        if constexpr (kVector) {
            const int64_t n_vec = in / W::kPerVector;  // exact: row_bytes % 16 == 0
            for (int64_t v = lane; v < n_vec; v += 32) {
                float wv[W::kPerVector];
                W::vec(__ldcs(reinterpret_cast<const uint4*>(rp) + v), wv);
                const float4* xv = reinterpret_cast<const float4*>(x + v * W::kPerVector);
#pragma unroll
                for (int j = 0; j < W::kPerVector / 4; ++j) {
                    const float4 xx = __ldg(xv + j);
                    acc = __fmaf_rn(wv[4 * j], xx.x, acc);
                    acc = __fmaf_rn(wv[4 * j + 1], xx.y, acc);
                    acc = __fmaf_rn(wv[4 * j + 2], xx.z, acc);
                    acc = __fmaf_rn(wv[4 * j + 3], xx.w, acc);
                }
            }
        } else {
            for (int64_t e = lane; e < in; e += 32) acc = __fmaf_rn(W::one(rp + e * W::kBytes), __ldg(x + e), acc);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) acc = __fadd_rn(acc, __shfl_xor_sync(0xFFFFFFFFu, acc, o));
        if (lane == 0) dst[row] = accumulate ? __fadd_rn(dst[row], acc) : acc;
    }
}

template <FloatKind K>
cudaError_t launch_float(const GemvLaunch& c, cudaStream_t stream) {
    if (c.out <= 0 || c.in <= 0) return cudaSuccess;
    constexpr int kWarpsPerBlock = tuning::kFloatGemvThreads / 32;
    int dev = 0, sms = 1;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        sms = 1;
    const int64_t wanted = (c.out + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const int64_t cap = static_cast<int64_t>(sms) * 8;
    const auto blocks = static_cast<unsigned>(wanted < cap ? wanted : cap);
    const auto* w = static_cast<const uint8_t*>(c.weight);
    const auto* x = static_cast<const float*>(c.act);
    const bool vector = reinterpret_cast<uintptr_t>(w) % 16 == 0 && c.row_bytes % 16 == 0 &&
                        reinterpret_cast<uintptr_t>(x) % 16 == 0;
    if (vector)
        (void)launch_chained(gemv_float_kernel<K, true>, blocks, tuning::kFloatGemvThreads, 0, stream, w, c.row_bytes, c.in, c.out, x, c.dst, c.accumulate);
    else
        (void)launch_chained(gemv_float_kernel<K, false>, blocks, tuning::kFloatGemvThreads, 0, stream, w, c.row_bytes, c.in, c.out, x, c.dst, c.accumulate);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_gemv_f32(const GemvLaunch& call, cudaStream_t stream) {
    return launch_float<FloatKind::F32>(call, stream);
}

cudaError_t launch_gemv_f16(const GemvLaunch& call, cudaStream_t stream) {
    return launch_float<FloatKind::F16>(call, stream);
}

cudaError_t launch_gemv_bf16(const GemvLaunch& call, cudaStream_t stream) {
    return launch_float<FloatKind::BF16>(call, stream);
}

// GEMM_Q of a float weight: its GEMV once per column, each on that column's activation and dst, so
// column j is the GEMV of activation j by construction (float weights are rare and small: no
// batched kernel for them).
namespace {

template <FloatKind K>
cudaError_t launch_float_columns(const GemmLaunch& g, cudaStream_t stream) {
    for (int64_t j = 0; j < g.cols; ++j) {
        GemvLaunch c = g.matrix;
        c.act = static_cast<const float*>(g.matrix.act) + j * g.matrix.in;
        c.dst = g.matrix.dst + j * g.dst_col_stride;
        const cudaError_t err = launch_float<K>(c, stream);
        if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
}

}  // namespace

cudaError_t launch_gemm_f32(const GemmLaunch& call, cudaStream_t stream) {
    return launch_float_columns<FloatKind::F32>(call, stream);
}

cudaError_t launch_gemm_f16(const GemmLaunch& call, cudaStream_t stream) {
    return launch_float_columns<FloatKind::F16>(call, stream);
}

cudaError_t launch_gemm_bf16(const GemmLaunch& call, cudaStream_t stream) {
    return launch_float_columns<FloatKind::BF16>(call, stream);
}

}  // namespace dense::cuda
