// Q8_0 x Q8_32 (cpu-ref: q8_0.cpp). 34-byte blocks of 32: d fp16 @0, int8 qs[32] @2; one signed dot
// per block, and the term (d * da) * float(isum) added to the row's sum in block order. row_group.hpp
// takes eight blocks (one 256-element unit) of eight rows at a time; blocks past the last whole unit
// are added one by one (block32_tails.hpp).
#include "kernels/block32_tails.hpp"

namespace dense::cpuavx2 {

using namespace detail;

namespace {

struct Q80 : Q80Tail {
    static constexpr uint64_t kUnitBytes = 8 * 34;
    static DENSE_AVX2_INLINE __m256 terms(const uint8_t* unit, const uint8_t* act, int64_t n, int64_t u) noexcept {
        const uint8_t* a = q832_codes(act, 8 * u);
        __m256i dots[8];
        for (int j = 0; j < 8; ++j) dots[j] = dot_s8_s8(load32(unit + 34 * j + 2), load32(a + 32 * j));
        return _mm256_mul_ps(_mm256_mul_ps(block32_scales(unit, 34), q832_d8(act, n, u)), _mm256_cvtepi32_ps(hsum8(dots)));
    }
};

}  // namespace

void dot_rows_q8_0_q8_32(const RowsArgs& args) { dot_rows<Q80>(args); }

}  // namespace dense::cpuavx2
