// Dequantization kernel for Q8_0.
#include "kernels/dequant_kernel.cuh"
#include "kernels/dequant_launchers.hpp"
#include "kernels/decode_q8_0.cuh"

namespace dense::cuda {

cudaError_t launch_dequantize_q8_0(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::Q8_0>(src, dst, n_elements, stream, select);
}

}  // namespace dense::cuda
