// GEMM of IQ2_XS and IQ2_S weights against Q8_32 activations (gemm_launch.cuh, gemv_dot_iq2.cuh), in a
// translation unit of its own: the pure-asm flavour of the GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_iq2.cuh"
#include "kernels/gemm_launch.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemm_iq2_xs(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm<gemv::IQ2_XSDot>(call, stream);
}

cudaError_t launch_gemm_iq2_s(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm<gemv::IQ2_SDot>(call, stream);
}

}  // namespace dense::cuda
