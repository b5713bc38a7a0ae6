// GEMV of Q8_0 weights against the Q8_32 activation (gemv_kernel.cuh, gemv_dot_q8_0.cuh).
#include "kernels/gemv_dot_q8_0.cuh"
#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemv_q8_0(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::Q8_0Dot>(calls, n, stream);
}

}  // namespace dense::cuda
