// Q2_K (id 10): 256 elements, 84 bytes (spec 3.1).
//   scales[16] @0 (lo4 = scale, hi4 = min of 16-element sub-block j), qs[64] @16 (2-bit codes),
//   d fp16 @80, dmin fp16 @82.   y = (d*scale) * q - (dmin*min).
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 84;
constexpr int kBlockElements = 256;
constexpr std::size_t kScales = 0, kQs = 16, kD = 80, kDmin = 82;

// The 2-bit code (0..3) of element e: half h picks qs[32h..32h+31], s picks the bit pair.
int32_t code(const uint8_t* b, int e) noexcept {
    const int h = e / 128, s = (e % 128) / 32, l = e % 32;
    return (b[kQs + 32 * h + l] >> (2 * s)) & 3;
}

}  // namespace

void dequantize_q2_k(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b + kD);
        const float dmin = load_fp16(b + kDmin);
        for (int e = 0; e < kBlockElements; ++e) {
            const uint8_t sc = b[kScales + e / 16];
            const float dl = d * to_f(lo4(sc));
            const float ml = dmin * to_f(hi4(sc));
            out[e] = dl * to_f(code(b, e)) - ml;
        }
    }
}

// spec 7.1: isum = sum_j lo4(sc_j) * (sum_{e in j} qa*q), msum = sum_j hi4(sc_j) * bsums[j],
// sum += (da*d) * isum - (da*dmin) * msum.
float vec_dot_q2_k_q8_k(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q8k::kBlockBytes) {
        int32_t isum = 0;
        int32_t msum = 0;
        for (int j = 0; j < 16; ++j) {
            int32_t sub = 0;
            for (int e = 16 * j; e < 16 * j + 16; ++e) sub += q8k::q(ba, e) * code(bw, e);
            isum += lo4(bw[kScales + j]) * sub;
            msum += hi4(bw[kScales + j]) * q8k::bsum(ba, j);
        }
        const float da = q8k::d(ba);
        const float dall = da * load_fp16(bw + kD);
        const float dmin = da * load_fp16(bw + kDmin);
        sum += dall * to_f(isum) - dmin * to_f(msum);
    }
    return sum;
}

// Against Q8_32, per 32-element activation block b covering the 16-element sub-blocks j0 = 2(b%8)
// and j0+1 (their mins need the per-16 code sums, the activation's s being per 32):
//   isum = sc_j0 * sum16_0(q*qa) + sc_j1 * sum16_1(q*qa);  msum = m_j0 * sum16_0(qa) + m_j1 * sum16_1(qa)
//   term = (d * da) * float(isum) - (dmin * da) * float(msum)
float vec_dot_q2_k_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = bw + (b / 8) * kBlockBytes;
        const int e0 = 32 * static_cast<int>(b % 8);
        int32_t isum = 0;
        int32_t msum = 0;
        for (int half = 0; half < 2; ++half) {
            const uint8_t sc = blk[kScales + (e0 + 16 * half) / 16];
            int32_t sub = 0;
            for (int e = e0 + 16 * half; e < e0 + 16 * half + 16; ++e) sub += code(blk, e) * q832::q(ba, 32 * b + e - e0);
            isum += lo4(sc) * sub;
            msum += hi4(sc) * q832::code_sum(ba, 32 * b + 16 * half, 16);
        }
        const float da = q832::d(ba, n, b);
        sum += (load_fp16(blk + kD) * da) * to_f(isum) - (load_fp16(blk + kDmin) * da) * to_f(msum);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
