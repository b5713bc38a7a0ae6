// The random numbers of `dense-rt synth`: splitmix64 to derive seeds, xoshiro256** for the streams.
// Every tensor chunk draws from its own stream seeded by (seed, tensor index, chunk index), so a file
// is a pure function of its seed whatever the thread count or the order chunks are produced in.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dense::synth {

inline uint64_t splitmix64(uint64_t& state) noexcept {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Seed of the independent stream number (a, b) of a run seeded with `seed`: each component goes
// through a full splitmix64 round, so neighbouring (a, b) pairs give unrelated streams.
inline uint64_t stream_seed(uint64_t seed, uint64_t a, uint64_t b) noexcept {
    uint64_t s = seed;
    uint64_t h = splitmix64(s);
    s = h ^ (a * 0xD6E8FEB86659FD93ull);
    h = splitmix64(s);
    s = h ^ (b * 0xA0761D6478BD642Full);
    return splitmix64(s);
}

class Rng {
public:
    explicit Rng(uint64_t seed) noexcept {
        uint64_t s = seed;
        for (auto& w : s_) w = splitmix64(s);
    }

    // xoshiro256** (Blackman & Vigna): fast, 256-bit state, passes BigCrush.
    uint64_t next() noexcept {
        const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = std::rotl(s_[3], 45);
        return result;
    }

    // Uniform integer in [lo, hi] (multiply-shift; the bias for these tiny ranges is < 2^-32).
    int32_t between(int32_t lo, int32_t hi) noexcept {
        const uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo + 1);
        return static_cast<int32_t>(lo + static_cast<int64_t>(((next() >> 32) * span) >> 32));
    }
    bool coin() noexcept { return (next() >> 63) != 0; }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform(); }

    // Standard normal (Box-Muller; the second value of each pair is kept for the next call).
    double normal() noexcept {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        const double u1 = 1.0 - uniform();  // (0, 1]: log never sees 0
        const double u2 = uniform();
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double a = 6.283185307179586476925 * u2;
        spare_ = r * std::sin(a);
        has_spare_ = true;
        return r * std::cos(a);
    }

    // Approximately standard normal, from one 64-bit draw: the sum of four 16-bit uniforms (Irwin-Hall,
    // mean 0, variance 1, support +-3.46). ~20x faster than normal(); used for float weight matrices.
    double fast_normal() noexcept {
        const uint64_t r = next();
        const double sum = static_cast<double>((r & 0xFFFF) + ((r >> 16) & 0xFFFF) + ((r >> 32) & 0xFFFF) + (r >> 48));
        return (sum + 2.0 - 131072.0) * (1.7320508075688772 / 65536.0);  // (sum of (u_i + 0.5) / 65536 - 2) * sqrt(3)
    }

    void fill_bytes(std::byte* out, size_t n) noexcept {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            const uint64_t v = next();
            std::memcpy(out + i, &v, 8);
        }
        if (i < n) {
            const uint64_t v = next();
            std::memcpy(out + i, &v, n - i);
        }
    }

private:
    uint64_t s_[4];
    double spare_ = 0.0;
    bool has_spare_ = false;
};

}  // namespace dense::synth
