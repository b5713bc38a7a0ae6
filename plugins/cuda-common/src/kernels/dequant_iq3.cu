// Dequantization kernels for IQ3_XXS and IQ3_S.
#include "kernels/dequant_kernel.cuh"
#include "kernels/dequant_launchers.hpp"
#include "kernels/decode_iq3.cuh"

namespace dense::cuda {

cudaError_t launch_dequantize_iq3_xxs(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::IQ3_XXS>(src, dst, n_elements, stream, select);
}

cudaError_t launch_dequantize_iq3_s(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::IQ3_S>(src, dst, n_elements, stream, select);
}

}  // namespace dense::cuda
