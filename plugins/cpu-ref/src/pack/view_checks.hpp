// Validation of the tensor views an op receives. Each check returns an empty string when the view is
// acceptable, otherwise one line naming the view role and the offending field (it becomes the host
// log line of a DENSE_E_INVALID_ARGUMENT).
#pragma once

#include "kernels/formats.hpp"

#include <dense/abi/dense_abi.h>
#include <dense/pack_common/view_checks.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dense::cpuref::pack {

using pack_common::check_contiguous;  // dense/pack_common/view_checks.hpp
using pack_common::check_shape;
using pack_common::element_count;

// "q4_k (id 12)" or "id 99" for messages.
std::string type_label(uint32_t type);

// ---- plain element views of the activation ops (F32, F16, I32) ------------------------------------
// pack-common's checks (dense/pack_common/view_checks.hpp: one contract for every pack), for views on
// the CPU (cpu-ref's pack_views(), view_checks.cpp).

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

// The value of an I32 {1} view accepted by check_i32_scalar.
int32_t read_i32(const dense_tensor_view& v) noexcept;

// The ne[0] values of a contiguous I32 {n} view (the positions of a token axis).
std::vector<int32_t> read_i32s(const dense_tensor_view& v);

}  // namespace dense::cpuref::pack
