// GEMM of Q3_K weights against Q8_32 activations (gemm_launch.cuh, gemv_dot_q3_k.cuh), in a
// translation unit of its own: the pure-asm flavour of the GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q3_k.cuh"
#include "kernels/gemm_launch.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemm_q3_k(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm<gemv::Q3_KDot>(call, stream);
}

}  // namespace dense::cuda
