// The optional quantized copy of an activation op's output (dense_abi.h, "fused quantization"): an
// RMS_NORM, GATED_RMS_NORM or SWIGLU registered with act_type Q8_32 takes dst1 = dst0 quantized to
// Q8_32 exactly as QUANTIZE_ACT would write it, so the GEMV after it needs no quantize launch.
#pragma once

#include "kernels/q8_32_out.hpp"

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::cuda::act {

// "" when c.dst[1] can hold dst0 ({n, rows}, which must be contiguous, n a multiple of 32)
// quantized: a contiguous Q8_32 view of n * rows elements on the device, apart from every other view.
std::string check_quantized_copy(const dense_op_call& c, int64_t n, int64_t rows);

// Where the kernel writes the copy (check_quantized_copy accepted the call).
Q8_32Out quantized_copy_target(const dense_op_call& c) noexcept;

}  // namespace dense::cuda::act
