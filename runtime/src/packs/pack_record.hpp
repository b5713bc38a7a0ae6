// What the host knows about one pack file it found: where, what, which ABI, whether it can be used,
// how it scores on each device, and the formats it registered. One record per file found.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dense::packs {

enum class PackStatus {
    Usable,         // initialised, scores > 0 on at least one device of its kind
    NotUsableHere,  // initialised (its ops are listed) but scores 0 on every device of its kind
    Refused,        // could not be loaded or initialised; `reason` says why
    Skipped,        // not loaded on purpose: denied by the policy, or shadowed by an earlier pack of the same name
};
// "usable", "not usable here", "refused", "skipped"
const char* to_string(PackStatus status) noexcept;

// A quantization format the pack registered during init.
struct RegisteredType {
    dense_type_id id = DENSE_TYPE_NONE;
    std::string name;
    uint32_t block_elements = 0;
    uint32_t block_bytes = 0;
    dense_type_id act_type = DENSE_TYPE_NONE;
    void (*to_float)(const void* blocks, float* out, int64_t n_elements) = nullptr;  // may be NULL
};

struct PackRecord {
    std::filesystem::path file;  // absolute path of the shared library
    std::string origin;          // where it was found: "--pack/config", "DENSE_PACK_PATH", "default dir"
    std::string name;            // the pack's own name; derived from the file name until init succeeded
    std::string version;         // the pack's version string ("" if not initialised)
    bool abi_known = false;      // score(NULL) was called: abi_major/abi_minor are valid
    uint32_t abi_major = 0;
    uint32_t abi_minor = 0;
    PackStatus status = PackStatus::Refused;
    std::string reason;                                // why Refused / Skipped / NotUsableHere
    dense_device_kind device_kind = DENSE_DEVICE_CPU;  // where its ops run (from its dense_pack)
    std::vector<uint32_t> scores;  // per device, same order as PackManager::devices(); empty if not initialised
    std::vector<RegisteredType> types;
    // The pack's object as init returned it (pack-owned, never released: packs are never unloaded)
    // and a size-limited copy of it. nullptr / zero if not initialised.
    const dense_pack* pack = nullptr;
    dense_pack info{};

    bool initialised() const noexcept { return pack != nullptr; }
    bool usable() const noexcept { return status == PackStatus::Usable; }
    uint32_t score_on(size_t device) const noexcept { return device < scores.size() ? scores[device] : 0; }
    // Size-limited copy of the pack's device API (memory, streams); nullopt for CPU packs or if absent.
    std::optional<dense_device_api> device_api() const;
};

}  // namespace dense::packs
