// Q5_K x Q8_32 (cpu-ref: q5_k.cpp). 176-byte blocks of 256: d, dmin fp16 @0/@2, scales[12] @4,
// qh[32] @16 (bit j of qh[l] is the 5th bit of element 32j + l), qs[128] @48 (nibbles as Q4_K).
// Per sub-block j: code = nibble + 16 * bit, 0..31 unsigned, one unsigned-signed dot; then, as Q4_K,
// the eight blocks' terms in lanes, added to the row's sum in block order.
#include "kernels/row_group.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q5K : NoTail {
    static constexpr uint64_t kUnitBytes = 176;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const __m256i low4 = _mm256_set1_epi8(0x0F);
        const __m256i one = _mm256_set1_epi8(1);
        const uint8_t* a = q832_codes(act, 8 * sb);
        const __m256i qh = load32(blk + 16);
        __m256i dots[8];
        for (int j = 0; j < 8; ++j) {
            const __m256i bytes = load32(blk + 48 + 32 * (j / 2));
            const __m256i nib = j % 2 == 0 ? _mm256_and_si256(bytes, low4) : _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
            // Bit j of every qh byte (16-bit shifts are fine: the mask keeps each byte's own bit).
            const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(j)), one);
            dots[j] = dot_u8_s8(_mm256_or_si256(nib, _mm256_slli_epi16(bit, 4)), load32(a + 32 * j));
        }
        return k_quant_terms(blk, act, n, sb, hsum8(dots));
    }
};

}  // namespace

void dot_rows_q5_k_q8_32(const RowsArgs& args) { dot_rows<Q5K>(args); }

}  // namespace dense::cpuavx2
