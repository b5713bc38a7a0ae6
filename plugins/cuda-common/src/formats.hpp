// The storable formats this pack decodes on the GPU: block layout (spec/quant-formats.md section 1)
// and the kernel launcher of each. Both ops (DEQUANTIZE, EMBED_ROW) are registered for every entry.
#pragma once

#include "kernels/dequant_launchers.hpp"

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <span>

namespace dense::cuda {

struct CudaFormat {
    dense_type_id type;
    const char* name;  // ggml's name, "q4_k"
    uint32_t block_elements;
    uint32_t block_bytes;
    DequantizeLauncher dequantize;
};

// The 15 storable formats, in ascending type id.
std::span<const CudaFormat> cuda_formats() noexcept;

// nullptr if this pack does not decode the type.
const CudaFormat* find_cuda_format(dense_type_id type) noexcept;

// Q8_32 (dense_abi.h), the activation format of the quantized GEMV: not storable, so not in
// cuda_formats() and never dequantized here (dequantize is null). block_bytes = 40 is its size per
// 32 elements (codes, d and s), the nb[0] its views carry.
const CudaFormat& q8_32_format() noexcept;

}  // namespace dense::cuda
