// GEMV of IQ2_XS and IQ2_S weights against the Q8_32 activation (gemv_kernel.cuh, gemv_dot_iq2.cuh).
#include "kernels/gemv_dot_iq2.cuh"
#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemv_iq2_xs(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::IQ2_XSDot>(calls, n, stream);
}

cudaError_t launch_gemv_iq2_s(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::IQ2_SDot>(calls, n, stream);
}

}  // namespace dense::cuda
