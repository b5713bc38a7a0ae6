// The pack's A/B switches (DENSE_CUDA_CHAIN, DENSE_CUDA_GEMV_DIRECT, DENSE_CUDA_GEMV_PAIR,
// DENSE_CUDA_GEMM_MMA_PAIRS, DENSE_CUDA_GDN_STEP, DENSE_CUDA_ATTN_PREP, DENSE_CUDA_ATTN_MMA): each is on unless its
// environment variable is exactly "0". Callers that read one per launch cache it themselves where the
// comment there says "read once". A kernel that has not yet passed its GPU tests on a real device, or
// has shown no gain there, would be opt-in (on only when its variable is exactly "1", the pack running
// the tested launches it replaces); none is at the moment (ATTN_PREP's was until session 34), so that
// form is not kept here. DENSE_CUDA_GEMV_BULK (0 / all) is read by gemv_kernel.cuh itself.
#pragma once

#include <cstdlib>
#include <cstring>

namespace dense::cuda {

inline bool env_switch_on(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr || std::strcmp(v, "0") != 0;
}

}  // namespace dense::cuda
