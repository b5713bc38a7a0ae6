// IQ3_S (id 21): 256 elements, 110 bytes (spec 4.4).
//   d fp16 @0, qs[64] @2 (low 8 bits of 9-bit iq3s_grid indices, two per group), qh[8] @66 (per
//   sub-block: bit 2l / 2l+1 = 9th index bit of the group's first / second index), signs[32] @74
//   (full 8-bit masks), scales[4] @106 (4-bit scale per sub-block: even ib low nibble, odd high).
//   y = ((d * (1 + 2*scale)) * grid_byte) * sign.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 110;
constexpr int kBlockElements = 256;
constexpr std::size_t kD = 0, kQs = 2, kQh = 66, kSigns = 74, kScales = 106;

int scale_nib(const uint8_t* b, int ib) noexcept {
    return (b[kScales + ib / 2] >> (4 * (ib % 2))) & 15;
}

int magnitude(const uint8_t* b, int ib, int l, int j) noexcept {
    const int half = j < 4 ? 0 : 1;  // first or second index of the group
    const int index = b[kQs + 8 * ib + 2 * l + half] | (((b[kQh + ib] >> (2 * l + half)) & 1) << 8);
    return grid_byte(dense_iq3s_grid[index], j % 4);
}

uint32_t sign_mask(const uint8_t* b, int ib, int l) noexcept {
    return b[kSigns + 4 * ib + l];
}

}  // namespace

void dequantize_iq3_s(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        for (int ib = 0; ib < 8; ++ib) {
            const float db = d * to_f(1 + 2 * scale_nib(b, ib));
            for (int l = 0; l < 4; ++l) {
                const uint32_t signs = sign_mask(b, ib, l);
                for (int j = 0; j < 8; ++j)
                    out[32 * ib + 8 * l + j] = (db * to_f(magnitude(b, ib, l, j))) * sign_of(signs, j);
            }
        }
    }
}

// spec 7.1: ls = 2*scale + 1; sum += (d*da) * bsum; no final factor.
float vec_dot_iq3_s_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            int32_t t = 0;
            for (int l = 0; l < 4; ++l) {
                const uint32_t signs = sign_mask(bw, ib, l);
                for (int j = 0; j < 8; ++j)
                    t += q8k::q(ba, 32 * ib + 8 * l + j) * magnitude(bw, ib, l, j) * isign_of(signs, j);
            }
            bsum += (1 + 2 * scale_nib(bw, ib)) * t;
        }
        sum += (load_fp16(bw + kD) * q8k::d(ba)) * to_f(bsum);
    }
    return sum;
}

// Against Q8_32, per 32-element activation block b = sub-block ib = b % 8 (ls = 1 + 2*scale):
//   term = (d * da) * float(ls * sum_e qa * grid * sign)
float vec_dot_iq3_s_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = bw + (b / 8) * kBlockBytes;
        const int ib = static_cast<int>(b % 8);
        int32_t t = 0;
        for (int l = 0; l < 4; ++l) {
            const uint32_t signs = sign_mask(blk, ib, l);
            for (int j = 0; j < 8; ++j)
                t += q832::q(ba, 32 * b + 8 * l + j) * magnitude(blk, ib, l, j) * isign_of(signs, j);
        }
        sum += (load_fp16(blk + kD) * q832::d(ba, n, b)) * to_f((1 + 2 * scale_nib(blk, ib)) * t);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
