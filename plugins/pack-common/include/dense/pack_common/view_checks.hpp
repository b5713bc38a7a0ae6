// Checks of the tensor views an op receives (block-format weights, plain F32 / F16 / I32 activation
// views, KV caches, token slices, overlaps), shared by the in-tree packs so that every pack accepts
// and refuses the same calls (the planner has one contract). Each
// check returns "" when the view is acceptable, otherwise one line naming the view role and the
// offending field (it becomes the host log line of a DENSE_E_INVALID_ARGUMENT). Only metadata is
// inspected; data pointers are never dereferenced. A pack that links this library describes itself
// once, by defining pack_views() (cpu-ref: pack/view_checks.cpp; CUDA: act_view_checks.cpp), and
// takes the checks into its own namespace with using-declarations.
#pragma once

#include <dense/abi/dense_abi.h>

#include <array>
#include <cstdint>
#include <string>

namespace dense::pack_common {

// What the checks need to know of the pack that runs them.
struct PackViews {
    dense_device_kind device;                  // where the pack's views must live
    const char* runs_on;                       // for the message: "cpu-ref runs on the CPU"
    std::string (*type_label)(uint32_t type);  // "q4_k (id 12)", "id 99"
    // Bytes of ne0 elements of a non-plain type (a quantized view's row), 0 where unknown: the
    // extent of views in the overlap checks.
    uint64_t (*row_bytes)(uint32_t type, int64_t ne0);
};

// Defined by the pack that links this library (each pack is its own shared object): where its views
// live and how it names types.
const PackViews& pack_views();

// ---- weight views in a block format ---------------------------------------------------------------

// A storage format as the checks need it (each pack has its own format table).
struct BlockFormat {
    uint32_t type;
    const char* name;  // "q4_k"
    uint32_t block_elements;
    uint32_t block_bytes;
};

// `v` lies on the pack's device, has a data pointer (4-byte aligned for F32), type fmt.type, ne[i] >= 1,
// ne[0] a multiple of the block size, and is contiguous (nb[0] = block bytes; every dimension of size
// > 1 packed right after the previous ones, as ggml_is_contiguous; strides of size-1 dimensions are
// irrelevant), with its byte size representable.
std::string check_contiguous(const dense_tensor_view& v, const char* role, const BlockFormat& fmt);

// The same for an entry of a pack's own format table (any struct with type, name, block_elements
// and block_bytes: cpu-ref's FormatKernels, the CUDA packs' CudaFormat).
template <class Format>
std::string check_contiguous(const dense_tensor_view& v, const char* role, const Format& fmt) {
    return check_contiguous(v, role, BlockFormat{fmt.type, fmt.name, fmt.block_elements, fmt.block_bytes});
}

// `v.ne` equals `ne` exactly.
std::string check_shape(const dense_tensor_view& v, const char* role, const std::array<int64_t, 4>& ne);

// Element count of a view already accepted by check_contiguous.
int64_t element_count(const dense_tensor_view& v) noexcept;

// ---- plain element views of the activation ops (F32, F16, I32) -------------------------------------

// Whether a {ne0, ne1} view may have rows further apart than ne0 elements (ops marked "strided").
enum class Rows { Contiguous, Strided };

// Bytes per element of the plain types: F32 4, I32 4, F16 2; 0 for anything else.
int64_t plain_element_bytes(uint32_t type) noexcept;

// "{ne0, ne1, ne2, ne3}" for messages.
std::string ne_string(const dense_tensor_view& v);

// The shape of `v` before its expected shape is known: ne[i] >= 1 and ne[2] = ne[3] = 1.
std::string check_2d(const dense_tensor_view& v, const char* role);

// Token axis (dense_abi.h, ABI 1.10). The shape of a view that may carry T tokens on ne[2]: ne[i] >= 1
// and ne[3] = 1 (T = ne[2]).
std::string check_3d(const dense_tensor_view& v, const char* role);

// `v` lies on the pack's device, has type `type` (a plain type), non-NULL data aligned to the element
// size, ne = {ne0, ne1, 1, 1}, nb[0] = element size, and (when ne1 > 1) nb[1] = ne0 * element size
// (Contiguous) or a multiple of the element size >= that (Strided), with a representable extent.
std::string check_matrix(const dense_tensor_view& v, const char* role, uint32_t type,
                         int64_t ne0, int64_t ne1, Rows rows);

// An I32 {1} view (position, length, row, status word).
std::string check_i32_scalar(const dense_tensor_view& v, const char* role);

// A KV cache: F16 or F32, contiguous {d, heads, n_ctx, 1} on the pack's device, data aligned to the
// element size, byte size representable.
std::string check_cache(const dense_tensor_view& v, const char* role, int64_t d,
                        int64_t heads);

// {ne0, ne1, tokens, 1}: each token's {ne0, ne1} slice passes check_matrix(.., rows), and token t starts
// at byte t * nb[2], a multiple of the element size at or past the end of the slice before (tokens
// never overlap). tokens = 1 is check_matrix itself.
std::string check_token_slices(const dense_tensor_view& v, const char* role, uint32_t type,
                               int64_t ne0, int64_t ne1, int64_t tokens, Rows rows);

// Row stride of a 2-D view accepted by check_matrix, in elements (ne0 when there is a single row).
int64_t row_stride_elements(const dense_tensor_view& v) noexcept;

// Token stride of a view accepted by check_token_slices, in elements (0 for a single token).
int64_t token_stride_elements(const dense_tensor_view& v) noexcept;

// dst and src (both accepted by a check above) touch no common byte. Views are compared by their byte
// extents, which is conservative for interleaved strided views but exact for what the ops do.
std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role,
                           const dense_tensor_view& src, const char* src_role);

// dst is either exactly src (same data, type, shape and strides: an in-place op) or disjoint from it.
std::string check_alias_or_disjoint(const dense_tensor_view& dst, const char* dst_role,
                                    const dense_tensor_view& src, const char* src_role);

// Every destination disjoint from every source and from the other destinations, except the pair
// (alias_dst, alias_src), which may also be the very same view.
std::string check_outputs_apart(const dense_op_call& c, const char* const* src_roles,
                                const char* const* dst_roles, int alias_dst = -1, int alias_src = -1);

}  // namespace dense::pack_common
