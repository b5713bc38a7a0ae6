// Q4_K x Q8_32 (cpu-ref: q4_k.cpp). 144-byte blocks of 256: d fp16 @0, dmin fp16 @2, scales[12] @4,
// qs[128] @16 (64-element group g: 32 bytes, low nibbles elements 64g..64g+31, high nibbles the next
// 32). Per 32-block j: the 32 nibbles (unsigned) times the activation codes in one unsigned-signed dot.
#include "kernels/avx2_common.hpp"
#include "kernels/row_dots.hpp"

namespace dense::cpuavx2 {

using namespace detail;

float dot_q4_k_q8_32(const uint8_t* row, const uint8_t* act, int64_t n) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = row + (b / 8) * 144;
        const int j = static_cast<int>(b % 8);
        const __m256i bytes = load32(blk + 16 + 32 * (j / 2));
        const __m256i codes = j % 2 == 0 ? _mm256_and_si256(bytes, low4) : _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
        const int32_t isum = hsum(dot_u8_s8(codes, load32(q832_codes(act, b))));
        const ScaleMin sm = k_scale_min(blk + 4, j);
        sum += (load_fp16(blk) * q832_d(act, n, b)) * to_f(sm.scale * isum) -
               (load_fp16(blk + 2) * to_f(sm.min)) * q832_s(act, n, b);
    }
    return sum;
}

}  // namespace dense::cpuavx2
