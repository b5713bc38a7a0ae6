// What differs between the pack builds: the compute capability a build targets and the launch
// constants tuned for it. Everything else is the same source for every architecture.
// DENSE_CUDA_TARGET_CC comes from DenseCudaPack.cmake (90 for cuda-sm90, 120 for cuda-sm120).
#pragma once

#include <cstdint>

#ifndef DENSE_CUDA_TARGET_CC
#error "DENSE_CUDA_TARGET_CC must be defined by the build (e.g. 90 or 120)"
#endif

namespace dense::cuda::tuning {

// The compute capability whose cubin this build carries (it also embeds that arch's PTX).
inline constexpr uint32_t kTargetCcMajor = DENSE_CUDA_TARGET_CC / 10;
inline constexpr uint32_t kTargetCcMinor = DENSE_CUDA_TARGET_CC % 10;

#if DENSE_CUDA_TARGET_CC == 90
// Hopper (H100/H200: 132 SMs, 2048 threads per SM). Dequantization is a memory-bound streaming
// kernel: 256 threads per block and enough blocks to fill every SM several times over; a
// grid-stride loop covers larger tensors.
inline constexpr int kDequantThreads = 256;
inline constexpr int kDequantMaxBlocks = 132 * 8;
#elif DENSE_CUDA_TARGET_CC == 120
// Consumer Blackwell (RTX 50xx: up to 170 SMs, 1536 threads per SM).
inline constexpr int kDequantThreads = 256;
inline constexpr int kDequantMaxBlocks = 170 * 6;
#else
#error "no tuning constants for this DENSE_CUDA_TARGET_CC; add a section to target_tuning.hpp"
#endif

}  // namespace dense::cuda::tuning
