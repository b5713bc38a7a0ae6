// IQ4_XS x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../iq4_xs.cpp). Per pair of
// sub-blocks: their 32 bytes of nibbles spread over a 64-byte vector in element order (low nibbles of
// sub-block 2p, its high nibbles, the same for 2p + 1), one 16-entry shuffle per 128-bit lane turns
// them into codebook values + 128 (unsigned), and one vpdpbusd against the 64 activation codes gives
// the partial sums; the +128 comes off each block's sum (OffsetActivation). Scales and float terms as
// the AVX2 version, so the result is bit for bit the same.
#include "kernels/avx512/vnni_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Iq4XsVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 136;
    using Context = OffsetActivation;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* blk, int64_t sb) noexcept {
        // kvalues_iq4nl + 128 (-127..113 -> 1..241), in every 128-bit lane.
        const __m512i table = _mm512_xor_si512(
            _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(dense_kvalues_iq4nl))),
            _mm512_set1_epi8(static_cast<char>(0x80)));
        const __m512i spread = _mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3);
        const __m512i shifts = _mm512_setr_epi64(0, 0, 0x0004000400040004, 0x0004000400040004, 0, 0, 0x0004000400040004,
                                                 0x0004000400040004);
        const __m512i low4 = _mm512_set1_epi8(0x0F);
        const uint8_t* a = q832_codes(c.act(), 8 * sb);
        __m512i d[4];
        for (int p = 0; p < 4; ++p) {
            const __m512i q = _mm512_permutexvar_epi64(spread, _mm512_castsi256_si512(load32(blk + 8 + 32 * p)));
            const __m512i nib = _mm512_and_si512(_mm512_srlv_epi16(q, shifts), low4);
            d[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_shuffle_epi8(table, nib), load64(a + 64 * p));
        }
        const __m256i t = _mm256_sub_epi32(reduce_block_pairs(d), c.bias(sb));
        // ls - 32 of the eight sub-blocks: low 4 bits from scales_l, high 2 from scales_h.
        uint32_t scales_l;
        uint16_t scales_h;
        std::memcpy(&scales_l, blk + 4, 4);
        std::memcpy(&scales_h, blk + 2, 2);
        const __m256i lo = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(scales_l)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
            _mm256_set1_epi32(15));
        const __m256i hi = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_set1_epi32(scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
        const __m256i ls = _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32));
        const __m256 dd = _mm256_mul_ps(_mm256_set1_ps(load_fp16(blk)), q832_d8(c.act(), c.n(), sb));
        return _mm256_mul_ps(dd, _mm256_cvtepi32_ps(_mm256_mullo_epi32(ls, t)));
    }
};

}  // namespace

void dot_rows_iq4_xs_q8_32_vnni512(const RowsArgs& args) { dot_rows<Iq4XsVnni>(args); }

}  // namespace dense::cpuavx2
