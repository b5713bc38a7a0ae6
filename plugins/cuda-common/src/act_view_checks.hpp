// Validation of the plain element views (F32, F16, I32) the activation ops receive: pack-common's rules
// (dense/pack_common/view_checks.hpp), the same as cpu-ref's, so the planner has one contract, for
// views on a CUDA device (this pack's pack_views(), act_view_checks.cpp). Each check returns "" when the view is acceptable, otherwise one line
// naming the view role and the offending field. Only metadata is inspected; the data pointers are
// never dereferenced.
#pragma once

#include <dense/abi/dense_abi.h>
#include <dense/pack_common/view_checks.hpp>

#include <cstdint>
#include <string>

namespace dense::cuda::act {

using pack_common::check_2d;
using pack_common::check_3d;
using pack_common::check_alias_or_disjoint;
using pack_common::check_cache;
using pack_common::check_disjoint;
using pack_common::check_i32_scalar;
using pack_common::check_matrix;
using pack_common::check_outputs_apart;
using pack_common::check_token_slices;
using pack_common::plain_element_bytes;
using pack_common::row_stride_elements;
using pack_common::Rows;
using pack_common::token_stride_elements;

// Every view of the call on one CUDA device (the first view's).
std::string check_one_device(const dense_op_call& c);

// At run time, the op workspace the host passed: at least `needed` bytes (what workspace_bytes()
// reported) and `align`-byte aligned.
std::string check_run_workspace(const dense_op_call& c, uint64_t needed, uint64_t align);

}  // namespace dense::cuda::act
