#include "synth/block_fill.hpp"

#include "core/error.hpp"
#include "core/half.hpp"

#include <cmath>
#include <cstring>
#include <string>

namespace dense::synth {
namespace {

constexpr double kJitterLo = 0.75, kJitterHi = 1.25;
constexpr double kJitterMeanSquare = 1.0 + (kJitterHi - kJitterLo) * (kJitterHi - kJitterLo) / 12.0;

// Mean squares of uniformly random codes (exact; computed from the format definitions).
constexpr double kInt8MeanSquare = 5461.5;            // int8 -128..127
constexpr double kIq4nlMeanSquare = 4548.0;           // kvalues_iq4nl, 16 entries
constexpr double kQ2kCenteredMeanSquare = 1.25;       // q - 1.5,  q in 0..3
constexpr double kQ3kMeanSquare = 5.5;                // q in -4..3
constexpr double kQ4kCenteredMeanSquare = 21.25;      // q - 7.5,  q in 0..15
constexpr double kQ5kCenteredMeanSquare = 85.25;      // q - 15.5, q in 0..31
constexpr double kQ6kMeanSquare = 341.5;              // q in -32..31
// Mean square of the bytes of all grid entries (iqN_grid tables of spec/tables).
constexpr double kIq2xsGridMeanSquare = 586.47607421875;
constexpr double kIq2sGridMeanSquare = 596.8416748046875;
constexpr double kIq3xxsGridMeanSquare = 951.640625;
constexpr double kIq3sGridMeanSquare = 57.671875;

// Mean of f(s)^2 over the integers s in [lo, hi].
template <class F>
double mean_square(int lo, int hi, F f) {
    double sum = 0.0;
    for (int s = lo; s <= hi; ++s) sum += f(s) * f(s);
    return sum / (hi - lo + 1);
}
double ident(int s) { return s; }

// Random bits drawn 64 at a time, handed out a few at a time (scale fields need 3-6 bits each).
class BitPool {
public:
    explicit BitPool(Rng& rng) : rng_(rng) {}
    uint32_t take(int k) {
        if (left_ < k) {
            bits_ = rng_.next();
            left_ = 64;
        }
        const auto v = static_cast<uint32_t>(bits_ & ((uint64_t{1} << k) - 1));
        bits_ >>= k;
        left_ -= k;
        return v;
    }

private:
    Rng& rng_;
    uint64_t bits_ = 0;
    int left_ = 0;
};

void put_u16(std::byte* p, uint16_t v) { std::memcpy(p, &v, 2); }
void put_fp16(std::byte* p, double v) { put_u16(p, fp32_to_fp16(static_cast<float>(v))); }
float get_fp16(const std::byte* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return fp16_to_fp32(v);
}

double jittered(const BlockRecipe& r, Rng& rng) { return r.base_d * rng.uniform(kJitterLo, kJitterHi); }

// ---- per-format block writers (random code bytes are already in place) ----------------------------

void fix_q8_0_or_iq4nl(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b) {
    const double d = jittered(r, rng);
    put_fp16(b, bits.take(1) ? -d : d);
}

void fix_q2_k(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b) {
    for (int j = 0; j < 16; ++j) {
        const uint32_t s = 8 + bits.take(3);  // scale = min = s
        b[j] = static_cast<std::byte>(s | (s << 4));
    }
    put_fp16(b + 80, jittered(r, rng));
    put_fp16(b + 82, static_cast<double>(get_fp16(b + 80)) * 1.5);
}

void fix_q3_k(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b) {
    uint8_t s[12] = {};
    for (int j = 0; j < 16; ++j) {
        const int mag = 16 + static_cast<int>(bits.take(4));
        const auto u = static_cast<uint32_t>((bits.take(1) ? -mag : mag) + 32);  // 0..63
        if (j < 8)
            s[j] = static_cast<uint8_t>(s[j] | (u & 0xF));
        else
            s[j - 8] = static_cast<uint8_t>(s[j - 8] | ((u & 0xF) << 4));
        s[8 + j % 4] = static_cast<uint8_t>(s[8 + j % 4] | ((u >> 4) << (2 * (j / 4))));
    }
    std::memcpy(b + 96, s, 12);
    put_fp16(b + 108, jittered(r, rng));
}

// Q4_K / Q5_K: d, dmin at 0 / 2, packed 6-bit scales and mins at 4.
void fix_q45_k(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b, double code_mean) {
    uint8_t s[12] = {};
    for (int j = 0; j < 8; ++j) {
        const uint32_t sc = 32 + bits.take(5), m = sc;
        if (j < 4) {
            s[j] = static_cast<uint8_t>(s[j] | sc);
            s[j + 4] = static_cast<uint8_t>(s[j + 4] | m);
        } else {
            s[j + 4] = static_cast<uint8_t>((sc & 0xF) | ((m & 0xF) << 4));
            s[j - 4] = static_cast<uint8_t>(s[j - 4] | ((sc >> 4) << 6));
            s[j] = static_cast<uint8_t>(s[j] | ((m >> 4) << 6));
        }
    }
    std::memcpy(b + 4, s, 12);
    put_fp16(b, jittered(r, rng));
    put_fp16(b + 2, static_cast<double>(get_fp16(b)) * code_mean);
}

void fix_q6_k(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b) {
    for (int j = 0; j < 16; ++j) {
        const int mag = 64 + static_cast<int>(bits.take(6));
        b[192 + j] = static_cast<std::byte>(static_cast<int8_t>(bits.take(1) ? -mag : mag));
    }
    put_fp16(b + 208, jittered(r, rng));
}

// IQ2_XS / IQ2_S: eight bytes of two 4-bit scales at `at`.
void fix_iq2(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b, int at) {
    for (int ib = 0; ib < 8; ++ib) {
        const uint32_t lo = 8 + bits.take(3), hi = 8 + bits.take(3);
        b[at + ib] = static_cast<std::byte>(lo | (hi << 4));
    }
    put_fp16(b, jittered(r, rng));
}

void fix_iq3_xxs(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b) {
    for (int ib = 0; ib < 8; ++ib) {
        uint32_t w;
        std::memcpy(&w, b + 66 + 4 * ib, 4);
        w = (w & 0x0FFFFFFFu) | ((8 + bits.take(3)) << 28);  // random signs stay in bits 0..27
        std::memcpy(b + 66 + 4 * ib, &w, 4);
    }
    put_fp16(b, jittered(r, rng));
}

void fix_iq3_s(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b) {
    for (int k = 0; k < 4; ++k) {
        const uint32_t lo = 8 + bits.take(3), hi = 8 + bits.take(3);
        b[106 + k] = static_cast<std::byte>(lo | (hi << 4));
    }
    put_fp16(b, jittered(r, rng));
}

void fix_iq4_xs(const BlockRecipe& r, Rng& rng, BitPool& bits, std::byte* b) {
    uint16_t high = 0;
    uint8_t low[4] = {};
    for (int ib = 0; ib < 8; ++ib) {
        const int mag = 16 + static_cast<int>(bits.take(4));
        const auto ls = static_cast<uint32_t>((bits.take(1) ? -mag : mag) + 32);  // 0..63
        high = static_cast<uint16_t>(high | ((ls >> 4) << (2 * ib)));
        low[ib / 2] = static_cast<uint8_t>(low[ib / 2] | ((ls & 0xF) << (4 * (ib % 2))));
    }
    put_u16(b + 2, high);
    std::memcpy(b + 4, low, 4);
    put_fp16(b, jittered(r, rng));
}

// E[scale factor^2] * E[code^2] of one element, for the distributions the writers above draw from.
double element_mean_square(dense_type_id type) {
    const auto iq2_scale = [](int nib) { return (0.5 + nib) * 0.25; };
    switch (type) {
        case DENSE_TYPE_Q8_0: return kInt8MeanSquare;
        case DENSE_TYPE_IQ4_NL: return kIq4nlMeanSquare;
        case DENSE_TYPE_Q2_K: return mean_square(8, 15, ident) * kQ2kCenteredMeanSquare;
        case DENSE_TYPE_Q3_K: return mean_square(16, 31, ident) * kQ3kMeanSquare;
        case DENSE_TYPE_Q4_K: return mean_square(32, 63, ident) * kQ4kCenteredMeanSquare;
        case DENSE_TYPE_Q5_K: return mean_square(32, 63, ident) * kQ5kCenteredMeanSquare;
        case DENSE_TYPE_Q6_K: return mean_square(64, 127, ident) * kQ6kMeanSquare;
        case DENSE_TYPE_IQ2_XS: return mean_square(8, 15, iq2_scale) * kIq2xsGridMeanSquare;
        case DENSE_TYPE_IQ2_S: return mean_square(8, 15, iq2_scale) * kIq2sGridMeanSquare;
        case DENSE_TYPE_IQ3_XXS: return mean_square(8, 15, [](int nib) { return (0.5 + nib) * 0.5; }) * kIq3xxsGridMeanSquare;
        case DENSE_TYPE_IQ3_S: return mean_square(8, 15, [](int nib) { return 1.0 + 2.0 * nib; }) * kIq3sGridMeanSquare;
        case DENSE_TYPE_IQ4_XS: return mean_square(16, 31, ident) * kIq4nlMeanSquare;
        default: return 0.0;
    }
}

}  // namespace

bool can_generate(dense_type_id type) noexcept {
    switch (type) {
        case DENSE_TYPE_F32: case DENSE_TYPE_F16: case DENSE_TYPE_BF16:
        case DENSE_TYPE_Q8_0: case DENSE_TYPE_Q2_K: case DENSE_TYPE_Q3_K: case DENSE_TYPE_Q4_K:
        case DENSE_TYPE_Q5_K: case DENSE_TYPE_Q6_K: case DENSE_TYPE_IQ2_XS: case DENSE_TYPE_IQ2_S:
        case DENSE_TYPE_IQ3_XXS: case DENSE_TYPE_IQ3_S: case DENSE_TYPE_IQ4_NL: case DENSE_TYPE_IQ4_XS:
            return true;
        default:
            return false;
    }
}

double grid_mean_square(dense_type_id type) noexcept {
    switch (type) {
        case DENSE_TYPE_IQ2_XS: return kIq2xsGridMeanSquare;
        case DENSE_TYPE_IQ2_S: return kIq2sGridMeanSquare;
        case DENSE_TYPE_IQ3_XXS: return kIq3xxsGridMeanSquare;
        case DENSE_TYPE_IQ3_S: return kIq3sGridMeanSquare;
        case DENSE_TYPE_IQ4_NL: case DENSE_TYPE_IQ4_XS: return kIq4nlMeanSquare;
        default: return 0.0;
    }
}

BlockRecipe make_recipe(dense_type_id type, double sigma) {
    BlockRecipe r;
    r.type = type;
    r.sigma = sigma;
    switch (type) {
        case DENSE_TYPE_F32: r.block_elements = 1, r.block_bytes = 4; return r;
        case DENSE_TYPE_F16: case DENSE_TYPE_BF16: r.block_elements = 1, r.block_bytes = 2; return r;
        case DENSE_TYPE_Q8_0: r.block_elements = 32, r.block_bytes = 34; break;
        case DENSE_TYPE_IQ4_NL: r.block_elements = 32, r.block_bytes = 18; break;
        case DENSE_TYPE_Q2_K: r.block_elements = 256, r.block_bytes = 84; break;
        case DENSE_TYPE_Q3_K: r.block_elements = 256, r.block_bytes = 110; break;
        case DENSE_TYPE_Q4_K: r.block_elements = 256, r.block_bytes = 144; break;
        case DENSE_TYPE_Q5_K: r.block_elements = 256, r.block_bytes = 176; break;
        case DENSE_TYPE_Q6_K: r.block_elements = 256, r.block_bytes = 210; break;
        case DENSE_TYPE_IQ2_XS: r.block_elements = 256, r.block_bytes = 74; break;
        case DENSE_TYPE_IQ2_S: r.block_elements = 256, r.block_bytes = 82; break;
        case DENSE_TYPE_IQ3_XXS: r.block_elements = 256, r.block_bytes = 98; break;
        case DENSE_TYPE_IQ3_S: r.block_elements = 256, r.block_bytes = 110; break;
        case DENSE_TYPE_IQ4_XS: r.block_elements = 256, r.block_bytes = 136; break;
        default:
            throw Error(ErrorKind::Internal, "synth: cannot generate blocks of type id " + std::to_string(type));
    }
    r.base_d = sigma / std::sqrt(kJitterMeanSquare * element_mean_square(type));
    return r;
}

void fill_blocks(const BlockRecipe& r, Rng& rng, std::byte* out, size_t n_blocks) {
    switch (r.type) {
        case DENSE_TYPE_F32:
            for (size_t i = 0; i < n_blocks; ++i) {
                const auto v = static_cast<float>(r.sigma * rng.fast_normal());
                std::memcpy(out + 4 * i, &v, 4);
            }
            return;
        case DENSE_TYPE_F16:
            for (size_t i = 0; i < n_blocks; ++i) put_u16(out + 2 * i, fp32_to_fp16(static_cast<float>(r.sigma * rng.fast_normal())));
            return;
        case DENSE_TYPE_BF16:
            for (size_t i = 0; i < n_blocks; ++i) put_u16(out + 2 * i, fp32_to_bf16(static_cast<float>(r.sigma * rng.fast_normal())));
            return;
        default: break;
    }
    rng.fill_bytes(out, n_blocks * r.block_bytes);  // every code field: uniformly random
    BitPool bits(rng);
    for (size_t i = 0; i < n_blocks; ++i) {
        std::byte* b = out + i * r.block_bytes;
        switch (r.type) {
            case DENSE_TYPE_Q8_0: case DENSE_TYPE_IQ4_NL: fix_q8_0_or_iq4nl(r, rng, bits, b); break;
            case DENSE_TYPE_Q2_K: fix_q2_k(r, rng, bits, b); break;
            case DENSE_TYPE_Q3_K: fix_q3_k(r, rng, bits, b); break;
            case DENSE_TYPE_Q4_K: fix_q45_k(r, rng, bits, b, 7.5); break;
            case DENSE_TYPE_Q5_K: fix_q45_k(r, rng, bits, b, 15.5); break;
            case DENSE_TYPE_Q6_K: fix_q6_k(r, rng, bits, b); break;
            case DENSE_TYPE_IQ2_XS: fix_iq2(r, rng, bits, b, 66); break;
            case DENSE_TYPE_IQ2_S: fix_iq2(r, rng, bits, b, 74); break;
            case DENSE_TYPE_IQ3_XXS: fix_iq3_xxs(r, rng, bits, b); break;
            case DENSE_TYPE_IQ3_S: fix_iq3_s(r, rng, bits, b); break;
            case DENSE_TYPE_IQ4_XS: fix_iq4_xs(r, rng, bits, b); break;
            default: break;
        }
    }
}

}  // namespace dense::synth
