// GEMM of IQ3_XXS and IQ3_S weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh)
// with the Mma decoders below, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_iq3.cuh) when it does not
// apply (DENSE_CUDA_GEMM=dp4a). Its own translation unit: the pure-asm flavour of the GEMV code
// (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_iq3.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Both formats: a 32-element sub-block ib is 4 groups of 8, each two 4-byte grid entries (elements
// 0..3, 4..7) with an 8-bit sign mask (low nibble: the first entry). The A words of thread t are
// elements 4t..4t+3 = entry t & 1 of group t >> 1 (index byte t of the sub-block's 8) and
// 16+4t..16+4t+3 = entry t & 1 of group 2 + (t >> 1) (index byte 4 + t). The grid comes from shared
// memory (staged by the kernel, as the GEMV's), the signs are applied as in signed_grid8.
__device__ __forceinline__ uint32_t iq3_signed_entry(const IqTables& tb, uint32_t index, uint32_t mask8, int t) {
    return apply_signs(tb.grid32[index], sign_bytes4((mask8 >> (4 * (t & 1))) & 15u));
}

// IQ3_XXS: 98 bytes = fp16 d @0, qs[64] @2 (8 index bytes per sub-block), u32 per sub-block @66 (four
// 7-bit parity-completed sign fields, group l at bit 7l; scale on top). The Dot's term
// mul(mul(mul(d, 0.25f), da), to_f(ls * isum)) with ls = 2 * scale + 1 (mul(d, 0.25f) formed per row).
struct IQ3_XXSMma {
    static constexpr int kStepBytes = 98;
    static constexpr int kAlign = 2;
    static constexpr bool kK16 = false;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = false;
    static constexpr IqTable kTable = IqTable::Iq3xxsGrid;
    struct Row {
        float dq;  // mul(d, 0.25f)
    };
    struct Blk {
        float dq;
        int32_t ls;
    };
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        return {mul(half_to_float(*reinterpret_cast<const uint16_t*>(step)), 0.25f)};
    }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables& tb, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const int l = t >> 1;
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int ib = 2 * u + k;
            const uint8_t* qs = step + 2 + 8 * ib;
            const uint32_t aux = ld_u32_a2(step + 66 + 4 * ib);
            lo[k] = iq3_signed_entry(tb, qs[t], parity_signs((aux >> (7 * l)) & 127u), t);
            hi[k] = iq3_signed_entry(tb, qs[4 + t], parity_signs((aux >> (7 * (2 + l))) & 127u), t);
            bk[k] = {r.dq, 2 * static_cast<int32_t>(aux >> 28) + 1};
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t isum, int32_t, float da, float) {
        return mul(mul(b.dq, da), to_f(b.ls * isum));
    }
    // dq * ls is exact (an fp16 / 4 times a 5-bit integer).
    __device__ __forceinline__ static float fast(const Blk& b, int32_t isum, int32_t, float da, float, float acc) {
        return fma_rn(mul(mul(b.dq, to_f(b.ls)), da), to_f(isum), acc);
    }
};

// IQ3_S: 110 bytes = fp16 d @0, qs[64] @2 (low index bits), qh[8] @66 (bit 2l + e of qh[ib]: the 9th
// bit of group l's entry e), signs[32] @74 (group l of sub-block ib: byte 4 ib + l), scales[4] @106
// (nibble per sub-block, even ib low). The Dot's term mul(mul(d, da), to_f(ls * isum)), ls = 1 + 2 scale.
struct IQ3_SMma {
    static constexpr int kStepBytes = 110;
    static constexpr int kAlign = 2;
    static constexpr bool kK16 = false;
    static constexpr bool kNeedS = false;
    static constexpr bool kPartialSteps = false;
    static constexpr IqTable kTable = IqTable::Iq3sGrid;
    struct Row {
        float d;
    };
    struct Blk {
        float d;
        int32_t ls;
    };
    __device__ __forceinline__ static Row head(const uint8_t* step) {
        return {half_to_float(*reinterpret_cast<const uint16_t*>(step))};
    }
    __device__ __forceinline__ static void unit(const uint8_t* step, const Row& r, int u, int t, const IqTables& tb, int,
                                                uint32_t (&lo)[2], uint32_t (&hi)[2], Blk (&bk)[2]) {
        const int l = t >> 1;
        const uint32_t qh2 = *reinterpret_cast<const uint16_t*>(step + 66 + 2 * u);  // qh[2u], qh[2u + 1]
        const uint32_t scales = step[106 + u];
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            const int ib = 2 * u + k;
            const uint8_t* qs = step + 2 + 8 * ib;
            const uint8_t* sg = step + 74 + 4 * ib;
            const uint32_t qh = qh2 >> (8 * k);
            const uint32_t i1 = qs[t] | (((qh >> t) & 1u) << 8);
            const uint32_t i2 = qs[4 + t] | (((qh >> (4 + t)) & 1u) << 8);
            lo[k] = iq3_signed_entry(tb, i1, sg[l], t);
            hi[k] = iq3_signed_entry(tb, i2, sg[2 + l], t);
            bk[k] = {r.d, 1 + 2 * static_cast<int32_t>((scales >> (4 * k)) & 15u)};
        }
    }
    __device__ __forceinline__ static float term(const Blk& b, int32_t isum, int32_t, float da, float) {
        return mul(mul(b.d, da), to_f(b.ls * isum));
    }
    // d * ls is exact (an fp16 times a 5-bit integer).
    __device__ __forceinline__ static float fast(const Blk& b, int32_t isum, int32_t, float da, float, float acc) {
        return fma_rn(mul(mul(b.d, to_f(b.ls)), da), to_f(isum), acc);
    }
};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_iq3_xxs(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::IQ3_XXSMma, gemv::IQ3_XXSDot>(call, stream);
}

cudaError_t launch_gemm_iq3_s(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::IQ3_SMma, gemv::IQ3_SDot>(call, stream);
}

}  // namespace dense::cuda
