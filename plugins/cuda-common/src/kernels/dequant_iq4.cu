// Dequantization kernels for IQ4_NL and IQ4_XS.
#include "kernels/dequant_kernel.cuh"
#include "kernels/dequant_launchers.hpp"
#include "kernels/decode_iq4.cuh"

namespace dense::cuda {

cudaError_t launch_dequantize_iq4_nl(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::IQ4_NL>(src, dst, n_elements, stream, select);
}

cudaError_t launch_dequantize_iq4_xs(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    return launch_dequantize<decode::IQ4_XS>(src, dst, n_elements, stream, select);
}

}  // namespace dense::cuda
