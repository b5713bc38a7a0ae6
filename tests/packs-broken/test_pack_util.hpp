// Small pieces the test packs share. Test code only: these packs exist to exercise the loader.
#pragma once

#include <dense/sdk/pack.hpp>

#include <cstdint>
#include <cstring>

namespace test_packs {

// An op body for packs that are never meant to run anything.
inline dense_status run_unsupported(void*, const dense_op_call*) {
    return DENSE_E_UNSUPPORTED;
}

// A dense_op_impl for (op, weight, act, device) with this ABI's header.
inline dense_op_impl make_impl(dense_op_kind op, dense_type_id weight, dense_type_id act, dense_device_kind device,
                               int32_t priority, const char* name) {
    dense_op_impl impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = op;
    impl.weight_type = weight;
    impl.act_type = act;
    impl.device_kind = device;
    impl.priority = priority;
    impl.name = name;
    impl.run = run_unsupported;
    return impl;
}

// A static dense_pack object (test packs keep no state, so release has nothing to free).
inline dense_pack* static_pack(const char* name, const char* version, dense_device_kind kind) {
    static dense_pack pack;
    pack = dense::sdk::make_struct<dense_pack>();
    pack.name = name;
    pack.version = version;
    pack.device_kind = kind;
    return &pack;
}

}  // namespace test_packs
