// Q8_32 (id 512): dense-rt's activation format for int8 dot products on GPUs (dense_abi.h). Blocks
// of 32 values with a float32 scale d and a float32 s = d * sum(q), stored struct-of-arrays over the
// whole vector: codes[n], then d[n/32], then s[n/32] (quant_common.hpp, namespace q832).
//
// The quantizer, per block of 32 (the CUDA packs' quantize kernel must match it bit for bit):
//   - any NaN or Inf element: q = 0, d = s = NaN (bits 0x7FC00000). A NaN scale poisons every dot
//     product that reads the block, so a non-finite activation is never silently dropped, and the
//     bit pattern is fixed (an arithmetic NaN would differ between x86 and GPUs).
//   - amax = max |x|;  d = amax / 127 (one float division, round to nearest even);
//   - d == 0 (all zero, or amax so small that amax/127 underflows): q = 0, d = s = +0;
//   - q = round_half_away_from_zero(x / d) with a TRUE division (not x * (1/d)), clamped to
//     [-127, 127]. The clamp only acts when d is subnormal and lost precision: for normal d,
//     |x/d| <= 127 (1 + 2^-23) rounds to at most 127.
//   - s = d * float(sum q) (the sum is exact: |sum| <= 4064).
// max over |x| and the clamp are order-independent, so a parallel implementation reproduces every
// bit.
#include "kernels/format_impls.hpp"
#include "kernels/quant_common.hpp"

#include <bit>
#include <cmath>

namespace dense::cpuref::detail {
namespace {

constexpr uint32_t kNanBits = 0x7FC00000u;

void store_f32(uint8_t* p, float v) noexcept {
    store_le32(p, std::bit_cast<uint32_t>(v));
}

}  // namespace

void quantize_q8_32(const float* x, void* out, int64_t n) {
    auto* base = static_cast<uint8_t*>(out);
    for (int64_t b = 0; b < n / q832::kBlockElements; ++b) {
        const float* xb = x + b * q832::kBlockElements;
        uint8_t* codes = base + b * q832::kBlockElements;
        uint8_t* d_at = base + n + 4 * b;
        uint8_t* s_at = base + n + n / 8 + 4 * b;
        bool finite = true;
        float amax = 0.0f;
        for (int e = 0; e < q832::kBlockElements; ++e) {
            finite = finite && std::isfinite(xb[e]);
            const float ax = std::fabs(xb[e]);
            amax = ax > amax ? ax : amax;
        }
        const float d = amax / 127.0f;
        if (!finite || d == 0.0f) {
            for (int e = 0; e < q832::kBlockElements; ++e) codes[e] = 0;
            const float scale = finite ? 0.0f : std::bit_cast<float>(kNanBits);
            store_f32(d_at, scale);
            store_f32(s_at, scale);
            continue;
        }
        int32_t sum = 0;
        for (int e = 0; e < q832::kBlockElements; ++e) {
            float r = std::round(xb[e] / d);  // half away from zero; exact for any float
            r = r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r);
            const auto q = static_cast<int32_t>(r);
            codes[e] = static_cast<uint8_t>(static_cast<int8_t>(q));
            sum += q;
        }
        store_f32(d_at, d);
        store_f32(s_at, d * to_f(sum));
    }
}

// x = d * q. A non-finite block dequantizes to NaN (d is NaN), as its dot products do.
void dequantize_q8_32(const void* blocks, float* out, int64_t n) {
    const auto* base = static_cast<const uint8_t*>(blocks);
    for (int64_t e = 0; e < n; ++e) out[e] = q832::d(base, n, e / q832::kBlockElements) * to_f(q832::q(base, e));
}

}  // namespace dense::cpuref::detail
