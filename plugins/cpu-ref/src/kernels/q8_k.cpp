// Q8_K (id 15): the CPU activation format of the K-quants and IQ types (spec section 5).
// 256 elements, 292 bytes = float32 d + int8 qs[256] + int16 bsums[16]. Never stored in a model.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dense::cpuref::detail {
namespace {

// Round half to even via the float "magic number" 1.5 * 2^23: adding it leaves the rounded integer
// in the low mantissa bits. This is the reference quantizer's own rounding, reproduced exactly
// (also for the non-finite products an Inf/NaN input can create, with no UB float->int conversion).
int32_t round_half_even(float v) noexcept {
    const float shifted = v + 12582912.0f;
    const uint32_t bits = std::bit_cast<uint32_t>(shifted);
    return static_cast<int32_t>(bits & 0x007FFFFFu) - 0x00400000;
}

}  // namespace

void dequantize_q8_k(const void* blocks, float* out, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(blocks);
    for (int64_t blk = 0; blk < n / q8k::kBlockElements; ++blk, b += q8k::kBlockBytes, out += q8k::kBlockElements) {
        const float d = q8k::d(b);
        for (int e = 0; e < q8k::kBlockElements; ++e) out[e] = d * to_f(q8k::q(b, e));
    }
}

void quantize_q8_k(const float* x, void* out, int64_t n) {
    auto* b = static_cast<uint8_t*>(out);
    for (int64_t blk = 0; blk < n / q8k::kBlockElements; ++blk, b += q8k::kBlockBytes, x += q8k::kBlockElements) {
        // The element of largest magnitude, keeping its SIGN; the first one wins ties.
        float amax = 0.0f;
        float m = 0.0f;
        for (int e = 0; e < q8k::kBlockElements; ++e) {
            const float ax = std::fabs(x[e]);
            if (ax > amax) {
                amax = ax;
                m = x[e];
            }
        }
        if (amax == 0.0f) {
            std::memset(b, 0, q8k::kBlockBytes);  // d = +0.0f, qs = 0, bsums = 0
            continue;
        }
        // Dividing by the signed m makes d negative when m > 0 (spec 5 "surprise"): m maps to -127.
        const float iscale = -127.0f / m;
        int32_t qs[q8k::kBlockElements];
        for (int e = 0; e < q8k::kBlockElements; ++e) {
            qs[e] = std::min<int32_t>(127, round_half_even(iscale * x[e]));
            b[4 + e] = static_cast<uint8_t>(static_cast<int8_t>(qs[e]));
        }
        for (int k = 0; k < 16; ++k) {
            int32_t s = 0;
            for (int e = 16 * k; e < 16 * k + 16; ++e) s += qs[e];
            store_le16(b + 260 + 2 * k, static_cast<uint16_t>(static_cast<int16_t>(s)));
        }
        store_le32(b, std::bit_cast<uint32_t>(1.0f / iscale));
    }
}

}  // namespace dense::cpuref::detail
