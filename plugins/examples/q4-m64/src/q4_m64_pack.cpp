// libdense-example-q4m64.so: a third-party kernel pack that teaches dense-rt a quantization format it
// does not know, example.q4_m64 (q4_m64_format.hpp), and the CPU ops a model stored in it needs:
// DEQUANTIZE, GEMV_Q against F32 activations (an activation type the runtime already has), and
// EMBED_ROW (for a converted token embedding). The runtime's cpu-ref pack supplies every other op.
//
// What crosses the boundary (docs/writing-a-pack.md): only the C structs of dense_abi.h. The type
// traits, op impls and the pack object are plain data; the name strings are string literals; the
// state the ops need lives in one heap object the pack owns and dense_pack_release deletes.
#include "q4_m64_format.hpp"
#include "q4_m64_ops.hpp"

#include <dense/sdk/pack.hpp>

#include <memory>
#include <string>

#ifndef EXAMPLE_Q4M64_VERSION
#define EXAMPLE_Q4M64_VERSION "0.0.0"
#endif

namespace example_q4m64 {
namespace {

// Everything init creates. `host` stays valid for the life of the process (ABI rule), so the ops
// may log through it whenever they run.
struct PackState {
    dense_pack pack = dense::sdk::make_struct<dense_pack>();
    dense::sdk::Host host{nullptr};
    OpEnv env;
};

using OpFn = std::string (*)(const OpEnv&, const dense_op_call&, bool);

// One C callback pair per op: `supports` runs the checks only, `run` checks and computes. A failed
// check is one host log line plus DENSE_E_INVALID_ARGUMENT; an exception never leaves the pack.
template <OpFn Fn>
uint32_t supports_cb(void* user, const dense_op_call* call) noexcept {
    try {
        return call != nullptr && Fn(static_cast<PackState*>(user)->env, *call, false).empty() ? 1u : 0u;
    } catch (...) {
        return 0;
    }
}

template <OpFn Fn>
dense_status run_cb(void* user, const dense_op_call* call) noexcept {
    auto* state = static_cast<PackState*>(user);
    if (call == nullptr) return DENSE_E_INVALID_ARGUMENT;
    return dense::sdk::guarded(state->host, "example-q4m64", [&]() -> dense_status {
        const std::string err = Fn(state->env, *call, true);
        if (err.empty()) return DENSE_OK;
        state->host.error(err);
        return DENSE_E_INVALID_ARGUMENT;
    });
}

uint64_t gemv_workspace_cb(void*, const dense_op_call* call) noexcept {
    return call != nullptr ? gemv_workspace_bytes(*call) : 0;
}

template <OpFn Fn>
dense_op_impl make_impl(PackState& s, dense_op_kind kind, dense_type_id act, const char* name) {
    auto impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = kind;
    impl.weight_type = s.env.type_id;
    impl.act_type = act;
    impl.device_kind = DENSE_DEVICE_CPU;
    impl.priority = 0;
    impl.name = name;  // a literal: lives as long as the pack is loaded
    impl.user = &s;
    impl.supports = supports_cb<Fn>;
    impl.run = run_cb<Fn>;
    return impl;
}

void to_float(const void* blocks, float* out, int64_t n_elements) {
    dequantize_blocks(static_cast<const Block*>(blocks), out, n_elements / kBlockElements);
}

// Runs on the CPU, anywhere. Low on purpose (the runtime's own CPU pack also scores 1): the score
// ranks packs for a device, and this pack only adds a format, it does not want to be the CPU's pack.
uint32_t score(const dense_hw_desc& hw) {
    return hw.device_kind == DENSE_DEVICE_CPU ? 1u : 0u;
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    auto state = std::make_unique<PackState>();
    state->host = host;

    // 1. The format. The runtime assigns its id (>= DENSE_TYPE_FIRST_RUNTIME) for this process; files
    //    name it by string (dense.type.<file id> = "example.q4_m64"), never by this number.
    auto traits = dense::sdk::make_struct<dense_type_traits>();
    traits.name = kTypeName;
    traits.block_elements = kBlockElements;
    traits.block_bytes = kBlockBytes;
    traits.act_type = DENSE_TYPE_F32;  // what its GEMV pairs with; the graph feeds it F32 activations
    traits.to_float = to_float;
    if (const dense_status s = host.register_type(traits, &state->env.type_id); s != DENSE_OK) {
        host.error(std::string("registering ") + kTypeName + " failed with status " + std::to_string(s));
        return s;
    }

    // 2. The ops on it. A failed init makes the host drop everything this pack registered.
    dense_op_impl impls[] = {
        make_impl<dequantize>(*state, DENSE_OP_DEQUANTIZE, DENSE_TYPE_NONE, "example-q4m64.dequantize"),
        make_impl<gemv_f32>(*state, DENSE_OP_GEMV_Q, DENSE_TYPE_F32, "example-q4m64.gemv_q.f32"),
        make_impl<embed_row>(*state, DENSE_OP_EMBED_ROW, DENSE_TYPE_NONE, "example-q4m64.embed_row"),
    };
    impls[1].workspace_bytes = gemv_workspace_cb;
    for (const auto& impl : impls) {
        if (const dense_status s = host.register_op(impl); s != DENSE_OK) {
            host.error(std::string("registering ") + impl.name + " failed with status " + std::to_string(s));
            return s;
        }
    }

    state->pack.name = "example-q4m64";
    state->pack.version = EXAMPLE_Q4M64_VERSION;
    state->pack.device_kind = DENSE_DEVICE_CPU;
    state->pack.device = nullptr;  // a CPU pack: host memory, no streams
    state->pack.user = state.get();
    host.log(DENSE_LOG_DEBUG, std::string("registered ") + kTypeName + " as type id " + std::to_string(state->env.type_id));
    *out = &state.release()->pack;
    return DENSE_OK;
}

void release(dense_pack* pack) {
    if (pack != nullptr) delete static_cast<PackState*>(pack->user);
}

}  // namespace
}  // namespace example_q4m64

DENSE_PACK_ENTRY_POINTS(example_q4m64::score, example_q4m64::init, example_q4m64::release)
