// GEMV of Q6_K weights against the Q8_32 activation (gemv_kernel.cuh, gemv_dot_q6_k.cuh).
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemv_q6_k(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::Q6_KDot>(calls, n, stream);
}

}  // namespace dense::cuda
