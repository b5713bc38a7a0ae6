#include "dense/pack_common/view_checks.hpp"

namespace dense::pack_common {
namespace {

std::string plain_type_name(uint32_t type) {
    switch (type) {
        case DENSE_TYPE_F32: return "f32";
        case DENSE_TYPE_F16: return "f16";
        case DENSE_TYPE_I32: return "i32";
        default: return pack_views().type_label(type);
    }
}

bool aligned(const void* p, int64_t to) noexcept {
    return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(to) == 0;
}

std::string check_location(const dense_tensor_view& v, const std::string& who) {
    if (v.device_kind != pack_views().device)
        return who + "data lives on device kind " + std::to_string(v.device_kind) + ", " + pack_views().runs_on;
    if (v.data == nullptr) return who + "data pointer is NULL";
    return {};
}

// Bytes from the first to one past the last byte of a validated view.
uint64_t extent_bytes(const dense_tensor_view& v) noexcept {
    const int64_t plain = plain_element_bytes(v.type);
    uint64_t bytes = plain != 0 ? static_cast<uint64_t>(v.ne[0] * plain) : pack_views().row_bytes(v.type, v.ne[0]);
    for (int i = 1; i < 4; ++i) bytes += static_cast<uint64_t>(v.ne[i] - 1) * static_cast<uint64_t>(v.nb[i]);
    return bytes;
}

}  // namespace

int64_t plain_element_bytes(uint32_t type) noexcept {
    switch (type) {
        case DENSE_TYPE_F32:
        case DENSE_TYPE_I32: return 4;
        case DENSE_TYPE_F16: return 2;
        default: return 0;
    }
}

std::string ne_string(const dense_tensor_view& v) {
    return "{" + std::to_string(v.ne[0]) + ", " + std::to_string(v.ne[1]) + ", " + std::to_string(v.ne[2]) + ", " +
           std::to_string(v.ne[3]) + "}";
}

std::string check_contiguous(const dense_tensor_view& v, const char* role, const BlockFormat& fmt) {
    const std::string who = std::string(role) + ": ";
    if (v.type != fmt.type)
        return who + "type is " + pack_views().type_label(v.type) + ", expected " + pack_views().type_label(fmt.type);
    if (std::string err = check_location(v, who); !err.empty()) return err;
    // F32 data is read and written as float (block formats are read byte by byte).
    if (fmt.type == DENSE_TYPE_F32 && !aligned(v.data, 4)) return who + "f32 data pointer is not aligned to 4 bytes";
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] < 1) return who + "ne = " + ne_string(v) + " has a dimension < 1";
    if (v.ne[0] % fmt.block_elements != 0)
        return who + "ne[0] = " + std::to_string(v.ne[0]) + " is not a multiple of the " + fmt.name + " block size " +
               std::to_string(fmt.block_elements);
    if (v.nb[0] != static_cast<int64_t>(fmt.block_bytes))
        return who + "nb[0] = " + std::to_string(v.nb[0]) + ", expected the " + fmt.name + " block size " +
               std::to_string(fmt.block_bytes) + " bytes";
    int64_t expected = 0;
    if (__builtin_mul_overflow(v.ne[0] / fmt.block_elements, static_cast<int64_t>(fmt.block_bytes), &expected))
        return who + "ne = " + ne_string(v) + " overflows the address space";
    for (int i = 1; i < 4; ++i) {
        if (v.ne[i] != 1 && v.nb[i] != expected)
            return who + "not contiguous: nb[" + std::to_string(i) + "] = " + std::to_string(v.nb[i]) + ", expected " +
                   std::to_string(expected);
        if (__builtin_mul_overflow(expected, v.ne[i], &expected))
            return who + "ne = " + ne_string(v) + " overflows the address space";
    }
    return {};
}

