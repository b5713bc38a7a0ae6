// The pack's A/B switches (DENSE_CUDA_CHAIN, DENSE_CUDA_GEMV_DIRECT, DENSE_CUDA_GEMV_PAIR,
// DENSE_CUDA_GEMM_MMA_PAIRS, DENSE_CUDA_GDN_STEP, DENSE_CUDA_ATTN_PREP): each is on unless its
// environment variable is exactly "0". Callers that read one per launch cache it themselves where the
// comment there says "read once". Kernels that have not yet passed their GPU tests on a real device, or
// have shown no gain there, are opt-in (env_switch_opt_in: on only when the variable is exactly "1"; none
// at the moment), and the pack runs the tested launches they replace. DENSE_CUDA_GEMV_BULK (0 / all) is read by
// gemv_kernel.cuh itself.
#pragma once

#include <cstdlib>
#include <cstring>

namespace dense::cuda {

inline bool env_switch_on(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr || std::strcmp(v, "0") != 0;
}

inline bool env_switch_opt_in(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace dense::cuda
