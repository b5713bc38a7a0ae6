// GEMM of IQ3_XXS and IQ3_S weights against Q8_32 activations (gemm_launch.cuh, gemv_dot_iq3.cuh), in a
// translation unit of its own: the pure-asm flavour of the GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_iq3.cuh"
#include "kernels/gemm_launch.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemm_iq3_xxs(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm<gemv::IQ3_XXSDot>(call, stream);
}

cudaError_t launch_gemm_iq3_s(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm<gemv::IQ3_SDot>(call, stream);
}

}  // namespace dense::cuda
