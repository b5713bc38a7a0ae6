// broken-packmajor / broken-packsize: init succeeds but hands back a dense_pack the host cannot
// read: one of another ABI major (BAD_PACK_MAJOR) or one shorter than ABI 1.0 (BAD_PACK_SIZE).
// Both register an op first, which the host must drop again.
#include "test_pack_util.hpp"

namespace {

uint32_t score(const dense_hw_desc& hw) {
    return hw.device_kind == DENSE_DEVICE_CPU ? 5u : 0u;
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    host.register_op(
        test_packs::make_impl(DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU, 99, "rms_badpack"));
    dense_pack* p = test_packs::static_pack("broken-badpack", "0.1", DENSE_DEVICE_CPU);
#ifdef BAD_PACK_MAJOR
    p->hdr.abi_major = 2;
#endif
#ifdef BAD_PACK_SIZE
    p->hdr.struct_size = 16;
#endif
    *out = p;
    return DENSE_OK;
}

void release(dense_pack*) {}  // the host hands a rejected object back here; it is static

}  // namespace

DENSE_PACK_ENTRY_POINTS(score, init, release)
