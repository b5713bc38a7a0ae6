// The pack's one op: GEMV_Q (y = W x, or y += W x with dense_gemv_params.accumulate) of a weight format
// with a rows dot in kernels/row_dots.hpp against a Q8_32 activation. The host
// runs several calls at once on row ranges of a matrix (exec/host_nodes.hpp), so one call is one thread.
#pragma once

#include "kernels/row_dots.hpp"

#include <dense/abi/dense_abi.h>

#include <string>

namespace dense::cpuavx2 {

struct GemvFormat {
    dense_type_id weight;
    const char* op_name;        // "cpu-avx2.gemv_q.q4_k.q8_32": a literal
    int64_t block_elements;     // the weight's block: rows are whole blocks
    int64_t block_bytes;
    RowsDot rows;
};

// Empty when `call` is a GEMV this pack computes for `f`, else why not (for the host's log).
std::string check_gemv(const GemvFormat& f, const dense_op_call& call);
// Checks, then computes; returns check_gemv's reason without computing when it fails.
std::string run_gemv(const GemvFormat& f, const dense_op_call& call);

}  // namespace dense::cpuavx2
