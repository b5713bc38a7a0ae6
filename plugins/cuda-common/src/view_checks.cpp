#include "view_checks.hpp"

namespace dense::cuda {
namespace {

std::string ne_string(const int64_t* ne) {
    return "{" + std::to_string(ne[0]) + ", " + std::to_string(ne[1]) + ", " + std::to_string(ne[2]) + ", " +
           std::to_string(ne[3]) + "}";
}

}  // namespace

std::string type_label(uint32_t type) {
    const CudaFormat* f = type == DENSE_TYPE_Q8_32 ? &q8_32_format() : find_cuda_format(type);
    return f != nullptr ? std::string(f->name) + " (id " + std::to_string(type) + ")" : "id " + std::to_string(type);
}

std::string check_contiguous(const dense_tensor_view& v, const char* role, const CudaFormat& fmt) {
    const std::string who = std::string(role) + ": ";
    if (v.type != fmt.type) return who + "type is " + type_label(v.type) + ", expected " + type_label(fmt.type);
    if (v.device_kind != DENSE_DEVICE_CUDA)
        return who + "data lives on device kind " + std::to_string(v.device_kind) + ", this pack runs on CUDA devices";
    if (v.data == nullptr) return who + "data pointer is NULL";
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] < 1) return who + "ne = " + ne_string(v.ne) + " has a dimension < 1";
    if (v.ne[0] % fmt.block_elements != 0)
        return who + "ne[0] = " + std::to_string(v.ne[0]) + " is not a multiple of the " + fmt.name + " block size " +
               std::to_string(fmt.block_elements);
    if (v.nb[0] != static_cast<int64_t>(fmt.block_bytes))
        return who + "nb[0] = " + std::to_string(v.nb[0]) + ", expected the " + fmt.name + " block size " +
               std::to_string(fmt.block_bytes) + " bytes";
    int64_t expected = 0;
    if (__builtin_mul_overflow(v.ne[0] / fmt.block_elements, static_cast<int64_t>(fmt.block_bytes), &expected))
        return who + "ne = " + ne_string(v.ne) + " overflows the address space";
    for (int i = 1; i < 4; ++i) {
        if (v.ne[i] != 1 && v.nb[i] != expected)
            return who + "not contiguous: nb[" + std::to_string(i) + "] = " + std::to_string(v.nb[i]) + ", expected " +
                   std::to_string(expected);
        if (__builtin_mul_overflow(expected, v.ne[i], &expected))
            return who + "ne = " + ne_string(v.ne) + " overflows the address space";
    }
    return {};
}

std::string check_shape(const dense_tensor_view& v, const char* role, const std::array<int64_t, 4>& ne) {
    for (std::size_t i = 0; i < 4; ++i)
        if (v.ne[i] != ne[i])
            return std::string(role) + ": ne = " + ne_string(v.ne) + ", expected " + ne_string(ne.data());
    return {};
}

std::string check_same_device(const dense_tensor_view& a, const dense_tensor_view& b) {
    if (a.device_index == b.device_index) return {};
    return "views live on different CUDA devices (" + std::to_string(a.device_index) + " and " +
           std::to_string(b.device_index) + ")";
}

std::string check_disjoint(const dense_tensor_view& dst, const char* dst_role, int64_t dst_bytes,
                           const dense_tensor_view& src, const char* src_role, int64_t src_bytes) {
    const auto d0 = reinterpret_cast<uintptr_t>(dst.data), s0 = reinterpret_cast<uintptr_t>(src.data);
    const uintptr_t d1 = d0 + static_cast<uintptr_t>(dst_bytes), s1 = s0 + static_cast<uintptr_t>(src_bytes);
    if (d0 < s1 && s0 < d1) return std::string(dst_role) + " overlaps " + src_role;
    return {};
}

std::string check_aligned(const dense_tensor_view& v, const char* role, uint32_t alignment) {
    if (reinterpret_cast<uintptr_t>(v.data) % alignment == 0) return {};
    return std::string(role) + ": data pointer is not " + std::to_string(alignment) + "-byte aligned";
}

int64_t element_count(const dense_tensor_view& v) noexcept {
    return v.ne[0] * v.ne[1] * v.ne[2] * v.ne[3];
}

}  // namespace dense::cuda
