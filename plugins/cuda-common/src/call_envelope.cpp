#include "call_envelope.hpp"

#include <dense/sdk/pack.hpp>

#include <cstddef>

namespace dense::cuda {

Verdict read_call(const dense_op_call* raw, dense_op_kind kind, dense_op_call& out) {
    if (raw == nullptr) return invalid("call is NULL");
    if (raw->hdr.abi_major != DENSE_ABI_MAJOR)
        return {DENSE_E_ABI, "call has ABI major " + std::to_string(raw->hdr.abi_major) + ", this pack speaks " +
                                 std::to_string(DENSE_ABI_MAJOR)};
    if (!dense::sdk::has_bytes(raw, offsetof(dense_op_call, stream) + sizeof(void*)))
        return invalid("call struct_size " + std::to_string(raw->hdr.struct_size) + " is too small");
    out = dense::sdk::read_struct(raw);
    if (out.op_kind != kind)
        return invalid("op kind " + std::to_string(out.op_kind) + " routed to an impl of kind " + std::to_string(kind));
    return {};
}


}  // namespace dense::cuda
