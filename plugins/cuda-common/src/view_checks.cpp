#include "view_checks.hpp"

namespace dense::cuda {

std::string type_label(uint32_t type) {
    const CudaFormat* f = type == DENSE_TYPE_Q8_32 ? &q8_32_format() : find_cuda_format(type);
    return f != nullptr ? std::string(f->name) + " (id " + std::to_string(type) + ")" : "id " + std::to_string(type);
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

}  // namespace dense::cuda
