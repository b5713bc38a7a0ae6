#include "dense/pack_common/attention_contracts.hpp"

#include <cmath>

namespace dense::pack_common {

std::string check_rope_params(const dense_rope_params& p, int64_t head_dim) {
    if (p.mode != DENSE_ROPE_NEOX)
        return "params mode = " + std::to_string(p.mode) + ", only DENSE_ROPE_NEOX (" +
               std::to_string(DENSE_ROPE_NEOX) + ") exists";
    if (p.n_rot < 2 || p.n_rot % 2 != 0 || p.n_rot > head_dim)
        return "params n_rot = " + std::to_string(p.n_rot) + " must be even and in [2, head_dim = " +
               std::to_string(head_dim) + "]";
    if (!std::isfinite(p.freq_base) || p.freq_base <= 0.0f)
        return "params freq_base = " + std::to_string(p.freq_base) + " must be finite and > 0";
    if (!std::isfinite(p.freq_scale) || p.freq_scale <= 0.0f)
        return "params freq_scale = " + std::to_string(p.freq_scale) + " must be finite and > 0";
    return {};
}

}  // namespace dense::pack_common
