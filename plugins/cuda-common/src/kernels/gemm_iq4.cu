// GEMM of IQ4_NL and IQ4_XS weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh)
// with the Mma decoders below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_iq4.cuh) when it does not
// apply (DENSE_CUDA_GEMM=dp4a, unaligned weights). Its own translation unit: the pure-asm flavour of
// the GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// The codebook values of elements 4t..4t+3 (low nibbles of the word's bytes) and 16+4t..16+4t+3
// (high nibbles) of an IQ4 block whose 16 index bytes hold word w at 4t.
__device__ __forceinline__ void iq4_codes(uint32_t w, const IqTables& tb, uint32_t& lo, uint32_t& hi) {
    lookup16(w, tb.kvalues, lo, hi);
}

// IQ4_NL: 8 blocks of 18 bytes per step (fp16 d, qs[16]); the Dot's term mul(mul(d, da), to_f(isum)).
struct IQ4_NLMma {
    static constexpr int kStepBytes = 8 * 18;
    static constexpr int kAlign = 2;
    static constexpr bool kK16 = false;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = true;
    static constexpr IqTable kTable = IqTable::Iq4Values;
    struct Row {};
    struct Blk {
        float d;
    };
    __device__ __forceinline__ static Row head(const uint8_t*) { return {}; }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row&, int u, int t, const IqTables& tb, int nb,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const uint8_t* blk = step + 18 * min(2 * u + k, nb - 1);
            iq4_codes(ld_u32_a2(blk + 2 + 4 * t), tb, lo[k], hi[k]);
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

// IQ4_XS: 136 bytes = fp16 d, u16 scales_h, scales_l[4], qs[128] (16 per sub-block at 8 + 16 j);
// the Dot's term mul(mul(d, da), to_f((ls - 32) * isum)).
struct IQ4_XSMma {
    static constexpr int kStepBytes = 136;
    static constexpr int kAlign = 8;
    static constexpr bool kK16 = false;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = false;
    static constexpr IqTable kTable = IqTable::Iq4Values;
    struct Row {
        uint32_t h0;  // d | scales_h << 16
        uint32_t scales_l;
    };
    struct Blk {
        float d;
        int32_t ls;  // ls - 32
    };
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        const uint2 h = *reinterpret_cast<const uint2*>(step);
        return {h.x, h.y};
    }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables& tb, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const float d = half_to_float(r.h0);
        const uint32_t scales_l = byte_of(r.scales_l, u);
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int ib = 2 * u + k;
            iq4_codes(ldg_u32(step + 8 + 16 * ib + 4 * t), tb, lo[k], hi[k]);
            const uint32_t ls = ((scales_l >> (4 * k)) & 15u) | (((r.h0 >> (16 + 2 * ib)) & 3u) << 4);
            bk[k] = {d, static_cast<int32_t>(ls) - 32};
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t isum, int32_t, float da, float) {
        return mul(mul(b.d, da), to_f(b.ls * isum));
    }
    // d * (ls - 32) is exact (an fp16 times a 6-bit integer).
    __device__ __forceinline__ static float fast(const Blk& b, int32_t isum, int32_t, float da, float, float acc) {
        return fma_rn(mul(mul(b.d, to_f(b.ls)), da), to_f(isum), acc);
    }
};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_iq4_nl(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::IQ4_NLMma, gemv::IQ4_NLDot>(call, stream);
}

cudaError_t launch_gemm_iq4_xs(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::IQ4_XSMma, gemv::IQ4_XSDot>(call, stream);
}

}  // namespace dense::cuda
