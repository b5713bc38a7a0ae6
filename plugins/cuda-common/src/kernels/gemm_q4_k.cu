// GEMM of Q4_K weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh) with the
// Mma decoder of gemm_mma_k_min.cuh, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_q4_k.cuh) when it does not apply
// (DENSE_CUDA_GEMM=dp4a, unaligned weights). Its own translation unit: the pure-asm flavour of the
// GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemm_mma_k_min.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Q4_K: 144-byte super-blocks, nibbles at 16 (gemm_mma_k_min.cuh).
struct Q4_KMma : KMinMma<144, 16, false> {};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_q4_k(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::Q4_KMma, gemv::Q4_KDot>(call, stream);
}

}  // namespace dense::cuda
