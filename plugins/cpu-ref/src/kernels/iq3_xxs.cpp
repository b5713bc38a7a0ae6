// IQ3_XXS (id 18): 256 elements, 98 bytes (spec 4.3).
//   d fp16 @0, qs[64] @2 (8-bit iq3xxs_grid indices, two per group of 8: 4 magnitudes each),
//   eight uint32 LE @66, one per sub-block: bits 0..27 = four 7-bit sign fields (parity gives the
//   8th sign), bits 28..31 = the 4-bit scale.   y = ((d * (0.5 + scale)) * 0.5 * grid_byte) * sign.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 98;
constexpr int kBlockElements = 256;
constexpr std::size_t kD = 0, kQs = 2, kScaleSigns = 66;

uint32_t scale_signs(const uint8_t* b, int ib) noexcept {
    return load_le32(b + kScaleSigns + 4 * ib);
}

// Magnitude of element j (0..7) of group l of sub-block ib.
int magnitude(const uint8_t* b, int ib, int l, int j) noexcept {
    const uint8_t index = b[kQs + 8 * ib + 2 * l + (j < 4 ? 0 : 1)];
    return grid_byte(dense_iq3xxs_grid[index], j % 4);
}

uint32_t sign_mask(uint32_t a, int l) noexcept {
    return dense_ksigns_iq2xs[(a >> (7 * l)) & 127];
}

}  // namespace

void dequantize_iq3_xxs(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        for (int ib = 0; ib < 8; ++ib) {
            const uint32_t a = scale_signs(b, ib);
            const float db = (d * (0.5f + to_f(static_cast<int32_t>(a >> 28)))) * 0.5f;
            for (int l = 0; l < 4; ++l) {
                const uint32_t signs = sign_mask(a, l);
                for (int j = 0; j < 8; ++j)
                    out[32 * ib + 8 * l + j] = (db * to_f(magnitude(b, ib, l, j))) * sign_of(signs, j);
            }
        }
    }
}

// spec 7.1: ls = 2*scale + 1 per sub-block; sum += (d*da) * bsum; final factor 0.25.
float vec_dot_iq3_xxs_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const uint32_t word = scale_signs(bw, ib);
            int32_t t = 0;
            for (int l = 0; l < 4; ++l) {
                const uint32_t signs = sign_mask(word, l);
                for (int j = 0; j < 8; ++j)
                    t += q8k::q(ba, 32 * ib + 8 * l + j) * magnitude(bw, ib, l, j) * isign_of(signs, j);
            }
            bsum += (2 * static_cast<int32_t>(word >> 28) + 1) * t;
        }
        sum += (load_fp16(bw + kD) * q8k::d(ba)) * to_f(bsum);
    }
    return 0.25f * sum;
}

// Against Q8_32, per 32-element activation block b = sub-block ib = b % 8 (ls = 2*scale+1; the
// dequantizer's (0.5+scale)*0.5 = ls/4 puts the exact factor 0.25 on d):
//   term = ((d * 0.25) * da) * float(ls * sum_e qa * grid * sign)
float vec_dot_iq3_xxs_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = bw + (b / 8) * kBlockBytes;
        const int ib = static_cast<int>(b % 8);
        const uint32_t word = scale_signs(blk, ib);
        int32_t t = 0;
        for (int l = 0; l < 4; ++l) {
            const uint32_t signs = sign_mask(word, l);
            for (int j = 0; j < 8; ++j)
                t += q832::q(ba, 32 * b + 8 * l + j) * magnitude(blk, ib, l, j) * isign_of(signs, j);
        }
        const int32_t ls = 2 * static_cast<int32_t>(word >> 28) + 1;
        sum += ((load_fp16(blk + kD) * 0.25f) * q832::d(ba, n, b)) * to_f(ls * t);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
