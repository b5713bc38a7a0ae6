// broken-abi2: claims to be built for ABI 2.0. The host must refuse it from score(NULL) alone,
// before it calls anything else (init would succeed, which is exactly what must not matter).
#include "test_pack_util.hpp"

extern "C" DENSE_PACK_EXPORT uint32_t dense_pack_score(const dense_hw_desc* hw) noexcept {
    if (hw == nullptr) return DENSE_ABI_ENCODE_VERSION(2, 0);
    return 100;  // would win everywhere if the host did not check the version
}

extern "C" DENSE_PACK_EXPORT dense_status dense_pack_init(const dense_host_api*, dense_pack** out) noexcept {
    *out = test_packs::static_pack("broken-abi2", "2.0.0", DENSE_DEVICE_CPU);
    return DENSE_OK;
}

extern "C" DENSE_PACK_EXPORT void dense_pack_release(dense_pack*) noexcept {}
