// GEMM of IQ4_NL and IQ4_XS weights against Q8_32 activations (gemm_launch.cuh, gemv_dot_iq4.cuh), in a
// translation unit of its own: the pure-asm flavour of the GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemm_launch.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemm_iq4_nl(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm<gemv::IQ4_NLDot>(call, stream);
}

cudaError_t launch_gemm_iq4_xs(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm<gemv::IQ4_XSDot>(call, stream);
}

}  // namespace dense::cuda