std::string check_shape(const dense_tensor_view& v, const char* role, const std::array<int64_t, 4>& ne) {
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] != ne[static_cast<std::size_t>(i)]) {
            dense_tensor_view want = v;
            for (int k = 0; k < 4; ++k) want.ne[k] = ne[static_cast<std::size_t>(k)];
            return std::string(role) + ": ne = " + ne_string(v) + ", expected " + ne_string(want);
        }
    return {};
}

int64_t element_count(const dense_tensor_view& v) noexcept {
    return v.ne[0] * v.ne[1] * v.ne[2] * v.ne[3];
}

std::string check_2d(const dense_tensor_view& v, const char* role) {
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] < 1) return std::string(role) + ": ne = " + ne_string(v) + " has a dimension < 1";
    if (v.ne[2] != 1 || v.ne[3] != 1)
        return std::string(role) + ": ne = " + ne_string(v) + " must be 2-D (ne[2] = ne[3] = 1)";
    return {};
}

std::string check_3d(const dense_tensor_view& v, const char* role) {
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] < 1) return std::string(role) + ": ne = " + ne_string(v) + " has a dimension < 1";
    if (v.ne[3] != 1) return std::string(role) + ": ne = " + ne_string(v) + " must be at most 3-D (ne[3] = 1)";
    return {};
}

std::string check_matrix(const dense_tensor_view& v, const char* role, uint32_t type,
                         int64_t ne0, int64_t ne1, Rows rows) {
    const std::string who = std::string(role) + ": ";
    const int64_t elem = plain_element_bytes(type);
    if (v.type != type) return who + "type is " + pack_views().type_label(v.type) + ", expected " + plain_type_name(type);
    if (std::string err = check_location(v, who); !err.empty()) return err;
    if (!aligned(v.data, elem)) return who + "data pointer is not aligned to " + std::to_string(elem) + " bytes";
    if (std::string err = check_2d(v, role); !err.empty()) return err;
    if (v.ne[0] != ne0 || v.ne[1] != ne1)
        return who + "ne = " + ne_string(v) + ", expected {" + std::to_string(ne0) + ", " + std::to_string(ne1) +
               ", 1, 1}";
    if (v.nb[0] != elem)
        return who + "nb[0] = " + std::to_string(v.nb[0]) + ", expected the element size " + std::to_string(elem);
    int64_t row_bytes = 0;
    if (__builtin_mul_overflow(ne0, elem, &row_bytes)) return who + "ne = " + ne_string(v) + " overflows";
    if (ne1 > 1) {
        if (rows == Rows::Contiguous && v.nb[1] != row_bytes)
            return who + "not contiguous: nb[1] = " + std::to_string(v.nb[1]) + ", expected " +
                   std::to_string(row_bytes);
        if (v.nb[1] < row_bytes || v.nb[1] % elem != 0)
            return who + "row stride nb[1] = " + std::to_string(v.nb[1]) + " must be a multiple of " +
                   std::to_string(elem) + " and at least " + std::to_string(row_bytes);
        int64_t extent = 0;
        if (__builtin_mul_overflow(v.nb[1], ne1, &extent)) return who + "ne/nb overflow the address space";
    }
    return {};
}

std::string check_i32_scalar(const dense_tensor_view& v, const char* role) {
    return check_matrix(v, role, DENSE_TYPE_I32, 1, 1, Rows::Contiguous);
}

std::string check_cache(const dense_tensor_view& v, const char* role, int64_t d, int64_t heads) {
    if (v.type != DENSE_TYPE_F16 && v.type != DENSE_TYPE_F32)
        return std::string(role) + ": type is " + pack_views().type_label(v.type) + ", a KV cache is f16 or f32";
    const bool f16 = v.type == DENSE_TYPE_F16;
    const BlockFormat element{v.type, f16 ? "f16" : "f32", 1, f16 ? 2u : 4u};
    if (std::string err = check_contiguous(v, role, element); !err.empty()) return err;
    if (!aligned(v.data, plain_element_bytes(v.type)))
        return std::string(role) + ": data pointer is not aligned to its element size";
    return check_shape(v, role, {d, heads, v.ne[2], 1});
}

