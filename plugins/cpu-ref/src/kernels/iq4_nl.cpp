// IQ4_NL (id 20): 32 elements, 18 bytes = fp16 d + 16 bytes of nibbles indexing kvalues_iq4nl
// (spec section 2). Element e < 16 is the low nibble of byte e, element e >= 16 the high nibble of
// byte e - 16. Its activation format is Q8_0 (spec 7.2), not Q8_K.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include "dense_quant_tables.h"

namespace dense::cpuref::detail {
namespace {

constexpr std::size_t kBlockBytes = 18;
constexpr int kBlockElements = 32;

// The signed codebook value of element e.
int32_t code(const uint8_t* b, int e) noexcept {
    const uint8_t* qs = b + 2;
    const int nibble = e < 16 ? lo4(qs[e]) : hi4(qs[e - 16]);
    return dense_kvalues_iq4nl[nibble];
}

}  // namespace

void dequantize_iq4_nl(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, b += kBlockBytes, out += kBlockElements) {
        const float d = load_fp16(b);
        for (int e = 0; e < kBlockElements; ++e) out[e] = d * to_f(code(b, e));
    }
}

// spec 7.2: sum += (fp16(da) * fp16(dw)) * (sum_e qa * kvalues[n]).
float vec_dot_iq4_nl_q8_0(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes, ba += q80::kBlockBytes) {
        int32_t isum = 0;
        for (int e = 0; e < kBlockElements; ++e) isum += q80::q(ba, e) * code(bw, e);
        sum += (q80::d(ba) * load_fp16(bw)) * to_f(isum);
    }
    return sum;
}

// Against Q8_32: term = (dw * da) * float(sum_e qa * kvalues[n]) per 32-element block.
float vec_dot_iq4_nl_q8_32(const void* w, const void* a, int64_t n) {
    const auto* bw = static_cast<const uint8_t*>(w);
    const auto* ba = static_cast<const uint8_t*>(a);
    float sum = 0.0f;
    for (int64_t blk = 0; blk < n / kBlockElements; ++blk, bw += kBlockBytes) {
        int32_t isum = 0;
        for (int e = 0; e < kBlockElements; ++e) isum += code(bw, e) * q832::q(ba, 32 * blk + e);
        sum += (load_fp16(bw) * q832::d(ba, n, blk)) * to_f(isum);
    }
    return sum;
}

}  // namespace dense::cpuref::detail
