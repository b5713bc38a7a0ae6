#include "act_view_checks.hpp"

#include "view_checks.hpp"

// The activation ops' views are plain types only: a quantized view has no extent here (0).
static uint64_t no_row_bytes(uint32_t, int64_t) {
    return 0;
}

const dense::pack_common::PackViews& dense::pack_common::pack_views() {
    static const PackViews views{DENSE_DEVICE_CUDA, "this pack runs on CUDA devices", &cuda::type_label, &no_row_bytes};
    return views;
}

namespace dense::cuda::act {

std::string check_one_device(const dense_op_call& c) {
    const dense_tensor_view* first = c.n_src > 0 ? &c.src[0] : &c.dst[0];
    auto differs = [&](const dense_tensor_view& v, const char* what, uint32_t i) -> std::string {
        if (v.device_index == first->device_index) return {};
        return std::string("views live on different CUDA devices (") + what + std::to_string(i) + " on " +
               std::to_string(v.device_index) + ", the first view on " + std::to_string(first->device_index) + ")";
    };
    for (uint32_t i = 0; i < c.n_src; ++i)
        if (std::string e = differs(c.src[i], "src", i); !e.empty()) return e;
    for (uint32_t i = 0; i < c.n_dst; ++i)
        if (std::string e = differs(c.dst[i], "dst", i); !e.empty()) return e;
    return {};
}

std::string check_run_workspace(const dense_op_call& c, uint64_t needed, uint64_t align) {
    if (c.workspace == nullptr || c.workspace_bytes < needed)
        return "workspace is " + std::string(c.workspace == nullptr ? "NULL" : "smaller") + " (" +
               std::to_string(c.workspace_bytes) + " bytes), this call needs " + std::to_string(needed) +
               " bytes (see workspace_bytes())";
    if (reinterpret_cast<uintptr_t>(c.workspace) % align != 0)
        return "workspace is not aligned to " + std::to_string(align) + " bytes";
    return {};
}

}  // namespace dense::cuda::act
