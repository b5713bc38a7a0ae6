// test-newminor: built "against" ABI 1.(current minor + 1), whose structs have one more field at the
// end. The host must accept it (same major), read only the fields it knows and never past them.
// Written without the SDK macro because that one stamps the host's own minor.
#include "test_pack_util.hpp"

namespace {

constexpr uint16_t kMinor = static_cast<uint16_t>(DENSE_ABI_MINOR + 1);

// The next minor's layouts: the current struct, then appended fields.
struct op_impl_next {
    dense_op_impl base;
    uint64_t future_flags;
};
struct type_traits_next {
    dense_type_traits base;
    uint64_t future_alignment;
};
struct pack_next {
    dense_pack base;
    uint64_t future_capabilities;
};

template <class T>
void stamp(dense_abi_header& hdr) {
    hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR);
    hdr.abi_minor = kMinor;
    hdr.struct_size = static_cast<uint32_t>(sizeof(T));
}

pack_next g_pack{};

}  // namespace

extern "C" DENSE_PACK_EXPORT uint32_t dense_pack_score(const dense_hw_desc* hw) noexcept {
    if (hw == nullptr) return DENSE_ABI_ENCODE_VERSION(DENSE_ABI_MAJOR, kMinor);
    return hw->device_kind == DENSE_DEVICE_CPU ? 2u : 0u;
}

extern "C" DENSE_PACK_EXPORT dense_status dense_pack_init(const dense_host_api* host, dense_pack** out) noexcept {
    if (host == nullptr || out == nullptr || host->hdr.abi_major != DENSE_ABI_MAJOR) return DENSE_E_ABI;
    type_traits_next t{};
    stamp<type_traits_next>(t.base.hdr);
    t.base.name = "newminortest.q4_x";
    t.base.block_elements = 32;
    t.base.block_bytes = 18;
    t.base.act_type = DENSE_TYPE_Q8_0;
    t.future_alignment = 64;
    dense_type_id id = DENSE_TYPE_NONE;
    if (dense_status s = host->register_type(host->host, &t.base, &id); s != DENSE_OK) return s;

    op_impl_next impl{};
    impl.base = test_packs::make_impl(DENSE_OP_GEMV_Q, id, DENSE_TYPE_Q8_0, DENSE_DEVICE_CPU, 3, "gemv_q4_x_next");
    stamp<op_impl_next>(impl.base.hdr);
    impl.future_flags = ~0ull;
    if (dense_status s = host->register_op(host->host, &impl.base); s != DENSE_OK) return s;

    stamp<pack_next>(g_pack.base.hdr);
    g_pack.base.name = "test-newminor";
    g_pack.base.version = "9.9.9";
    g_pack.base.device_kind = DENSE_DEVICE_CPU;
    g_pack.future_capabilities = ~0ull;
    *out = &g_pack.base;
    return DENSE_OK;
}

extern "C" DENSE_PACK_EXPORT void dense_pack_release(dense_pack*) noexcept {}
