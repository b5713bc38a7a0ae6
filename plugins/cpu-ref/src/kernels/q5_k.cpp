// Q5_K (id 13): 256 elements, 176 bytes (spec 3.4).
//   d fp16 @0, dmin fp16 @2, scales[12] @4 (as Q4_K), qh[32] @16 (5th bit of element e is bit e/32
//   of qh[e%32]), qs[128] @48 (low nibbles, laid out as in Q4_K).
//   y = (d*sc_j) * q - (dmin*m_j) with q = nibble + 16*hb in 0..31, j = e/32.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 176;
constexpr int kBlockElements = 256;
constexpr std::size_t kD = 0, kDmin = 2, kScales = 4, kQh = 16, kQs = 48;

int32_t code(const uint8_t* b, int e) noexcept {
    const int g = e / 64, l = e % 32;
    const uint8_t byte = b[kQs + 32 * g + l];
    const int nibble = (e % 64 < 32) ? lo4(byte) : hi4(byte);
    const int hb = (b[kQh + e % 32] >> (e / 32)) & 1;
    return nibble + 16 * hb;
}

}  // namespace

void dequantize_q5_k(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        const float dmin = load_fp16(b + kDmin);
        for (int e = 0; e < kBlockElements; ++e) {
            const ScaleMin sm = k_scale_min(b + kScales, e / 32);
            const float d1 = d * to_f(sm.scale);
            const float m1 = dmin * to_f(sm.min);
            out[e] = d1 * to_f(code(b, e)) - m1;
        }
    }
}

// spec 7.1, as Q4_K with q in 0..31.
float vec_dot_q5_k_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        int32_t isum = 0;
        int32_t msum = 0;
        for (int j = 0; j < 8; ++j) {
            const ScaleMin sm = k_scale_min(bw + kScales, j);
            int32_t sub = 0;
            for (int e = 32 * j; e < 32 * j + 32; ++e) sub += q8k::q(ba, e) * code(bw, e);
            isum += sm.scale * sub;
            msum += sm.min * (q8k::bsum(ba, 2 * j) + q8k::bsum(ba, 2 * j + 1));
        }
        const float da = q8k::d(ba);
        sum += (load_fp16(bw + kD) * da) * to_f(isum) - (load_fp16(bw + kDmin) * da) * to_f(msum);
    }
    return sum;
}

// Against Q8_32: as Q4_K (q in 0..31).
float vec_dot_q5_k_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = bw + (b / 8) * kBlockBytes;
        const int j = static_cast<int>(b % 8);
        const ScaleMin sm = k_scale_min(blk + kScales, j);
        int32_t isum = 0;
        for (int e = 0; e < 32; ++e) isum += code(blk, 32 * j + e) * q832::q(ba, 32 * b + e);
        sum += (load_fp16(blk + kD) * q832::d(ba, n, b)) * to_f(sm.scale * isum) -
               (load_fp16(blk + kDmin) * to_f(sm.min)) * q832::s(ba, n, b);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