std::string check_token_slices(const dense_tensor_view& v, const char* role, uint32_t type,
                               int64_t ne0, int64_t ne1, int64_t tokens, Rows rows) {
    const std::string who = std::string(role) + ": ";
    if (std::string err = check_3d(v, role); !err.empty()) return err;
    if (v.ne[2] != tokens)
        return who + "ne = " + ne_string(v) + ", expected " + std::to_string(tokens) + " tokens on ne[2]";
    dense_tensor_view slice = v;
    slice.ne[2] = 1;
    if (std::string err = check_matrix(slice, role, type, ne0, ne1, rows); !err.empty()) return err;
    if (tokens == 1) return {};
    const int64_t elem = plain_element_bytes(type);
    const int64_t slice_bytes = (ne1 - 1) * (ne1 > 1 ? v.nb[1] : 0) + ne0 * elem;  // check_matrix bounded both
    if (v.nb[2] % elem != 0 || v.nb[2] < slice_bytes)
        return who + "token stride nb[2] = " + std::to_string(v.nb[2]) + " must be a multiple of " +
               std::to_string(elem) + " and at least the " + std::to_string(slice_bytes) + " bytes of one token";
    int64_t extent = 0;
    if (__builtin_mul_overflow(v.nb[2], tokens, &extent)) return who + "ne/nb overflow the address space";
    return {};
}

int64_t row_stride_elements(const dense_tensor_view& v) noexcept {
    return v.ne[1] > 1 ? v.nb[1] / plain_element_bytes(v.type) : v.ne[0];
}

int64_t token_stride_elements(const dense_tensor_view& v) noexcept {
    return v.ne[2] > 1 ? v.nb[2] / plain_element_bytes(v.type) : 0;
}

std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role,
                           const dense_tensor_view& src, const char* src_role) {
    const auto d0 = reinterpret_cast<uintptr_t>(dst.data), s0 = reinterpret_cast<uintptr_t>(src.data);
    const uintptr_t d1 = d0 + extent_bytes(dst), s1 = s0 + extent_bytes(src);
    if (d0 < s1 && s0 < d1)
        return std::string(dst_role) + " overlaps " + src_role + " (this op does not work in place there)";
    return {};
}

std::string check_alias_or_disjoint(const dense_tensor_view& dst, const char* dst_role,
                                    const dense_tensor_view& src, const char* src_role) {
    bool same = dst.data == src.data && dst.type == src.type;
    for (int i = 0; i < 4 && same; ++i) same = dst.ne[i] == src.ne[i] && (dst.ne[i] == 1 || dst.nb[i] == src.nb[i]);
    if (same) return {};
    if (check_disjoint(dst, dst_role, src, src_role).empty()) return {};
    return std::string(dst_role) + " partly overlaps " + src_role + ": in place, it must be the very same view";
}

std::string check_outputs_apart(const dense_op_call& c, const char* const* src_roles,
                                const char* const* dst_roles, int alias_dst, int alias_src) {
    for (uint32_t i = 0; i < c.n_dst; ++i) {
        for (uint32_t j = 0; j < c.n_src; ++j) {
            const bool may_alias = static_cast<int>(i) == alias_dst && static_cast<int>(j) == alias_src;
            std::string e = may_alias ? check_alias_or_disjoint(c.dst[i], dst_roles[i], c.src[j], src_roles[j])
                                      : check_disjoint(c.dst[i], dst_roles[i], c.src[j], src_roles[j]);
            if (!e.empty()) return e;
        }
        for (uint32_t j = 0; j < i; ++j)
            if (std::string e = check_disjoint(c.dst[i], dst_roles[i], c.dst[j], dst_roles[j]); !e.empty())
                return e;
    }
    return {};
}

}  // namespace dense::pack_common
