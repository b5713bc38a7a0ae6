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
#include <vector>

namespace dense::cpuref::pack {

// `v` lies on the CPU, has a data pointer (4-byte aligned for F32), type fmt.type, ne[i] >= 1, ne[0]
// a multiple of the block size, and is contiguous (nb[0] = block bytes; every dimension of size > 1 packed right after the
// previous ones, as ggml_is_contiguous; strides of size-1 dimensions are irrelevant), with its byte
// size representable.
std::string check_contiguous(const dense_tensor_view& v, const char* role, const FormatKernels& fmt);

// `v.ne` equals `ne` exactly.
std::string check_shape(const dense_tensor_view& v, const char* role, const std::array<int64_t, 4>& ne);

// Element count of a view already accepted by check_contiguous.
int64_t element_count(const dense_tensor_view& v) noexcept;

// "q4_k (id 12)" or "id 99" for messages.
std::string type_label(uint32_t type);

// ---- plain element views of the activation ops (F32, F16, I32) ------------------------------------

// Whether a {ne0, ne1} view may have rows further apart than ne0 elements (ops marked "strided").
enum class Rows { Contiguous, Strided };

// Bytes per element of the plain types: F32 4, I32 4, F16 2; 0 for anything else.
int64_t plain_element_bytes(uint32_t type) noexcept;

// `v` lies on the CPU, has type `type` (a plain type), non-NULL data aligned to the element size,
// ne = {ne0, ne1, 1, 1}, nb[0] = element size, and (when ne1 > 1) nb[1] = ne0 * element size
// (Contiguous) or a multiple of the element size >= that (Strided), with a representable extent.
std::string check_matrix(const dense_tensor_view& v, const char* role, uint32_t type, int64_t ne0, int64_t ne1,
                         Rows rows);

// The shape of `v` before its expected shape is known: ne[i] >= 1 and ne[2] = ne[3] = 1.
std::string check_2d(const dense_tensor_view& v, const char* role);

// An I32 {1} input (position, length, row, status word).
std::string check_i32_scalar(const dense_tensor_view& v, const char* role);

// A KV cache: F16 or F32, contiguous {d, heads, n_ctx} on the CPU, data aligned to the element size.
std::string check_cache(const dense_tensor_view& v, const char* role, int64_t d, int64_t heads);

// Row stride of a 2-D view accepted by check_matrix, in elements (ne0 when there is a single row).
int64_t row_stride_elements(const dense_tensor_view& v) noexcept;

// Token axis (dense_abi.h, ABI 1.10). The shape of a view that may carry T tokens on ne[2]: ne[i] >= 1
// and ne[3] = 1 (T = ne[2]).
std::string check_3d(const dense_tensor_view& v, const char* role);

// {ne0, ne1, tokens, 1}: each token's {ne0, ne1} slice passes check_matrix(.., rows), and token t starts
// at byte t * nb[2], a multiple of the element size at or past the end of the slice before (tokens
// never overlap). tokens = 1 is check_matrix itself.
std::string check_token_slices(const dense_tensor_view& v, const char* role, uint32_t type, int64_t ne0, int64_t ne1,
                               int64_t tokens, Rows rows);

// Token stride of a view accepted by check_token_slices, in elements (0 for a single token).
int64_t token_stride_elements(const dense_tensor_view& v) noexcept;

// The value of an I32 {1} view accepted by check_i32_scalar.
int32_t read_i32(const dense_tensor_view& v) noexcept;

// The ne[0] values of a contiguous I32 {n} view (the positions of a token axis).
std::vector<int32_t> read_i32s(const dense_tensor_view& v);

// ---- overlap between outputs and inputs ---------------------------------------------------------

// a and b (both accepted by a check above) touch no common byte. Views are compared by their byte
// extents, which is conservative for interleaved strided views but exact for what the ops do.
std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role, const dense_tensor_view& src,
                           const char* src_role);

// dst is either exactly src (same data, type, shape and strides: an in-place op) or disjoint from it.
std::string check_alias_or_disjoint(const dense_tensor_view& dst, const char* dst_role, const dense_tensor_view& src,
                                    const char* src_role);

}  // namespace dense::cpuref::pack
