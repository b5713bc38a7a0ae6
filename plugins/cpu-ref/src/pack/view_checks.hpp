// Validation of the tensor views an op receives. Each check returns an empty string when the view is
// acceptable, otherwise one line naming the view role and the offending field (it becomes the host
// log line of a DENSE_E_INVALID_ARGUMENT).
#pragma once

#include "kernels/formats.hpp"

#include <dense/abi/dense_abi.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace dense::cpuref::pack {

// `v` lies on the CPU, has a data pointer, type fmt.type, ne[i] >= 1, ne[0] a multiple of the block
// size, and is contiguous (nb[0] = block bytes; every dimension of size > 1 packed right after the
// previous ones, as ggml_is_contiguous; strides of size-1 dimensions are irrelevant), with its byte
// size representable.
std::string check_contiguous(const dense_tensor_view& v, const char* role, const FormatKernels& fmt);

// `v.ne` equals `ne` exactly.
std::string check_shape(const dense_tensor_view& v, const char* role, const std::array<int64_t, 4>& ne);

// Element count of a view already accepted by check_contiguous.
int64_t element_count(const dense_tensor_view& v) noexcept;

// "q4_k (id 12)" or "id 99" for messages.
std::string type_label(uint32_t type);

}  // namespace dense::cpuref::pack
