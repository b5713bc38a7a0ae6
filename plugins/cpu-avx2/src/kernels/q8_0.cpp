// Q8_0 x Q8_32 (cpu-ref: q8_0.cpp). 34-byte blocks of 32: d fp16 @0, int8 qs[32] @2; one signed dot.
#include "kernels/avx2_common.hpp"
#include "kernels/row_dots.hpp"

namespace dense::cpuavx2 {

using namespace detail;

float dot_q8_0_q8_32(const uint8_t* row, const uint8_t* act, int64_t n) {
    float sum = 0.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = row + 34 * b;
        const int32_t isum = hsum(dot_s8_s8(load32(blk + 2), load32(q832_codes(act, b))));
        sum += (load_fp16(blk) * q832_d(act, n, b)) * to_f(isum);
    }
    return sum;
}

}  // namespace dense::cpuavx2
