// Q4_K x Q8_32 (cpu-ref: q4_k.cpp). 144-byte blocks of 256: d fp16 @0, dmin fp16 @2, scales[12] @4,
// qs[128] @16 (64-element group g: 32 bytes, low nibbles elements 64g..64g+31, high nibbles the next
// 32). One super-block at a time: eight unsigned-signed dots, their sums, the eight scales and mins
// and the activation scales in lanes; the per-block terms (d * da) * float(sc * isum) - (dmin *
// float(m)) * sa formed together and added to the row's sum in block order.
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q4K : NoTail {
    static constexpr uint64_t kUnitBytes = 144;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const __m256i low4 = _mm256_set1_epi8(0x0F);
        const uint8_t* a = q832_codes(act, 8 * sb);
        __m256i dots[8];
        for (int g = 0; g < 4; ++g) {
            const __m256i bytes = load32(blk + 16 + 32 * g);
            dots[2 * g] = dot_u8_s8(_mm256_and_si256(bytes, low4), load32(a + 64 * g));
            dots[2 * g + 1] = dot_u8_s8(_mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4), load32(a + 64 * g + 32));
        }
        return k_quant_terms(blk, act, n, sb, hsum8(dots));
    }
};

}  // namespace

void dot_rows_q4_k_q8_32(const RowsArgs& args) { dot_rows<Q4K>(args); }

}  // namespace dense::cpuavx2
