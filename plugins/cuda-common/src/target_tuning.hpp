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
// Quantized GEMV (kernels/gemv_kernel.cuh). Batch-1 GEMV streams every weight byte once, so what
// matters is bytes in flight (HBM3e at 4.8 TB/s with ~0.7 us of loaded latency needs ~25-35 KB
// outstanding per SM) and instructions per byte. Each warp keeps up to kGemvMaxStages work items
// of ~kGemvItemBytes in flight (cp.async into shared memory), about kGemvBytesInFlightPerWarp;
// blocks of 8 warps, at most 64 registers so 4 blocks (32 warps) fit per SM, and K splits chosen
// to fill kGemvResidentWarps slots evenly, so short matrices (1024 or 48 rows) still spread over
// the GPU. Shared memory stays within the 48 KB a launch gets without opting in.
inline constexpr int kGemvWarps = 8;
inline constexpr int kGemvMinBlocksPerSm = 4;  // 32 resident warps: at most 64 registers per thread
inline constexpr int kGemvResidentWarps = 132 * 32;  // 132 SMs x 4 blocks of 8 warps
inline constexpr int kGemvItemBytes = 2304;
inline constexpr int kGemvBytesInFlightPerWarp = 4096;
inline constexpr int kGemvMaxStages = 4;
inline constexpr int kGemvMaxSharedBytes = 48 * 1024;
// Formats that declare kDirectLoads (Q4_K, Q5_K, IQ4_XS) read their weights straight into registers
// instead of through the ring on matrices of >= 4096 rows: 10-25 % faster at the 27B shapes here.
inline constexpr bool kGemvDirectLoads = true;
// Those formats also take the streamed layout (gemv_kernel.cuh, "streamed matrices") on the same
// matrices: 8 strided K slices over a warp's lanes, 2 rows per task, no block barrier, compiled for
// kGemvStreamMinBlocksPerSm blocks (80 registers): 11-42 % less time than the direct kernel alone at
// the 27B FFN shapes (`bench --gemv-only`, docs/perf-notes.md sessions 18 and 20). It sets the
// summation order of those matrices, so their GEMMs follow it.
inline constexpr bool kGemvStreamLayout = true;
// And so do the other quantized formats (Q6_K, Q3_K, Q2_K, IQ2_*, IQ3_*, IQ4_NL, Q8_0), their units
// reading straight from global memory: 1.1-1.5x the ring kernel at the 27B shapes of >= 4096 rows
// (experiments/gemv_stream.cu, session 24). In the 27B seed-iq4 step, where those formats carry
// ~20 % of the bytes, the same run gave decode 115.11 against 114.90 tok/s, pp512 956 against 947.
inline constexpr bool kGemvStreamRingFormats = true;
inline constexpr int kGemvStreamMinBlocksPerSm = 3;
// Streamed matrices may take their weights through bulk async copies into shared memory instead of
// register loads (gemv_kernel.cuh, stream_part_bulk; the same bits). Compiled here; whether a launch
// takes them is stream_bulk_enabled().
inline constexpr bool kGemvStreamBulkCopies = true;
inline constexpr int kGemvStreamBulkStages = 2;          // a warp's ring: stages of 8 steps x 2 rows
inline constexpr int kGemvStreamBulkMinBlocksPerSm = 3;  // their kernels' __launch_bounds__
// Quantized GEMM (GEMM_Q: T activations at once, kernels/gemm_launch.cuh): the GEMV kernel with up to
// kGemmColumns columns per pass over a weight step, compiled for kGemmMinBlocksPerSm resident blocks
// (up to 128 registers: the C sums, a column's activation and the step's decoded weights stay in
// registers; ptxas uses 103-128 without spilling, sm_90 and sm_120). A step then costs C times the
// dot products for the same bytes.
inline constexpr int kGemmColumns = 8;
inline constexpr int kGemmMinBlocksPerSm = 2;
// Float-weight GEMV and the activation quantizer: plain one-warp-per-row / one-warp-per-block
// kernels (small tensors; they never carry the bulk of a model's bytes).
inline constexpr int kFloatGemvThreads = 256;
inline constexpr int kQuantizeThreads = 256;
// Attention decode (kernels/ops_attention.cu): blocks the history's partitions aim at. One wave of
// 2 resident blocks per SM (132 x 2): on the H200 at the 27B shape this took 100.8 us per call at
// depth 32768 and 37.7 us at 8192, against 113.6 / 48.7 us for 512 (two waves), 124 / 48 for 396,
// 123 / 45 for 200 and 152 / 49 for 132 (docs/perf-notes.md, session 18): every block pays its q
// load, partial write and merge share once, and a second wave leaves a tail.
inline constexpr int64_t kAttnTargetBlocks = 132 * 2;
#elif DENSE_CUDA_TARGET_CC == 120
// Consumer Blackwell (RTX 50xx: up to 170 SMs, 1536 threads per SM).
inline constexpr int kDequantThreads = 256;
inline constexpr int kDequantMaxBlocks = 170 * 6;
// GEMV: as sm90 (see there), with the K split aimed at 12 warps per SM (1536 threads per SM) and a
// smaller in-flight budget per warp (GDDR7 at ~1.8 TB/s over up to 170 SMs).
inline constexpr int kGemvWarps = 8;
inline constexpr int kGemvMinBlocksPerSm = 3;  // 24 resident warps (of 48)
inline constexpr int kGemvResidentWarps = 170 * 24;  // 170 SMs x 3 blocks of 8 warps
inline constexpr int kGemvItemBytes = 2304;
inline constexpr int kGemvBytesInFlightPerWarp = 3072;
inline constexpr int kGemvMaxStages = 4;
inline constexpr int kGemvMaxSharedBytes = 48 * 1024;
inline constexpr bool kGemvDirectLoads = false;  // not measured on an RTX 50xx yet: the ring everywhere
inline constexpr bool kGemvStreamLayout = false;  // (it needs the direct loads)
inline constexpr bool kGemvStreamRingFormats = false;  // not measured on an RTX 50xx yet
inline constexpr int kGemvStreamMinBlocksPerSm = 3;
inline constexpr bool kGemvStreamBulkCopies = false;  // (streamed matrices only)
inline constexpr int kGemvStreamBulkStages = 2;
inline constexpr int kGemvStreamBulkMinBlocksPerSm = 3;
inline constexpr int kGemmColumns = 8;           // GEMM: as sm90 (not measured on an RTX 50xx yet)
inline constexpr int kGemmMinBlocksPerSm = 2;
inline constexpr int kFloatGemvThreads = 256;
inline constexpr int kQuantizeThreads = 256;
inline constexpr int64_t kAttnTargetBlocks = 512;  // attention: not measured on an RTX 50xx (the old value)
#else
#error "no tuning constants for this DENSE_CUDA_TARGET_CC; add a section to target_tuning.hpp"
#endif

}  // namespace dense::cuda::tuning
