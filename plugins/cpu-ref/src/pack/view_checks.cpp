#include "pack/view_checks.hpp"

#include <cstring>

namespace dense::cpuref::pack {

std::string type_label(uint32_t type) {
    const FormatKernels* f = find_format(type);
    return f != nullptr ? std::string(f->name) + " (id " + std::to_string(type) + ")" : "id " + std::to_string(type);
}

// Bytes of ne0 elements of a block format (the extent of a quantized view), 0 for an unknown type.
static uint64_t row_bytes_of(uint32_t type, int64_t ne0) {
    const FormatKernels* f = find_format(type);
    return f != nullptr ? static_cast<uint64_t>(ne0 / f->block_elements) * f->block_bytes : 0;
}

}  // namespace dense::cpuref::pack

const dense::pack_common::PackViews& dense::pack_common::pack_views() {
    static const PackViews views{DENSE_DEVICE_CPU, "cpu-ref runs on the CPU", &cpuref::pack::type_label,
                                 &cpuref::pack::row_bytes_of};
    return views;
}

namespace dense::cpuref::pack {

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

}  // namespace dense::cpuref::pack
