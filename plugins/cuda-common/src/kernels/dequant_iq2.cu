// Dequantization kernels for IQ2_XS and IQ2_S.
#include "kernels/dequant_kernel.cuh"
#include "kernels/dequant_launchers.hpp"
#include "kernels/decode_iq2.cuh"

namespace dense::cuda {

cudaError_t launch_dequantize_iq2_xs(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::IQ2_XS>(src, dst, n_elements, stream, select);
}

cudaError_t launch_dequantize_iq2_s(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::IQ2_S>(src, dst, n_elements, stream, select);
}

}  // namespace dense::cuda
