// The call contracts of the norms (RMS_NORM, L2_NORM, GATED_RMS_NORM; dense_abi.h), one for every
// pack, as gdn_contracts.hpp and attention_contracts.hpp: each view check returns "" with the call's
// shape filled in, or the first thing wrong with the call (one line naming the view). They assume the
// call has the op's counts of sources and destinations (each pack checks those first). The params are
// read separately (check_norm_params) because a CUDA pack checks its fused quantized copy, when the
// call has one, between the views and the params.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::pack_common {

struct NormCall {
    int64_t n = 0, rows = 0, tokens = 1;
};

// RMS_NORM: src0 x {n, rows} F32 (strided rows), src1 weight {n}; dst {n, rows} (strided rows), x
// itself or apart from it, apart from the weight.
std::string check_rms_norm_views(const dense_op_call& c, NormCall& out);

// L2_NORM: src0 x {n, rows, T} F32 (strided rows; the token axis, ABI 1.10); dst like x, x itself or
// apart from it.
std::string check_l2_norm_views(const dense_op_call& c, NormCall& out);

// GATED_RMS_NORM: src0 x and src1 z {n, rows} F32 (contiguous), src2 weight {n}; dst {n, rows}
// (contiguous), apart from every source.
std::string check_gated_rms_norm_views(const dense_op_call& c, NormCall& out);

// dense_norm_params read from the call; eps finite and >= 0.
std::string check_norm_params(const dense_op_call& c, dense_norm_params& out);

}  // namespace dense::pack_common
