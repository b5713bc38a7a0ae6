// broken-zero: a well-formed CPU pack that scores 0 on every device ("not usable here"). It is
// still initialised, so listings show the op it registers.
#include "test_pack_util.hpp"

namespace {

uint32_t score(const dense_hw_desc&) {
    return 0;
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    const dense_status s = host.register_op(
        test_packs::make_impl(DENSE_OP_SWIGLU, DENSE_TYPE_NONE, DENSE_TYPE_F32, DENSE_DEVICE_CPU, 0, "swiglu_zero"));
    if (s != DENSE_OK) return s;
    *out = test_packs::static_pack("broken-zero", "0.1", DENSE_DEVICE_CPU);
    return DENSE_OK;
}

void release(dense_pack*) {}

}  // namespace

DENSE_PACK_ENTRY_POINTS(score, init, release)
