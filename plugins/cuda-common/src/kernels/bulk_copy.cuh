// Hopper's bulk asynchronous copies (the 1-D form of the tensor memory accelerator): one thread asks
// for a 16-byte-aligned run of global memory to land in shared memory, and an mbarrier counts the
// bytes in; threads wait on the barrier's phase. The copy holds no registers of the threads that
// asked for it, so a warp can keep many bytes in flight while it computes (the streamed GEMV's
// ring, gemv_kernel.cuh). PTX ISA 8.0, sm_90 and later; compiled only where a caller's arch has it.
#pragma once

#include <cstdint>

namespace dense::cuda {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
inline constexpr bool kHasBulkCopy = true;
#else
inline constexpr bool kHasBulkCopy = false;
#endif

__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// A barrier whose phase completes after one arrival (the thread that announces the bytes) and the
// announced bytes.
__device__ __forceinline__ void bulk_barrier_init(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
#endif
}

// After bulk_barrier_init and before the first copy: the initialised barriers visible to the
// async proxy that completes the copies.
__device__ __forceinline__ void bulk_barrier_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// The arrival of this phase, announcing the bytes its copies will deliver.
__device__ __forceinline__ void bulk_barrier_expect(uint64_t* bar, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
#endif
}

// Copies `bytes` (a multiple of 16) from src (16-byte aligned, global) to dst (16-byte aligned,
// shared), counted on bar.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     shared_address(dst)),
                 "l"(src), "r"(bytes), "r"(shared_address(bar))
                 : "memory");
#endif
}

// Waits until bar's phase of this parity has completed (its bytes are in shared memory).
__device__ __forceinline__ void bulk_barrier_wait(uint64_t* bar, uint32_t parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(shared_address(bar)), "r"(parity)
            : "memory");
    } while (done == 0);
#endif
}

}  // namespace dense::cuda
