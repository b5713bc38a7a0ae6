// Turning CUDA runtime errors into the ABI's status codes. Every failed CUDA call the pack makes is
// reported exactly once: one host log line naming the pack, the operation and cudaGetErrorString.
// The helpers may throw std::bad_alloc (building messages); the ABI callbacks that call them wrap
// everything in dense::sdk::guarded.
#pragma once

#include <dense/abi/dense_abi.h>
#include <dense/sdk/pack.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace dense::cuda {

// DENSE_E_OUT_OF_MEMORY for cudaErrorMemoryAllocation, DENSE_E_DEVICE for everything else.
dense_status status_of(cudaError_t err) noexcept;

// For err != cudaSuccess: logs "<who>: <what> failed: <error name>: <error string>" at error level,
// clears the runtime's non-sticky last-error state (so the next launch check does not see this
// error again) and returns status_of(err). Returns DENSE_OK for cudaSuccess.
dense_status report_cuda(const dense::sdk::Host& host, const std::string& who, const std::string& what,
                         cudaError_t err);

// Makes `device_index` the calling thread's current device if it is not already (no context work
// when it is). Errors are reported like report_cuda.
dense_status use_device(const dense::sdk::Host& host, const std::string& who, uint32_t device_index);

}  // namespace dense::cuda
