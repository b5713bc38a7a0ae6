// broken-initthrow: registers an op, then throws from init. The SDK's entry point turns that into
// DENSE_E_INTERNAL plus a log line; the host must refuse the pack and drop the op.
#include "test_pack_util.hpp"

#include <stdexcept>

namespace {

uint32_t score(const dense_hw_desc& hw) {
    return hw.device_kind == DENSE_DEVICE_CPU ? 5u : 0u;
}

dense_status init(dense::sdk::Host host, dense_pack**) {
    host.register_op(test_packs::make_impl(DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CPU, 99,
                                           "rms_initthrow"));
    throw std::runtime_error("deliberate failure inside init");
}

void release(dense_pack*) {}

}  // namespace

DENSE_PACK_ENTRY_POINTS(score, init, release)
