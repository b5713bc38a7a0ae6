// Shared pieces of the GPU numerics tests: poisoned device buffers and bit-exact comparison
// against the cpu-ref oracle.
#pragma once

#include "cpu-ref/quant_test_support.hpp"
#include "cuda/cuda_gpu_session.hpp"

#include <bit>
#include <cstdint>
#include <vector>

namespace dense::test::cuda {

// A NaN whose payload no decoder produces from finite inputs: any element a kernel failed to
// write still holds it and fails the bit-exact comparison.
inline constexpr uint32_t kPoisonBits = 0x7FA5DEADu;
// Floats after the output that must stay poisoned (catches writes past the end).
inline constexpr int64_t kGuardFloats = 64;

inline std::vector<float> poison(int64_t n) {
    return std::vector<float>(static_cast<std::size_t>(n), std::bit_cast<float>(kPoisonBits));
}

// How many of v[begin, end) still hold the poison pattern.
inline int64_t count_poison(const std::vector<float>& v, std::size_t begin, std::size_t end) {
    int64_t n = 0;
    for (std::size_t i = begin; i < end; ++i) n += std::bit_cast<uint32_t>(v[i]) == kPoisonBits ? 1 : 0;
    return n;
}

}  // namespace dense::test::cuda
