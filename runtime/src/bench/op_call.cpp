#include "bench/op_call.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"

#include <dense/sdk/pack.hpp>

namespace dense::bench {

uint64_t tensor_bytes(dense_type_id type, std::array<int64_t, 4> ne) {
    const TypeInfo* t = global_type_table().find(type);
    if (t == nullptr) throw Error(ErrorKind::Internal, "bench: unknown type id " + std::to_string(type));
    const auto row = TypeTable::row_bytes(*t, ne[0]);
    if (!row) throw Error(ErrorKind::Internal, "bench: " + std::to_string(ne[0]) + " is not a whole number of " + t->name + " blocks");
    return *row * static_cast<uint64_t>(ne[1] * ne[2] * ne[3]);
}

dense_tensor_view contiguous_view(void* data, dense_type_id type, const packs::DeviceInfo& device,
                                  std::array<int64_t, 4> ne) {
    dense_tensor_view v{};
    v.data = data;
    v.type = type;
    v.device_kind = device.kind();
    v.device_index = device.hw.device_index;
    const uint64_t row = tensor_bytes(type, {ne[0], 1, 1, 1});
    const TypeInfo* t = global_type_table().find(type);
    for (int i = 0; i < 4; ++i) v.ne[i] = ne[static_cast<size_t>(i)];
    v.nb[0] = static_cast<int64_t>(t->block_bytes);
    v.nb[1] = static_cast<int64_t>(row);
    v.nb[2] = v.nb[1] * ne[1];
    v.nb[3] = v.nb[2] * ne[2];
    return v;
}

OpCall::OpCall(const packs::PackManager& packs, size_t device, packs::OpKey key, std::vector<dense_tensor_view> src,
               std::vector<dense_tensor_view> dst, const void* params, void* stream)
    : src_(std::move(src)), dst_(std::move(dst)) {
    call_ = dense::sdk::make_struct<dense_op_call>();
    call_.op_kind = key.op;
    call_.n_src = static_cast<uint32_t>(src_.size());
    call_.src = src_.data();
    call_.n_dst = static_cast<uint32_t>(dst_.size());
    call_.dst = dst_.data();
    call_.params = params;
    call_.stream = stream;
    const packs::OpCandidate* c = packs.select_op(key, call_, device);
    if (c == nullptr)
        throw Error(ErrorKind::Pack, "bench: no pack implements " + packs::to_string(key) + " for this call on " +
                                         packs.devices().at(device).id());
    impl_ = c->impl;
    impl_name_ = c->impl_name;
}

uint64_t OpCall::workspace_bytes() const {
    return impl_.workspace_bytes ? impl_.workspace_bytes(impl_.user, &call_) : 0;
}

void OpCall::set_workspace(void* ws, uint64_t bytes) noexcept {
    call_.workspace = ws;
    call_.workspace_bytes = bytes;
}

void OpCall::run() const {
    const dense_status s = impl_.run(impl_.user, &call_);
    if (s != DENSE_OK)
        throw Error(ErrorKind::Pack, "bench: " + impl_name_ + " failed with status " + std::to_string(s) +
                                         " (the pack logged why)");
}

}  // namespace dense::bench
