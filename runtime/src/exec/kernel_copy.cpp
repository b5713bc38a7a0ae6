#include "exec/kernel_copy.hpp"

#include "core/error.hpp"

#include <dense/sdk/pack.hpp>

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string>

namespace dense::exec {

namespace {

dense_tensor_view f32_view(void* data, uint64_t bytes, uint32_t device_index) {
    dense_tensor_view v{};
    v.data = data;
    v.type = DENSE_TYPE_F32;
    v.device_kind = DENSE_DEVICE_CUDA;
    v.device_index = device_index;
    v.ne[0] = static_cast<int64_t>(bytes / 4);
    v.ne[1] = v.ne[2] = v.ne[3] = 1;
    v.nb[0] = 4;
    v.nb[1] = v.nb[2] = v.nb[3] = static_cast<int64_t>(bytes);
    return v;
}

dense_op_call copy_call(const dense_tensor_view* src, const dense_tensor_view* dst, void* stream) {
    auto c = sdk::make_struct<dense_op_call>();
    c.op_kind = DENSE_OP_DEQUANTIZE;
    c.n_src = 1;
    c.src = src;
    c.n_dst = 1;
    c.dst = dst;
    c.stream = stream;
    return c;
}

}  // namespace

const packs::OpCandidate* KernelCopy::find_op(const packs::PackManager& packs, size_t device) {
    const auto& d = packs.devices().at(device);
    if (d.kind() != DENSE_DEVICE_CUDA) return nullptr;
    // A representative call for the pack's supports(): 1 KiB on both sides (nothing runs).
    static float probe[256];
    const dense_tensor_view src = f32_view(probe, sizeof probe, d.hw.device_index);
    const dense_tensor_view dst = f32_view(probe, sizeof probe, d.hw.device_index);
    const dense_op_call call = copy_call(&src, &dst, nullptr);
    return packs.select_op({DENSE_OP_DEQUANTIZE, DENSE_TYPE_F32, DENSE_TYPE_NONE, DENSE_DEVICE_CUDA}, call, device);
}

std::unique_ptr<KernelCopy> KernelCopy::make(const packs::PackManager& packs, size_t device, DeviceMemory& memory) {
    if (const char* v = std::getenv("DENSE_ROW_SPLIT_COPY"); v != nullptr && std::string(v) == "engine") return nullptr;
    if (memory.kind() != DENSE_DEVICE_CUDA || !memory.can_map_host()) return nullptr;
    const packs::OpCandidate* op = find_op(packs, device);
    if (op == nullptr) return nullptr;
    spdlog::info("row split: activations out and CPU rows back cross by kernel ({} from pack {}) over mapped host memory",
                 op->impl_name, op->pack);
    return std::unique_ptr<KernelCopy>(new KernelCopy(*op, memory, packs.devices().at(device).hw.device_index));
}

void KernelCopy::copy(void* dst, const void* src, uint64_t bytes) const {
    if (bytes == 0) return;
    if (bytes % 4 != 0) throw Error(ErrorKind::Internal, "kernel copy of " + std::to_string(bytes) + " bytes (not whole floats)");
    const dense_tensor_view s = f32_view(const_cast<void*>(src), bytes, device_index_), d = f32_view(dst, bytes, device_index_);
    const dense_op_call call = copy_call(&s, &d, memory_.stream());
    const dense_status st = op_.impl.run(op_.impl.user, &call);
    if (st != DENSE_OK)
        throw Error(ErrorKind::Pack, "the row split's kernel copy (" + op_.impl_name + " from pack " + op_.pack +
                                         ") failed with status " + std::to_string(st));
}

}  // namespace dense::exec
