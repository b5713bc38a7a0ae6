#include "cuda_status.hpp"

#include <climits>

namespace dense::cuda {

dense_status status_of(cudaError_t err) noexcept {
    if (err == cudaSuccess) return DENSE_OK;
    if (err == cudaErrorMemoryAllocation) return DENSE_E_OUT_OF_MEMORY;
    return DENSE_E_DEVICE;
}

dense_status report_cuda(const dense::sdk::Host& host, const std::string& who, const std::string& what,
                         cudaError_t err) {
    if (err == cudaSuccess) return DENSE_OK;
    host.error(who + ": " + what + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
    (void)cudaGetLastError();
    return status_of(err);
}

dense_status use_device(const dense::sdk::Host& host, const std::string& who, uint32_t device_index) {
    if (device_index > static_cast<uint32_t>(INT_MAX)) {
        host.error(who + ": device index " + std::to_string(device_index) + " is out of range");
        return DENSE_E_INVALID_ARGUMENT;
    }
    const int wanted = static_cast<int>(device_index);
    int current = -1;
    cudaError_t err = cudaGetDevice(&current);
    if (err == cudaSuccess && current == wanted) return DENSE_OK;
    err = cudaSetDevice(wanted);
    return report_cuda(host, who, "cudaSetDevice(" + std::to_string(wanted) + ")", err);
}

}  // namespace dense::cuda
