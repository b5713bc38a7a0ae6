// Dequantization kernels for F32 / F16 / BF16 (exact widening).
#include "kernels/dequant_kernel.cuh"
#include "kernels/dequant_launchers.hpp"
#include "kernels/decode_float.cuh"

namespace dense::cuda {

cudaError_t launch_dequantize_f32(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::F32>(src, dst, n_elements, stream, select);
}

cudaError_t launch_dequantize_f16(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::F16>(src, dst, n_elements, stream, select);
}

cudaError_t launch_dequantize_bf16(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::BF16>(src, dst, n_elements, stream, select);
}

}  // namespace dense::cuda
