// broken-noexport: exports dense_pack_score and dense_pack_init but no dense_pack_release. The
// host must refuse it naming the missing symbol.
#include "test_pack_util.hpp"

extern "C" DENSE_PACK_EXPORT uint32_t dense_pack_score(const dense_hw_desc* hw) noexcept {
    if (hw == nullptr) return DENSE_ABI_ENCODE_VERSION(DENSE_ABI_MAJOR, DENSE_ABI_MINOR);
    return hw->device_kind == DENSE_DEVICE_CPU ? 5u : 0u;
}

extern "C" DENSE_PACK_EXPORT dense_status dense_pack_init(const dense_host_api*, dense_pack** out) noexcept {
    *out = test_packs::static_pack("broken-noexport", "0.1", DENSE_DEVICE_CPU);
    return DENSE_OK;
}
