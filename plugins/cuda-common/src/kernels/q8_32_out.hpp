// Where a kernel writes a Q8_32 copy of its output (dense_abi.h's layout): plain data shared by the
// host-side op handlers and the kernels (q8_32_block.cuh).
#pragma once

#include <cstdint>

namespace dense::cuda {

// The Q8_32 buffer of n elements: n int8 codes, then n/32 float d, then n/32 float s.
struct Q8_32Out {
    uint8_t* base = nullptr;  // nullptr: no quantized output wanted
    int64_t n = 0;
};

}  // namespace dense::cuda
