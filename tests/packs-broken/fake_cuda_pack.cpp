// cuda-fake90 / cuda-fake120: CUDA packs without any CUDA code, scoring exactly like the real
// cuda-sm90 / cuda-sm120 packs will (exact arch 100, same major newer minor 60, PTX JIT to a newer
// major 20, else 0), so pack selection can be tested on DENSE_FAKE_DEVICES on any machine.
// Their init needs no GPU, as the real packs' must not.
#include "test_pack_util.hpp"

#ifndef FAKE_ARCH_MAJOR
#error "FAKE_ARCH_MAJOR / FAKE_ARCH_MINOR / FAKE_PACK_NAME come from tests/packs-broken/CMakeLists.txt"
#endif

namespace {

uint32_t score(const dense_hw_desc& hw) {
    if (hw.device_kind != DENSE_DEVICE_CUDA) return 0;
    if (hw.cuda_cc_major == FAKE_ARCH_MAJOR && hw.cuda_cc_minor == FAKE_ARCH_MINOR) return 100;
    if (hw.cuda_cc_major == FAKE_ARCH_MAJOR && hw.cuda_cc_minor > FAKE_ARCH_MINOR) return 60;
    if (hw.cuda_cc_major > FAKE_ARCH_MAJOR) return 20;
    return 0;
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    const dense_op_impl impls[] = {
        test_packs::make_impl(DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_1, DENSE_DEVICE_CUDA, 0, "gemv_q4_k"),
        test_packs::make_impl(DENSE_OP_GEMV_Q, DENSE_TYPE_Q6_K, DENSE_TYPE_Q8_1, DENSE_DEVICE_CUDA, 0, "gemv_q6_k"),
        test_packs::make_impl(DENSE_OP_RMS_NORM, DENSE_TYPE_F32, DENSE_TYPE_F32, DENSE_DEVICE_CUDA, 0, "rms_norm"),
    };
    for (const auto& impl : impls)
        if (const dense_status s = host.register_op(impl); s != DENSE_OK) return s;
    *out = test_packs::static_pack(FAKE_PACK_NAME, "0.0.1-fake", DENSE_DEVICE_CUDA);
    return DENSE_OK;
}

void release(dense_pack*) {}

}  // namespace

DENSE_PACK_ENTRY_POINTS(score, init, release)
