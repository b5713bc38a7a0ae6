// Q6_K (id 14): 256 elements, 210 bytes (spec 3.5).
//   ql[128] @0 (low 4 bits), qh[64] @128 (high 2 bits), scales[16] @192 (int8, signed), d fp16 @208.
//   y = (d*scales[e/16]) * q with q in -32..31.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 210;
constexpr int kBlockElements = 256;
constexpr std::size_t kQl = 0, kQh = 128, kScales = 192, kD = 208;

int32_t code(const uint8_t* b, int e) noexcept {
    const int h = e / 128, r = e % 128, s = r / 32, l = r % 32;
    const uint8_t lowbyte = b[kQl + 64 * h + l + (s & 1) * 32];
    const int low4 = s < 2 ? lo4(lowbyte) : hi4(lowbyte);
    const int high2 = (b[kQh + 32 * h + l] >> (2 * s)) & 3;
    return (low4 | (high2 << 4)) - 32;
}

int32_t scale(const uint8_t* b, int k) noexcept {
    return as_i8(b[kScales + k]);
}

}  // namespace

void dequantize_q6_k(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        for (int e = 0; e < kBlockElements; ++e) out[e] = (d * to_f(scale(b, e / 16))) * to_f(code(b, e));
    }
}

// spec 7.1: isum = sum_k scales[k] * (sum_{e in 16-block k} qa*q); sum += (d*da) * isum.
float vec_dot_q6_k_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        int32_t isum = 0;
        for (int k = 0; k < 16; ++k) {
            int32_t sub = 0;
            for (int e = 16 * k; e < 16 * k + 16; ++e) sub += q8k::q(ba, e) * code(bw, e);
            isum += scale(bw, k) * sub;
        }
        sum += (load_fp16(bw + kD) * q8k::d(ba)) * to_f(isum);
    }
    return sum;
}

// Against Q8_32, as Q3_K with the int8 scales:
//   term = (d * da) * float(sc_j0 * sum16_0(q*qa) + sc_j1 * sum16_1(q*qa))
float vec_dot_q6_k_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = bw + (b / 8) * kBlockBytes;
        const int e0 = 32 * static_cast<int>(b % 8);
        int32_t isum = 0;
        for (int half = 0; half < 2; ++half) {
            int32_t sub = 0;
            for (int e = e0 + 16 * half; e < e0 + 16 * half + 16; ++e) sub += code(blk, e) * q832::q(ba, 32 * b + e - e0);
            isum += scale(blk, (e0 + 16 * half) / 16) * sub;
        }
        sum += (load_fp16(blk + kD) * q832::d(ba, n, b)) * to_f(isum);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
