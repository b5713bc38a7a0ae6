// IQ2_XS (id 17): 256 elements, 74 bytes (spec 4.1).
//   d fp16 @0, qs[32] uint16 LE @2 (one per group of 8: 9-bit grid index + 7 sign bits whose parity
//   gives the 8th), scales[8] @66 (per 32-element sub-block: lo4 for groups 0,1, hi4 for groups 2,3).
//   y = ((d * (0.5 + nib)) * 0.25 * grid_byte) * sign.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 74;
constexpr int kBlockElements = 256;
constexpr std::size_t kD = 0, kQs = 2, kScales = 66;

// 4-bit scale of group G (= e/8): sub-block G/4, low nibble for its groups 0,1, high for 2,3.
int nib(const uint8_t* b, int G) noexcept {
    const uint8_t s = b[kScales + G / 4];
    return (G % 4) < 2 ? lo4(s) : hi4(s);
}

struct Group {
    uint64_t grid;   // 8 magnitudes
    uint32_t signs;  // 8-bit sign mask
};

Group group(const uint8_t* b, int G) noexcept {
    const uint16_t w = load_le16(b + kQs + 2 * G);
    return {dense_iq2xs_grid[w & 511], dense_ksigns_iq2xs[w >> 9]};
}

}  // namespace

void dequantize_iq2_xs(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        for (int G = 0; G < 32; ++G) {
            const float db = (d * (0.5f + to_f(nib(b, G)))) * 0.25f;
            const Group g = group(b, G);
            for (int j = 0; j < 8; ++j) out[8 * G + j] = (db * to_f(grid_byte(g.grid, j))) * sign_of(g.signs, j);
        }
    }
}

// spec 7.1: per sub-block, ls = 2*nib + 1 applied to the signed integer sums of its groups;
// sum += (d*da) * bsum; the final 0.125 is the (0.5+nib)*0.25 = (2*nib+1)/8 of the dequantizer.
float vec_dot_iq2_xs_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        int32_t bsum = 0;
        for (int G = 0; G < 32; ++G) {
            const Group g = group(bw, G);
            int32_t t = 0;
            for (int j = 0; j < 8; ++j) t += q8k::q(ba, 8 * G + j) * grid_byte(g.grid, j) * isign_of(g.signs, j);
            bsum += (2 * nib(bw, G) + 1) * t;
        }
        sum += (load_fp16(bw + kD) * q8k::d(ba)) * to_f(bsum);
    }
    return 0.125f * sum;
}

// Against Q8_32, per 32-element activation block b = sub-block ib = b % 8: its groups 0,1 share the
// scale 2*lo4+1 and groups 2,3 the scale 2*hi4+1; the dequantizer's (0.5+nib)*0.25 = (2*nib+1)/8
// puts the exact factor 0.125 on d:
//   term = ((d * 0.125) * da) * float(sum_G ls_G * sum_e qa * grid * sign)
float vec_dot_iq2_xs_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = bw + (b / 8) * kBlockBytes;
        const int ib = static_cast<int>(b % 8);
        int32_t isum = 0;
        for (int G = 4 * ib; G < 4 * ib + 4; ++G) {
            const Group g = group(blk, G);
            int32_t t = 0;
            for (int j = 0; j < 8; ++j)
                t += q832::q(ba, 32 * b + 8 * (G - 4 * ib) + j) * grid_byte(g.grid, j) * isign_of(g.signs, j);
            isum += (2 * nib(blk, G) + 1) * t;
        }
        sum += ((load_fp16(blk + kD) * 0.125f) * q832::d(ba, n, b)) * to_f(isum);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
