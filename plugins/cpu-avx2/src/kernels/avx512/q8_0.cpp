// Q8_0 x Q8_32 with AVX-512 VNNI (the AVX2 version and the block layout: ../q8_0.cpp). Per pair of
// blocks: their 2 x 32 signed codes in one vector, offset by +128 (unsigned), one vpdpbusd against the
// 64 activation codes, and 128 x each block's activation code sum taken off (OffsetActivation): the
// AVX2 version's integer sums, then the same float terms; the blocks past the last whole unit as the
// AVX2 version (block32_tails.hpp).
#include "kernels/avx512/vnni_common.hpp"
#include "kernels/block32_tails.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q80Vnni : Q80Tail {
    static constexpr uint64_t kUnitBytes = 8 * 34;
    using Context = OffsetActivation;
    static DENSE_AVX2_INLINE __m256 terms(const Context& c, const uint8_t* unit, int64_t u) noexcept {
        const __m512i k128 = _mm512_set1_epi8(static_cast<char>(0x80));
        const uint8_t* a = q832_codes(c.act(), 8 * u);
        __m512i d[4];
        for (int p = 0; p < 4; ++p) {
            const __m512i codes = _mm512_inserti64x4(_mm512_castsi256_si512(load32(unit + 34 * (2 * p) + 2)),
                                                     load32(unit + 34 * (2 * p + 1) + 2), 1);
            d[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(codes, k128), load64(a + 64 * p));
        }
        const __m256i isum = _mm256_sub_epi32(reduce_block_pairs(d), c.bias(u));
        return _mm256_mul_ps(_mm256_mul_ps(block32_scales(unit, 34), q832_d8(c.act(), c.n(), u)), _mm256_cvtepi32_ps(isum));
    }
};

}  // namespace

void dot_rows_q8_0_q8_32_vnni512(const RowsArgs& args) { dot_rows<Q80Vnni>(args); }

}  // namespace dense::cpuavx2
