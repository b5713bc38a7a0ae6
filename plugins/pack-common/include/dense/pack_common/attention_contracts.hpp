// Parts of the attention ops' call contracts (ROPE, KV_STORE, ATTN_DECODE; dense_abi.h) shared by every
// pack. The view checks of these ops still live in each pack's handler (cpu-ref reads the positions
// and n_kv on the host and checks their range there; a CUDA pack cannot).
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::pack_common {

// ROPE's params: NEOX mode, n_rot even in [2, head_dim], freq_base and freq_scale finite and > 0.
std::string check_rope_params(const dense_rope_params& p, int64_t head_dim);

}  // namespace dense::pack_common
