// Q8_0 (id 8): 32 elements, 34 bytes = fp16 d + int8 qs[32] (spec section 2).
// It is both a weight format and the activation format of Q8_0 and IQ4_NL weights (spec 6, 7.2).
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include <cmath>

namespace dense::cpuref::detail {
namespace {

// roundf() of the scalar reference quantizer: half away from zero. |v| <= 127 (plus an ulp) for
// finite input; a NaN (non-finite input) becomes 0 instead of an undefined float->int conversion.
int32_t round_half_away(float v) noexcept {
    if (!std::isfinite(v)) return 0;
    return static_cast<int32_t>(std::round(v));
}

}  // namespace

void dequantize_q8_0(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / q80::kBlockElements; ++blk, b += q80::kBlockBytes, out += q80::kBlockElements) {
        const float d = q80::d(b);
        for (int e = 0; e < q80::kBlockElements; ++e) out[e] = to_f(q80::q(b, e)) * d;
    }
}

// spec 7.2: sum += (float)(sum_e qw*qa) * (fp16(dw) * fp16(da)).
float vec_dot_q8_0_q8_0(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / q80::kBlockElements; ++blk, bw += q80::kBlockBytes, ba += q80::kBlockBytes) {
        int32_t isum = 0;
        for (int e = 0; e < q80::kBlockElements; ++e) isum += q80::q(bw, e) * q80::q(ba, e);
        sum += to_f(isum) * (q80::d(bw) * q80::d(ba));
    }
    return sum;
}

// The scalar reference quantizer (spec 6): d = amax/127, id = 1/d, q = roundf(x*id), store fp16(d).
// (x86 AVX builds of llama.cpp use a SIMD variant; we follow the scalar reference, which is what
// activation.q8_0 and quantize_row_q8_0_ref produce.)
void quantize_q8_0(const float* x, void* out, int64_t n) {
    auto* b = static_cast<uint8_t*>(out);
    for (int64_t blk = 0; blk < n / q80::kBlockElements; ++blk, b += q80::kBlockBytes, x += q80::kBlockElements) {
        float amax = 0.0f;
        for (int e = 0; e < q80::kBlockElements; ++e) {
            const float ax = std::fabs(x[e]);
            amax = amax > ax ? amax : ax;
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_le16(b, fp32_to_fp16(d));
        for (int e = 0; e < q80::kBlockElements; ++e)
            b[2 + e] = static_cast<uint8_t>(static_cast<int8_t>(round_half_away(x[e] * id)));
    }
}

// Against the Q8_32 activation (q8_32.cpp): one term per 32-element block, summed in block order,
//   term = (dw * da) * float(sum_e qw*qa).
float vec_dot_q8_0_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / q80::kBlockElements; ++blk, bw += q80::kBlockBytes) {
        int32_t isum = 0;
        for (int e = 0; e < q80::kBlockElements; ++e) isum += q80::q(bw, e) * q832::q(ba, 32 * blk + e);
        sum += (q80::d(bw) * q832::d(ba, n, blk)) * to_f(isum);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
