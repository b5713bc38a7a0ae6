// IQ4_XS (id 23): 256 elements, 136 bytes (spec 4.5).
//   d fp16 @0, scales_h uint16 LE @2 (high 2 bits of the 8 sub-block scales), scales_l[4] @4 (low 4
//   bits: even ib low nibble, odd high), qs[128] @8 (16 bytes per 32-element sub-block, element p < 16
//   low nibble of byte p, p >= 16 high nibble of byte p-16), nibbles index kvalues_iq4nl.
//   y = (d * (ls - 32)) * kvalues[n].
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 136;
constexpr int kBlockElements = 256;
constexpr std::size_t kD = 0, kScalesH = 2, kScalesL = 4, kQs = 8;

// Signed sub-block scale ls - 32 (-32..31).
int32_t scale(const uint8_t* b, int ib) noexcept {
    const int low = (b[kScalesL + ib / 2] >> (4 * (ib % 2))) & 15;
    const int high = (load_le16(b + kScalesH) >> (2 * ib)) & 3;
    return (low | (high << 4)) - 32;
}

int32_t code(const uint8_t* b, int e) noexcept {
    const int ib = e / 32, p = e % 32;
    const int nibble = p < 16 ? lo4(b[kQs + 16 * ib + p]) : hi4(b[kQs + 16 * ib + p - 16]);
    return dense_kvalues_iq4nl[nibble];
}

}  // namespace

void dequantize_iq4_xs(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        for (int e = 0; e < kBlockElements; ++e) {
            const float dl = d * to_f(scale(b, e / 32));
            out[e] = dl * to_f(code(b, e));
        }
    }
}

// spec 7.1: per sub-block, sum += ((d*da) * (ls-32)) * t with t = sum qa * kvalues[n].
float vec_dot_iq4_xs_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        const float dd = load_fp16(bw + kD) * q8k::d(ba);
        for (int ib = 0; ib < 8; ++ib) {
            int32_t t = 0;
            for (int e = 32 * ib; e < 32 * ib + 32; ++e) t += q8k::q(ba, e) * code(bw, e);
            sum += (dd * to_f(scale(bw, ib))) * to_f(t);
        }
    }
    return sum;
}

// Against Q8_32, per 32-element activation block b = sub-block ib = b % 8:
//   term = (d * da) * float((ls - 32) * sum_e qa * kvalues[n])
float vec_dot_iq4_xs_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = bw + (b / 8) * kBlockBytes;
        const int ib = static_cast<int>(b % 8);
        int32_t t = 0;
        for (int e = 0; e < 32; ++e) t += code(blk, 32 * ib + e) * q832::q(ba, 32 * b + e);
        sum += (load_fp16(blk + kD) * q832::d(ba, n, b)) * to_f(scale(blk, ib) * t);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
