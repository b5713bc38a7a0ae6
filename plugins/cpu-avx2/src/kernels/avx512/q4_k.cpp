// Q4_K x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../q4_k.cpp). Per 64-element
// group: its 32 bytes twice in one 64-byte vector, the second copy shifted down a nibble, masked:
// the 64 codes (0..15, unsigned) in element order, and one vpdpbusd against the 64 activation codes.
// Scales, mins and float terms as the AVX2 version, so the result is bit for bit the same.
#include "kernels/avx512/vnni_common.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q4KVnni : NoTail {
    static constexpr uint64_t kUnitBytes = 144;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* blk, const uint8_t* act, int64_t n, int64_t sb) noexcept {
        const __m512i shifts = _mm512_setr_epi64(0, 0, 0, 0, 0x0004000400040004, 0x0004000400040004, 0x0004000400040004,
                                                 0x0004000400040004);
        const __m512i low4 = _mm512_set1_epi8(0x0F);
        const uint8_t* a = q832_codes(act, 8 * sb);
        __m512i d[4];
        for (int g = 0; g < 4; ++g) {
            const __m256i bytes = load32(blk + 16 + 32 * g);
            const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(bytes), bytes, 1);
            const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(both, shifts), low4);
            d[g] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, load64(a + 64 * g));
        }
        return k_quant_terms(blk, act, n, sb, reduce_block_pairs(d));
    }
};

}  // namespace

void dot_rows_q4_k_q8_32_vnni512(const RowsArgs& args) { dot_rows<Q4KVnni>(args); }

}  // namespace dense::cpuavx2
