#include "kernels/launch_chain.cuh"

#include <cstdlib>
#include <cstring>

namespace dense::cuda {

bool chained_launches_enabled() {
    static const bool enabled = [] {
        const char* v = std::getenv("DENSE_CUDA_CHAIN");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    return enabled;
}

}  // namespace dense::cuda
