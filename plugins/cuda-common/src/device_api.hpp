// The pack's dense_device_api: device memory, copies, streams and memory info through the CUDA
// runtime (linked statically). `user` is the PackState. Every callback is noexcept; a CUDA failure
// is DENSE_E_OUT_OF_MEMORY (allocation) or DENSE_E_DEVICE plus one host log line.
//
// Semantics the host relies on:
//   alloc/free                 cudaMalloc/cudaFree on device_index (made current first).
//   copy_to_device/_to_host    stream == NULL: a synchronous cudaMemcpy. Otherwise cudaMemcpyAsync
//                              ordered on `stream`; the host must stream_sync before it reads the
//                              destination (to_host) or reuses the source buffer.
//   stream_create              a non-blocking stream (does not synchronise with the legacy stream).
//   stream_sync(NULL)          synchronises the legacy default stream.
//   mem_info                   cudaMemGetInfo (creates the device's primary context if needed).
#pragma once

#include <dense/abi/dense_abi.h>

namespace dense::cuda {

// A table with its header filled for this ABI; the callbacks expect PackState* as `user`.
dense_device_api make_device_api() noexcept;

}  // namespace dense::cuda
