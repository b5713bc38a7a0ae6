// GEMV of IQ3_XXS and IQ3_S weights against the Q8_32 activation (gemv_kernel.cuh, gemv_dot_iq3.cuh).
#include "kernels/gemv_dot_iq3.cuh"
#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemv_iq3_xxs(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::IQ3_XXSDot>(calls, n, stream);
}

cudaError_t launch_gemv_iq3_s(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::IQ3_SDot>(calls, n, stream);
}

}  // namespace dense::cuda
