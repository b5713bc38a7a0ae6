// Reading structs a pack wrote, without trusting their size.
//
// A pack built against an older minor of the ABI writes shorter structs than this runtime knows;
// one built against a newer minor writes longer ones. The host copies at most
// min(struct_size, sizeof(T)) bytes into a zero-filled T, so it never reads a field the pack did not
// write, and refuses a struct of another major or one shorter than ABI 1.0 defined it.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace dense::packs {

// Sizes of the pack-written structs as ABI 1.0 defined them: the least any 1.x writer produces.
// Fixed numbers on purpose (not sizeof): sizeof grows with later minors, these never change.
inline constexpr uint32_t kAbi10PackSize = 48;        // dense_pack
inline constexpr uint32_t kAbi10OpImplSize = 72;      // dense_op_impl
inline constexpr uint32_t kAbi10TypeTraitsSize = 40;  // dense_type_traits
inline constexpr uint32_t kAbi10DeviceApiSize = 72;   // dense_device_api (1.1 appended six calls)

// "" if *p may be read as a T (non-null, same major, at least min_size bytes), else the reason.
template <class T>
std::string check_pack_struct(const T* p, uint32_t min_size, const char* what) {
    if (p == nullptr) return std::string(what) + " is NULL";
    if (p->hdr.abi_major != DENSE_ABI_MAJOR)
        return std::string(what) + " has ABI major " + std::to_string(p->hdr.abi_major) + ", expected " +
               std::to_string(DENSE_ABI_MAJOR);
    if (p->hdr.struct_size < min_size)
        return std::string(what) + " declares struct_size " + std::to_string(p->hdr.struct_size) + ", ABI " +
               std::to_string(DENSE_ABI_MAJOR) + ".0 needs at least " + std::to_string(min_size);
    return {};
}

// Copy of *p limited to the bytes its writer declared; fields the writer did not know stay zero.
template <class T>
T copy_pack_struct(const T& src) noexcept {
    T value{};
    const std::size_t n = src.hdr.struct_size < sizeof(T) ? src.hdr.struct_size : sizeof(T);
    std::memcpy(static_cast<void*>(&value), static_cast<const void*>(&src), n);
    return value;
}

// A NUL-terminated string a pack owns, or `fallback` for NULL.
inline std::string pack_string(const char* s, const char* fallback = "") {
    return s != nullptr ? s : fallback;
}

}  // namespace dense::packs
