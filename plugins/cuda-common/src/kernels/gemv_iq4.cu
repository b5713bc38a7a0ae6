// GEMV of IQ4_NL and IQ4_XS weights against the Q8_32 activation (gemv_kernel.cuh, gemv_dot_iq4.cuh).
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_kernel.cuh"
#include "kernels/gemv_launchers.hpp"

namespace dense::cuda {

cudaError_t launch_gemv_iq4_nl(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::IQ4_NLDot>(calls, n, stream);
}

cudaError_t launch_gemv_iq4_xs(const GemvLaunch* calls, int n, cudaStream_t stream) {
    return gemv::launch_gemv<gemv::IQ4_XSDot>(calls, n, stream);
}

}  // namespace dense::cuda
