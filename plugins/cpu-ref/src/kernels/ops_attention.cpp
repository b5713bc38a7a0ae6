// KV cache store and single-token attention (spec 6.4). Caches are contiguous {d, hkv, n_ctx} in F16
// (stored rounded to nearest even, read back exactly) or F32. Attention: scores, softmax and the
// weighted sum of V in double, with the usual max subtraction; one float rounding per output.
#include "kernels/ops.hpp"
#include "kernels/ops_math.hpp"

#include "core/half.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace dense::cpuref {
namespace {

void require_cache_type(dense_type_id type, const char* what) {
    if (type != DENSE_TYPE_F16 && type != DENSE_TYPE_F32)
        throw std::invalid_argument(std::string(what) + ": cache type id " + std::to_string(type) +
                                    " is neither F16 nor F32");
}

// Element `index` of a cache (memcpy: the cache is raw bytes to this code, no aliasing questions).
double cache_load(dense_type_id type, const void* cache, int64_t index) noexcept {
    const auto* p = static_cast<const unsigned char*>(cache);
    if (type == DENSE_TYPE_F16) {
        uint16_t h;
        std::memcpy(&h, p + 2 * index, 2);
        return fp16_to_fp32(h);
    }
    float f;
    std::memcpy(&f, p + 4 * index, 4);
    return f;
}

void cache_store(dense_type_id type, void* cache, int64_t index, float value) noexcept {
    auto* p = static_cast<unsigned char*>(cache);
    if (type == DENSE_TYPE_F16) {
        const uint16_t h = fp32_to_fp16(value);
        std::memcpy(p + 2 * index, &h, 2);
    } else {
        std::memcpy(p + 4 * index, &value, 4);
    }
}

}  // namespace

void kv_store(dense_type_id cache_type, const float* k, int64_t k_stride, const float* v, int64_t v_stride, int64_t d,
              int64_t hkv, int64_t pos, void* k_cache, void* v_cache) {
    require_cache_type(cache_type, "kv_store");
    const int64_t slot = pos * hkv * d;
    for (int64_t g = 0; g < hkv; ++g)
        for (int64_t e = 0; e < d; ++e) {
            cache_store(cache_type, k_cache, slot + g * d + e, detail::row(k, k_stride, g)[e]);
            cache_store(cache_type, v_cache, slot + g * d + e, detail::row(v, v_stride, g)[e]);
        }
}

void attn_decode(const AttnDecodeArgs& a) {
    require_cache_type(a.cache_type, "attn_decode");
    const int64_t group = a.hq / a.hkv;  // query heads per KV head
    std::vector<double> weight(static_cast<std::size_t>(a.n_kv));
    std::vector<double> acc(static_cast<std::size_t>(a.d));
    for (int64_t h = 0; h < a.hq; ++h) {
        const int64_t g = h / group;  // grouped (not modular) mapping, spec 6.4
        const float* q = detail::row(a.q, a.q_stride, h);
        double max_score = -INFINITY;
        for (int64_t j = 0; j < a.n_kv; ++j) {
            const int64_t base = (j * a.hkv + g) * a.d;
            double dot = 0.0;
            for (int64_t e = 0; e < a.d; ++e)
                dot += static_cast<double>(q[e]) * cache_load(a.cache_type, a.k_cache, base + e);
            const double s = static_cast<double>(a.scale) * dot;
            weight[static_cast<std::size_t>(j)] = s;
            if (s > max_score) max_score = s;
        }
        double denom = 0.0;
        for (auto& w : weight) {
            w = std::exp(w - max_score);
            denom += w;
        }
        for (auto& x : acc) x = 0.0;
        for (int64_t j = 0; j < a.n_kv; ++j) {
            const int64_t base = (j * a.hkv + g) * a.d;
            const double w = weight[static_cast<std::size_t>(j)];
            for (int64_t e = 0; e < a.d; ++e)
                acc[static_cast<std::size_t>(e)] += w * cache_load(a.cache_type, a.v_cache, base + e);
        }
        float* out = a.out + h * a.d;
        const float* gate = a.gate != nullptr ? detail::row(a.gate, a.gate_stride, h) : nullptr;
        for (int64_t e = 0; e < a.d; ++e) {
            double o = acc[static_cast<std::size_t>(e)] / denom;
            if (gate != nullptr) o *= detail::sigmoid(static_cast<double>(gate[e]));
            out[e] = static_cast<float>(o);
        }
    }
}

}  // namespace dense::cpuref
