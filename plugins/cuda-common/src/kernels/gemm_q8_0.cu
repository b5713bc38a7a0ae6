// GEMM of Q8_0 weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh) with the
// Mma decoder below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_q8_0.cuh) when it does not apply
// (DENSE_CUDA_GEMM=dp4a, unaligned weights). Its own translation unit: the pure-asm flavour of the
// GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q8_0.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Q8_0: 8 blocks of 34 bytes per step (fp16 d, int8 codes[32]; 2-byte aligned); the Dot's term
// mul(mul(d, da), to_f(isum)).
struct Q8_0Mma {
    static constexpr int kStepBytes = 8 * 34;
    static constexpr int kAlign = 2;
    static constexpr bool kK16 = false;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = true;
    static constexpr IqTable kTable = IqTable::None;
    struct Row {};
    struct Blk {
        float d;
    };
    __device__ __forceinline__ static Row head(const uint8_t*) { return {}; }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row&, int u, int t, const IqTables&, int nb,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const uint8_t* blk = step + 34 * min(2 * u + k, nb - 1);
            lo[k] = ld_u32_a2(blk + 2 + 4 * t);
            hi[k] = ld_u32_a2(blk + 18 + 4 * t);
            bk[k].d = half_to_float(*reinterpret_cast<const uint16_t*>(blk));
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t isum, int32_t, float da, float) {
        return mul(mul(b.d, da), to_f(isum));
    }
    __device__ __forceinline__ static float fast(const Blk& b, int32_t isum, int32_t, float da, float, float acc) {
        return fma_rn(mul(b.d, da), to_f(isum), acc);
    }
};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_q8_0(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::Q8_0Mma, gemv::Q8_0Dot>(call, stream);
}

}  // namespace dense::cuda
