// Q3_K (id 11): 256 elements, 110 bytes (spec 3.2).
//   hmask[32] @0 (high bit), qs[64] @32 (low 2 bits), scales[12] @96 (sixteen packed signed 6-bit
//   scales), d fp16 @108.   y = (d*sc) * q with q in -4..3.
// Note the inverted high bit: SET means "no offset" (q = low), clear means q = low - 4.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 110;
constexpr int kBlockElements = 256;
constexpr std::size_t kHmask = 0, kQs = 32, kScales = 96, kD = 108;

// Signed 6-bit scale of 16-element sub-block j (-32..31).
int32_t scale(const uint8_t* b, int j) noexcept {
    const uint8_t* s = b + kScales;
    const int low4 = j < 8 ? (s[j] & 0x0F) : (s[j - 8] >> 4);
    const int high2 = (s[8 + (j % 4)] >> (2 * (j / 4))) & 3;
    return (low4 | (high2 << 4)) - 32;
}

// The 3-bit code of element e as a signed integer (-4..3).
int32_t code(const uint8_t* b, int e) noexcept {
    const int h = e / 128, s = (e % 128) / 32, l = e % 32;
    const int low = (b[kQs + 32 * h + l] >> (2 * s)) & 3;
    const int hb = (b[kHmask + l] >> (e / 32)) & 1;
    return low - (hb ? 0 : 4);
}

}  // namespace

void dequantize_q3_k(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        for (int e = 0; e < kBlockElements; ++e) {
            const float dl = d * to_f(scale(b, e / 16));
            out[e] = dl * to_f(code(b, e));
        }
    }
}

// spec 7.1: isum = sum_j sc(j) * (sum_{e in j} qa*q); sum += (d*da) * isum. (llama.cpp's generic
// code splits isum over 8 float lanes; the value is the same up to float summation order.)
float vec_dot_q3_k_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        int32_t isum = 0;
        for (int j = 0; j < 16; ++j) {
            int32_t sub = 0;
            for (int e = 16 * j; e < 16 * j + 16; ++e) sub += q8k::q(ba, e) * code(bw, e);
            isum += scale(bw, j) * sub;
        }
        sum += (load_fp16(bw + kD) * q8k::d(ba)) * to_f(isum);
    }
    return sum;
}

// Against Q8_32, per 32-element activation block b (16-element sub-blocks j0 = 2(b%8), j0+1):
//   term = (d * da) * float(sc_j0 * sum16_0(q*qa) + sc_j1 * sum16_1(q*qa))
float vec_dot_q3_k_q8_32(const void* w, const void* a, int64_t n) {
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
