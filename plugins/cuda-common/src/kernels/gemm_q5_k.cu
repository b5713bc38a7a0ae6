// GEMM of Q5_K weights against Q8_32 activations: the tensor-core kernel (gemm_mma.cuh) with the
// Mma decoder of gemm_mma_k_min.cuh, or the dp4a GEMM (gemm_launch.cuh, gemv_dot_q5_k.cuh) when it does not apply
// (DENSE_CUDA_GEMM=dp4a, unaligned weights). Its own translation unit: the pure-asm flavour of the
// GEMV code (gemv_common.cuh says why).
#define DENSE_GEMV_PURE_ASM 1
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemm_mma_choice.cuh"
#include "kernels/gemm_mma_k_min.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {
namespace gemv {
inline namespace pure_asm {

// Q5_K: 176-byte super-blocks, nibbles at 48, qh at 16 for the elements' bit 4 (gemm_mma_k_min.cuh).
struct Q5_KMma : KMinMma<176, 48, true> {};

}  // namespace pure_asm
}  // namespace gemv

cudaError_t launch_gemm_q5_k(const GemmLaunch& call, cudaStream_t stream) {
    return gemv::launch_gemm_auto<gemv::Q5_KMma, gemv::Q5_KDot>(call, stream);
}

}  // namespace dense::cuda
