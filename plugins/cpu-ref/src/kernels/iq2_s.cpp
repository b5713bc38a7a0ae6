// IQ2_S (id 22): 256 elements, 82 bytes (spec 4.2).
//   d fp16 @0, qs[32] @2 (low 8 bits of each group's 10-bit grid index), signs[32] @34 (full 8-bit
//   sign masks), qh[8] @66 (per sub-block: bits 2l..2l+1 are the index's high 2 bits for group l),
//   scales[8] @74 (as IQ2_XS).   y = ((d * (0.5 + nib)) * 0.25 * grid_byte) * sign.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 82;
constexpr int kBlockElements = 256;
constexpr std::size_t kD = 0, kQs = 2, kSigns = 34, kQh = 66, kScales = 74;

int nib(const uint8_t* b, int G) noexcept {
    const uint8_t s = b[kScales + G / 4];
    return (G % 4) < 2 ? lo4(s) : hi4(s);
}

struct Group {
    uint64_t grid;
    uint32_t signs;
};

Group group(const uint8_t* b, int G) noexcept {
    const int ib = G / 4, l = G % 4;
    const int index = b[kQs + G] | (((b[kQh + ib] >> (2 * l)) & 3) << 8);
    return {dense_iq2s_grid[index], b[kSigns + G]};
}

}  // namespace

void dequantize_iq2_s(const void* blocks, float* out, int64_t n) {
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

// spec 7.1, as IQ2_XS (final factor 0.125).
float vec_dot_iq2_s_q8_k(const void* w, const void* a, int64_t n) {
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

// Against Q8_32: as IQ2_XS.
float vec_dot_iq2_s_q8_32(const void* w, const void* a, int64_t n) {
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
