// Chained launches: every kernel of this pack is launched with Programmatic Dependent Launch
// (Hopper and later), so that on one stream — and inside a captured token-step graph — the next
// kernel's blocks are scheduled while the current kernel's last blocks still run, instead of after
// a full drain + launch. At batch 1 a token step is ~1,000 short kernels, and that gap (ramp-up,
// tail, launch) was a third of the step (docs/perf-notes.md).
//
// The contract every kernel here follows (breaking it is a data race, not a slowdown):
//   1. Before its first read of anything an earlier kernel wrote, and before its first global
//      write (an earlier kernel may still be reading that buffer), every thread calls
//      wait_for_producers(). Only immutable data — weights, codebooks, constant tables — may be
//      touched before it. The GEMV uses that window to start streaming its weights.
//   2. Every block executes wait_for_producers() on every path, even one with no work: a kernel
//      must not complete before its predecessor, or the kernel after it (which waits only for its
//      direct predecessor) could run ahead of data still being written two kernels back.
//   3. allow_consumers() comes after wait_for_producers(), so at most the next kernel is waiting
//      on the SMs at any time, never a chain of them.
// wait_for_producers() is a no-op when the launch had no programmatic dependency (first kernel,
// after a copy, memset or host function — launch_chain_break.hpp — or with chaining switched off),
// so the kernels stay correct alone.
#pragma once

#include "kernels/launch_chain_break.hpp"

#include <cuda_runtime.h>

#include <utility>

namespace dense::cuda {

__device__ __forceinline__ void wait_for_producers() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_consumers() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Whether launches carry the programmatic-serialization attribute: on unless the environment says
// DENSE_CUDA_CHAIN=0 (read once; for A/B measurements and for ruling chaining out when debugging).
bool chained_launches_enabled();

// Launches kernel<<<grid, block, shared, stream>>>(args...) allowing it to start before the
// previous kernel on the stream has finished (see the contract above).
template <class... KernelArgs, class... Args>
cudaError_t launch_chained(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t shared, cudaStream_t stream,
                           Args&&... args) {
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    // After a copy, memset or host function on this stream (launch_chain_break.hpp): an ordinary launch.
    const bool after_other_work = take_launch_chain_break(stream);
    config.numAttrs = chained_launches_enabled() && !after_other_work ? 1 : 0;
    return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace dense::cuda
