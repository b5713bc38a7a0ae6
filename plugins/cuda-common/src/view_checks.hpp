// Validation of the tensor views a CUDA op receives: pack-common's rules (the same as cpu-ref's), so the
// planner has one contract: each check returns "" when the view is acceptable, otherwise one line naming the view
// role and the offending field (it becomes the host log line of a DENSE_E_INVALID_ARGUMENT).
// Only the view metadata is inspected; the data pointers are never dereferenced on the host.
#pragma once

#include "formats.hpp"

#include <dense/abi/dense_abi.h>
#include <dense/pack_common/view_checks.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace dense::cuda {

using pack_common::check_contiguous;  // dense/pack_common/view_checks.hpp
using pack_common::check_shape;
using pack_common::element_count;

// All views of one call on the same CUDA device.
std::string check_same_device(const dense_tensor_view& a, const dense_tensor_view& b);

// The byte ranges [data, data + bytes) of the two views do not overlap.
std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role, int64_t dst_bytes,
                           const dense_tensor_view& src, const char* src_role, int64_t src_bytes);

// v.data is a multiple of `alignment` (a power of two).
std::string check_aligned(const dense_tensor_view& v, const char* role, uint32_t alignment);

// "q4_k (id 12)" or "id 99".
std::string type_label(uint32_t type);

}  // namespace dense::cuda
