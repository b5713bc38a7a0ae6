// Helpers for the quant-format tests: test-vector files, random valid blocks, bit-exact comparison.
// Header-only; other test areas (e.g. tests/cuda) may include "cpu-ref/quant_test_support.hpp".
#pragma once

#include "common/test_paths.hpp"
#include "core/half.hpp"
#include "kernels/formats.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace dense::test::quant {

inline std::filesystem::path vectors_dir() {
    return data_dir() / "testvectors";
}

inline std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::vector<float> read_floats(const std::filesystem::path& path) {
    const auto bytes = read_bytes(path);
    std::vector<float> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
}

// The 12 quantized weight formats of the spec (test vectors, oracle): everything storable but floats.
inline std::vector<const cpuref::FormatKernels*> quantized_weight_formats() {
    std::vector<const cpuref::FormatKernels*> out;
    for (const auto& f : cpuref::all_formats())
        if (f.storable && f.block_elements > 1) out.push_back(&f);
    return out;
}

inline std::vector<const cpuref::FormatKernels*> storable_formats() {
    std::vector<const cpuref::FormatKernels*> out;
    for (const auto& f : cpuref::all_formats())
        if (f.storable) out.push_back(&f);
    return out;
}

// How the fp16 scale fields of random blocks are drawn.
enum class ScaleRange {
    Full,      // any finite fp16 of either sign: zero, subnormals, up to 65504
    Moderate,  // |d| in [2^-8, 2^-4), either sign: realistic weight scales
};

inline uint16_t random_finite_fp16(std::mt19937_64& rng, ScaleRange range) {
    if (range == ScaleRange::Full) {
        for (;;) {
            const auto h = static_cast<uint16_t>(rng() & 0xFFFFu);
            if (((h >> 10) & 0x1Fu) != 0x1Fu) return h;  // exponent 31 = Inf/NaN
        }
    }
    const auto exponent = static_cast<uint16_t>(15 - 8 + (rng() % 4));  // 2^-8 .. 2^-5, plus mantissa
    const auto mantissa = static_cast<uint16_t>(rng() & 0x3FFu);
    const auto sign = static_cast<uint16_t>((rng() & 1u) << 15);
    return static_cast<uint16_t>(sign | (exponent << 10) | mantissa);
}

// `count` blocks of random bytes, the fp16 scale fields replaced by random finite values. Float
// formats (one element per block) get random finite values of their own type instead.
inline std::vector<uint8_t> random_blocks(const cpuref::FormatKernels& f, int64_t count, std::mt19937_64& rng,
                                          ScaleRange range) {
    std::vector<uint8_t> out(static_cast<std::size_t>(count) * f.block_bytes);
    for (auto& b : out) b = static_cast<uint8_t>(rng() & 0xFFu);
    if (f.block_elements == 1) {  // F32 / F16 / BF16: moderate random values
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (int64_t i = 0; i < count; ++i) {
            uint8_t* p = out.data() + static_cast<std::size_t>(i) * f.block_bytes;
            const float v = u(rng);
            if (f.type == DENSE_TYPE_F32) {
                std::memcpy(p, &v, 4);
            } else {
                const uint16_t h = f.type == DENSE_TYPE_F16 ? fp32_to_fp16(v) : fp32_to_bf16(v);
                std::memcpy(p, &h, 2);
            }
        }
        return out;
    }
    for (int64_t i = 0; i < count; ++i) {
        uint8_t* block = out.data() + static_cast<std::size_t>(i) * f.block_bytes;
        for (int16_t offset : f.fp16_field_offsets) {
            if (offset < 0) continue;
            const uint16_t h = random_finite_fp16(rng, range);
            block[offset] = static_cast<uint8_t>(h & 0xFFu);
            block[offset + 1] = static_cast<uint8_t>(h >> 8);
        }
    }
    return out;
}

// n activations uniform in [-1, 1) with every 37th scaled by 7 (as the spec's test vectors).
inline std::vector<float> random_activation(int64_t n, std::mt19937_64& rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = u(rng) * (i % 37 == 0 ? 7.0f : 1.0f);
    return x;
}

inline std::string hex32(float v) {
    std::ostringstream s;
    s << "0x" << std::hex << std::bit_cast<uint32_t>(v) << " (" << v << ")";
    return s.str();
}

// Bit-pattern equality of two float arrays; on failure names the first mismatch and the count.
inline ::testing::AssertionResult same_bits(const std::vector<float>& got, const std::vector<float>& want,
                                            int64_t block_elements = 1) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
    std::size_t mismatches = 0, first = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(want[i])) {
            if (mismatches++ == 0) first = i;
        }
    if (mismatches == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << mismatches << " of " << got.size() << " elements differ; first at " << first
                                         << " (block " << first / static_cast<std::size_t>(block_elements)
                                         << ", element " << first % static_cast<std::size_t>(block_elements)
                                         << "): got " << hex32(got[first]) << ", want " << hex32(want[first]);
}

inline ::testing::AssertionResult same_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i])
            return ::testing::AssertionFailure()
                   << "first differing byte at " << i << ": got " << int(got[i]) << ", want " << int(want[i]);
    return ::testing::AssertionSuccess();
}

// Test-name generator for suites parameterised by a format.
inline std::string format_param_name(const ::testing::TestParamInfo<const cpuref::FormatKernels*>& p) {
    return p.param->name;
}

// Bytes of n elements of an activation format.
inline std::size_t act_bytes(dense_type_id act, int64_t n) {
    return static_cast<std::size_t>(cpuref::row_bytes(act, n));
}

}  // namespace dense::test::quant
