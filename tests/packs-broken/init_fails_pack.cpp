// broken-initfail: registers a format and an op, then reports a device error from init. The host
// must refuse it and remove what it registered again.
#include "test_pack_util.hpp"

namespace {

uint32_t score(const dense_hw_desc& hw) {
    return hw.device_kind == DENSE_DEVICE_CPU ? 5u : 0u;
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    dense_type_traits t = dense::sdk::make_struct<dense_type_traits>();
    t.name = "brokentest.initfail_q";
    t.block_elements = 32;
    t.block_bytes = 20;
    t.act_type = DENSE_TYPE_Q8_0;
    dense_type_id id = DENSE_TYPE_NONE;
    if (host.register_type(t, &id) != DENSE_OK) return DENSE_E_INTERNAL;
    host.register_op(test_packs::make_impl(DENSE_OP_GEMV_Q, id, DENSE_TYPE_Q8_0, DENSE_DEVICE_CPU, 0, "gemv_initfail"));
    host.register_op(
        test_packs::make_impl(DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU, 99, "rms_initfail"));
    *out = nullptr;
    return DENSE_E_DEVICE;
}

void release(dense_pack*) {}

}  // namespace

DENSE_PACK_ENTRY_POINTS(score, init, release)
