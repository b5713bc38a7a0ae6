// The 6-bit scale/min packing shared by Q4_K and Q5_K (spec 3.3): 12 bytes hold eight scales and
// eight mins for the eight 32-element sub-blocks of a super-block.
#pragma once

#include "decode_common.cuh"

#include <cstdint>

namespace dense::cuda::decode {

struct KScaleMin {
    int32_t scale;  // 0..63
    int32_t min;    // 0..63
};

DENSE_DECODE_FN KScaleMin k_scale_min(const uint8_t* s12, int j) {
    if (j < 4) return {static_cast<int32_t>(s12[j] & 63u), static_cast<int32_t>(s12[j + 4] & 63u)};
    return {static_cast<int32_t>((s12[j + 4] & 0x0Fu) | ((s12[j - 4] >> 6) << 4)),
            static_cast<int32_t>((s12[j + 4] >> 4) | ((s12[j] >> 6) << 4))};
}

}  // namespace dense::cuda::decode
