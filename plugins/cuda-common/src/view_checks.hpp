// Validation of the tensor views a CUDA op receives. Same rules as cpu-ref's, so the planner has one
// contract: each check returns "" when the view is acceptable, otherwise one line naming the view
// role and the offending field (it becomes the host log line of a DENSE_E_INVALID_ARGUMENT).
// Only the view metadata is inspected; the data pointers are never dereferenced on the host.
#pragma once

#include "formats.hpp"

#include <dense/abi/dense_abi.h>

#include <array>
#include <cstdint>
#include <string>

namespace dense::cuda {

// `v` lies on a CUDA device, has a data pointer, type fmt.type, ne[i] >= 1, ne[0] a multiple of the
// block size and is contiguous (nb[0] = block bytes; each dimension of size > 1 packed right after
// the previous ones, as ggml_is_contiguous; strides of size-1 dimensions are irrelevant), with a
// byte size that fits in int64.
std::string check_contiguous(const dense_tensor_view& v, const char* role, const CudaFormat& fmt);

// v.ne equals `ne` exactly.
std::string check_shape(const dense_tensor_view& v, const char* role, const std::array<int64_t, 4>& ne);

// All views of one call on the same CUDA device.
std::string check_same_device(const dense_tensor_view& a, const dense_tensor_view& b);

// The byte ranges [data, data + bytes) of the two views do not overlap.
std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role, int64_t dst_bytes,
                           const dense_tensor_view& src, const char* src_role, int64_t src_bytes);

// v.data is a multiple of `alignment` (a power of two).
std::string check_aligned(const dense_tensor_view& v, const char* role, uint32_t alignment);

// Element count of a view accepted by check_contiguous.
int64_t element_count(const dense_tensor_view& v) noexcept;

// "q4_k (id 12)" or "id 99".
std::string type_label(uint32_t type);

}  // namespace dense::cuda
