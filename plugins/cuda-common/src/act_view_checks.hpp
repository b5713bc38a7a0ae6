// Validation of the plain element views (F32, F16, I32) the activation ops receive: the same rules as
// cpu-ref's pack/view_checks.hpp, so the planner has one contract, except that the data must live on a
// CUDA device. Each check returns "" when the view is acceptable, otherwise one line naming the view
// role and the offending field. Only metadata is inspected; the data pointers are never dereferenced.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::cuda::act {

// Whether a {ne0, ne1} view may have rows further apart than ne0 elements (ops marked "strided").
enum class Rows { Contiguous, Strided };

// Bytes per element of the plain types: F32 4, I32 4, F16 2; 0 for anything else.
int64_t plain_element_bytes(uint32_t type) noexcept;

// The shape of `v` before its expected shape is known: ne[i] >= 1 and ne[2] = ne[3] = 1.
std::string check_2d(const dense_tensor_view& v, const char* role);

// `v` lies on a CUDA device, has type `type` (a plain type), non-NULL data aligned to the element size,
// ne = {ne0, ne1, 1, 1}, nb[0] = element size, and (when ne1 > 1) nb[1] = ne0 * element size
// (Contiguous) or a multiple of the element size >= that (Strided), with a representable extent.
std::string check_matrix(const dense_tensor_view& v, const char* role, uint32_t type, int64_t ne0, int64_t ne1,
                         Rows rows);

// An I32 {1} input or output (position, length, status word).
std::string check_i32_scalar(const dense_tensor_view& v, const char* role);

// A KV cache: F16 or F32, contiguous {d, heads, n_ctx, 1} on a CUDA device, data aligned to the element
// size, byte size representable.
std::string check_cache(const dense_tensor_view& v, const char* role, int64_t d, int64_t heads);

// Every view of the call on one CUDA device (the first view's).
std::string check_one_device(const dense_op_call& c);

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

// a and b (both accepted by a check above) touch no common byte (compared by byte extents: conservative
// for interleaved strided views, exact for what the ops do).
std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role, const dense_tensor_view& src,
                           const char* src_role);

// dst is either exactly src (same data, type, shape and strides: an in-place op) or disjoint from it.
std::string check_alias_or_disjoint(const dense_tensor_view& dst, const char* dst_role, const dense_tensor_view& src,
                                    const char* src_role);

// Every destination disjoint from every source and from the other destinations, except the pair
// (alias_dst, alias_src), which may also be the very same view.
std::string check_outputs_apart(const dense_op_call& c, const char* const* src_roles, const char* const* dst_roles,
                                int alias_dst = -1, int alias_src = -1);

}  // namespace dense::cuda::act
