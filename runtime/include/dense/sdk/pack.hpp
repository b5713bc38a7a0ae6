// Header-only C++20 helpers for kernel-pack authors, on top of the C ABI in dense/abi/dense_abi.h.
//
// A pack written with this header:
//   static uint32_t my_score(const dense_hw_desc& hw) { ... }
//   static dense_status my_init(dense::sdk::Host host, dense_pack** out) { ... }
//   static void my_release(dense_pack* p) { ... }
//   DENSE_PACK_ENTRY_POINTS(my_score, my_init, my_release)
//
// The macro defines the three exported C functions. They check the ABI major, copy the host's
// structs into zero-filled local copies no larger than what the host wrote (so a pack built against
// a newer minor never reads past an older host's struct), and turn every C++ exception into a status
// code plus one log line: nothing C++ ever crosses the boundary.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

namespace dense::sdk {

// A struct of type T with its header filled for the ABI this code is compiled against.
template <class T>
constexpr T make_struct() noexcept {
    T value{};
    value.hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR);
    value.hdr.abi_minor = static_cast<uint16_t>(DENSE_ABI_MINOR);
    value.hdr.struct_size = static_cast<uint32_t>(sizeof(T));
    return value;
}

// Copy of *p limited to the bytes its writer declared; fields the writer did not know stay zero.
template <class T>
T read_struct(const T* p) noexcept {
    T value{};
    if (p == nullptr) return value;
    const std::size_t n = p->hdr.struct_size < sizeof(T) ? p->hdr.struct_size : sizeof(T);
    std::memcpy(static_cast<void*>(&value), static_cast<const void*>(p), n);
    return value;
}

// True if the writer of *p knew about the member ending at byte `end_offset`.
template <class T>
bool has_bytes(const T* p, std::size_t end_offset) noexcept {
    return p != nullptr && p->hdr.struct_size >= end_offset;
}

// Thin wrapper over the host table handed to dense_pack_init. Valid for the life of the process.
class Host {
public:
    explicit Host(const dense_host_api* api) noexcept : api_(api) {}

    const dense_host_api* raw() const noexcept { return api_; }

    void log(dense_log_level level, const std::string& message) const noexcept {
        if (api_ != nullptr && api_->log != nullptr) api_->log(api_->host, level, message.c_str());
    }
    void info(const std::string& m) const noexcept { log(DENSE_LOG_INFO, m); }
    void warn(const std::string& m) const noexcept { log(DENSE_LOG_WARN, m); }
    void error(const std::string& m) const noexcept { log(DENSE_LOG_ERROR, m); }

    dense_status register_op(const dense_op_impl& impl) const noexcept {
        if (api_ == nullptr || api_->register_op == nullptr) return DENSE_E_ABI;
        return api_->register_op(api_->host, &impl);
    }

    dense_status register_type(const dense_type_traits& traits, dense_type_id* out_id) const noexcept {
        if (api_ == nullptr || api_->register_type == nullptr) return DENSE_E_ABI;
        return api_->register_type(api_->host, &traits, out_id);
    }

    dense_status find_type(const char* name, dense_type_id* out_id) const noexcept {
        if (api_ == nullptr || api_->find_type == nullptr) return DENSE_E_ABI;
        return api_->find_type(api_->host, name, out_id);
    }

private:
    const dense_host_api* api_;
};

// Run f() and map exceptions to DENSE_E_INTERNAL with one log line. For op callbacks.
template <class F>
dense_status guarded(const Host& host, const char* what, F&& f) noexcept {
    try {
        return std::forward<F>(f)();
    } catch (const std::exception& e) {
        host.error(std::string(what) + ": " + e.what());
    } catch (...) {
        host.error(std::string(what) + ": unknown exception");
    }
    return DENSE_E_INTERNAL;
}

// Contiguous element count of a view.
inline int64_t element_count(const dense_tensor_view& v) noexcept { return v.ne[0] * v.ne[1] * v.ne[2] * v.ne[3]; }

}  // namespace dense::sdk

// Defines the three exported entry points. ScoreFn: uint32_t(const dense_hw_desc&);
// InitFn: dense_status(dense::sdk::Host, dense_pack**); ReleaseFn: void(dense_pack*).
#define DENSE_PACK_ENTRY_POINTS(ScoreFn, InitFn, ReleaseFn)                                              \
    extern "C" DENSE_PACK_EXPORT uint32_t dense_pack_score(const dense_hw_desc* hw) noexcept {          \
        if (hw == nullptr) return DENSE_ABI_ENCODE_VERSION(DENSE_ABI_MAJOR, DENSE_ABI_MINOR);             \
        if (hw->hdr.abi_major != DENSE_ABI_MAJOR) return 0;                                               \
        try {                                                                                             \
            const dense_hw_desc local = ::dense::sdk::read_struct(hw);                                    \
            return ScoreFn(local);                                                                        \
        } catch (...) {                                                                                   \
            return 0;                                                                                     \
        }                                                                                                 \
    }                                                                                                     \
    extern "C" DENSE_PACK_EXPORT dense_status dense_pack_init(const dense_host_api* host,                \
                                                              dense_pack** out_pack) noexcept {           \
        if (host == nullptr || out_pack == nullptr) return DENSE_E_INVALID_ARGUMENT;                      \
        *out_pack = nullptr;                                                                              \
        if (host->hdr.abi_major != DENSE_ABI_MAJOR) return DENSE_E_ABI;                                   \
        const ::dense::sdk::Host h(host);                                                                 \
        return ::dense::sdk::guarded(h, "dense_pack_init", [&] { return InitFn(h, out_pack); });         \
    }                                                                                                     \
    extern "C" DENSE_PACK_EXPORT void dense_pack_release(dense_pack* pack) noexcept {                    \
        try {                                                                                             \
            ReleaseFn(pack);                                                                              \
        } catch (...) {                                                                                   \
        }                                                                                                 \
    }
