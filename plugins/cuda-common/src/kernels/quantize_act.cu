// F32 -> Q8_32 (dense_abi.h): one warp per 32-element block, one element per lane; the rounding
// itself is q8_32_block.cuh's, bit-exact with cpu-ref's quantize_q8_32.
#include "kernels/launch_chain.cuh"
#include "kernels/gemv_launchers.hpp"
#include "kernels/q8_32_block.cuh"
#include "target_tuning.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace dense::cuda {
namespace {

__global__ void __launch_bounds__(tuning::kQuantizeThreads)
    quantize_q8_32_kernel(const float* __restrict__ x, uint8_t* __restrict__ out, int64_t n) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    const int64_t n_blocks = n / 32;
    const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
    const Q8_32Out q{out, n};
    for (int64_t b = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; b < n_blocks; b += warps)
        quantize_q8_32_block(x[32 * b + (threadIdx.x & 31)], b, q);
}

}  // namespace

cudaError_t launch_quantize_q8_32(const float* x, void* out, int64_t n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    constexpr int kWarpsPerBlock = tuning::kQuantizeThreads / 32;
    const int64_t n_blocks = n / 32;
    const int64_t wanted = (n_blocks + kWarpsPerBlock - 1) / kWarpsPerBlock;
    const int64_t cap = 65535;  // grid-stride beyond that
    const auto grid = static_cast<unsigned>(wanted < cap ? wanted : cap);
    (void)launch_chained(quantize_q8_32_kernel, grid, tuning::kQuantizeThreads, 0, stream, x, static_cast<uint8_t*>(out), n);
    return cudaGetLastError();
}

}  // namespace dense::cuda
