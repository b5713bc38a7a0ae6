#include "pack/view_checks.hpp"

#include <cstring>

namespace dense::cpuref::pack {

std::string type_label(uint32_t type) {
    const FormatKernels* f = find_format(type);
    return f != nullptr ? std::string(f->name) + " (id " + std::to_string(type) + ")" : "id " + std::to_string(type);
}

static std::string ne_string(const dense_tensor_view& v) {
    return "{" + std::to_string(v.ne[0]) + ", " + std::to_string(v.ne[1]) + ", " + std::to_string(v.ne[2]) + ", " +
           std::to_string(v.ne[3]) + "}";
}

std::string check_contiguous(const dense_tensor_view& v, const char* role, const FormatKernels& fmt) {
    const std::string who = std::string(role) + ": ";
    if (v.type != fmt.type) return who + "type is " + type_label(v.type) + ", expected " + type_label(fmt.type);
    if (v.device_kind != DENSE_DEVICE_CPU)
        return who + "data lives on device kind " + std::to_string(v.device_kind) + ", cpu-ref runs on the CPU";
    if (v.data == nullptr) return who + "data pointer is NULL";
    // F32 data is read and written as float (block formats are read byte by byte).
    if (fmt.type == DENSE_TYPE_F32 && reinterpret_cast<uintptr_t>(v.data) % alignof(float) != 0)
        return who + "f32 data pointer is not aligned to 4 bytes";
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

}  // namespace dense::cpuref::pack

namespace dense::cpuref::pack {
namespace {

std::string plain_type_name(uint32_t type) {
    switch (type) {
        case DENSE_TYPE_F32: return "f32";
        case DENSE_TYPE_F16: return "f16";
        case DENSE_TYPE_I32: return "i32";
        default: return type_label(type);
    }
}

// Bytes from the first to one past the last byte of a validated view.
uint64_t extent_bytes(const dense_tensor_view& v) noexcept {
    uint64_t bytes;
    const int64_t plain = plain_element_bytes(v.type);
    if (plain != 0) {
        bytes = static_cast<uint64_t>(v.ne[0] * plain);
    } else {
        const FormatKernels* f = find_format(v.type);
        bytes = f != nullptr ? static_cast<uint64_t>(v.ne[0] / f->block_elements) * f->block_bytes : 0;
    }
    for (int i = 1; i < 4; ++i) bytes += static_cast<uint64_t>(v.ne[i] - 1) * static_cast<uint64_t>(v.nb[i]);
    return bytes;
}

bool aligned(const void* p, int64_t to) noexcept {
    return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(to) == 0;
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

std::string check_2d(const dense_tensor_view& v, const char* role) {
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] < 1) return std::string(role) + ": ne = " + ne_string(v) + " has a dimension < 1";
    if (v.ne[2] != 1 || v.ne[3] != 1)
        return std::string(role) + ": ne = " + ne_string(v) + " must be 2-D (ne[2] = ne[3] = 1)";
    return {};
}

std::string check_matrix(const dense_tensor_view& v, const char* role, uint32_t type, int64_t ne0, int64_t ne1,
                         Rows rows) {
    const std::string who = std::string(role) + ": ";
    const int64_t elem = plain_element_bytes(type);
    if (v.type != type) return who + "type is " + type_label(v.type) + ", expected " + plain_type_name(type);
    if (v.device_kind != DENSE_DEVICE_CPU)
        return who + "data lives on device kind " + std::to_string(v.device_kind) + ", cpu-ref runs on the CPU";
    if (v.data == nullptr) return who + "data pointer is NULL";
    if (!aligned(v.data, elem)) return who + "data pointer is not aligned to " + std::to_string(elem) + " bytes";
    if (std::string err = check_2d(v, role); !err.empty()) return err;
    if (std::string err = check_shape(v, role, {ne0, ne1, 1, 1}); !err.empty()) return err;
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
        return std::string(role) + ": type is " + type_label(v.type) + ", a KV cache is f16 or f32";
    if (std::string err = check_contiguous(v, role, format(v.type)); !err.empty()) return err;
    if (!aligned(v.data, plain_element_bytes(v.type)))
        return std::string(role) + ": data pointer is not aligned to its element size";
    return check_shape(v, role, {d, heads, v.ne[2], 1});
}

std::string check_3d(const dense_tensor_view& v, const char* role) {
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] < 1) return std::string(role) + ": ne = " + ne_string(v) + " has a dimension < 1";
    if (v.ne[3] != 1) return std::string(role) + ": ne = " + ne_string(v) + " must be at most 3-D (ne[3] = 1)";
    return {};
}

std::string check_token_slices(const dense_tensor_view& v, const char* role, uint32_t type, int64_t ne0, int64_t ne1,
                               int64_t tokens, Rows rows) {
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

int64_t token_stride_elements(const dense_tensor_view& v) noexcept {
    return v.ne[2] > 1 ? v.nb[2] / plain_element_bytes(v.type) : 0;
}

int64_t row_stride_elements(const dense_tensor_view& v) noexcept {
    return v.ne[1] > 1 ? v.nb[1] / plain_element_bytes(v.type) : v.ne[0];
}

int32_t read_i32(const dense_tensor_view& v) noexcept {
    int32_t value;
    std::memcpy(&value, v.data, sizeof value);
    return value;
}

std::vector<int32_t> read_i32s(const dense_tensor_view& v) {
    std::vector<int32_t> values(static_cast<size_t>(v.ne[0]));
    std::memcpy(values.data(), v.data, values.size() * sizeof(int32_t));
    return values;
}

std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role, const dense_tensor_view& src,
                           const char* src_role) {
    const auto d0 = reinterpret_cast<uintptr_t>(dst.data), s0 = reinterpret_cast<uintptr_t>(src.data);
    const uintptr_t d1 = d0 + extent_bytes(dst), s1 = s0 + extent_bytes(src);
    if (d0 < s1 && s0 < d1)
        return std::string(dst_role) + " overlaps " + src_role + " (this op does not work in place there)";
    return {};
}

std::string check_alias_or_disjoint(const dense_tensor_view& dst, const char* dst_role, const dense_tensor_view& src,
                                    const char* src_role) {
    bool same = dst.data == src.data && dst.type == src.type;
    for (int i = 0; i < 4 && same; ++i) same = dst.ne[i] == src.ne[i] && (dst.ne[i] == 1 || dst.nb[i] == src.nb[i]);
    if (same) return {};
    const std::string err = check_disjoint(dst, dst_role, src, src_role);
    if (err.empty()) return {};
    return std::string(dst_role) + " partly overlaps " + src_role + ": in place, it must be the very same view";
}

}  // namespace dense::cpuref::pack
