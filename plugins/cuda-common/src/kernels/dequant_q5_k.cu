// Dequantization kernel for Q5_K.
#include "kernels/dequant_kernel.cuh"
#include "kernels/dequant_launchers.hpp"
#include "kernels/decode_q5_k.cuh"

namespace dense::cuda {

cudaError_t launch_dequantize_q5_k(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::Q5_K>(src, dst, n_elements, stream, select);
}

}  // namespace dense::cuda
