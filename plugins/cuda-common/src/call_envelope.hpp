// The checks every op family of this pack runs on a dense_op_call before its own: reading the call
// as this pack's ABI knows it, the source/destination counts, and running a list of checks up to the
// first failure. One copy for dequant_ops, gemv_ops, gemm_ops and the activation ops (prepared_op.hpp
// wraps the first three's callbacks).
#pragma once

#include <dense/abi/dense_abi.h>
#include <dense/pack_common/call_checks.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace dense::cuda {

// A refusal: status != DENSE_OK with one line saying why, or DENSE_OK with no error.
struct Verdict {
    dense_status status = DENSE_OK;
    std::string error;
};

inline Verdict invalid(std::string message) {
    return {DENSE_E_INVALID_ARGUMENT, std::move(message)};
}

// *raw read into `out` (fields past its struct_size read as zero): refused when NULL, of another
// ABI major, too short to hold `stream`, or routed to an impl of another kind than `kind`.
Verdict read_call(const dense_op_call* raw, dense_op_kind kind, dense_op_call& out);

using pack_common::check_counts;  // dense/pack_common/call_checks.hpp
using pack_common::first_error;

}  // namespace dense::cuda
