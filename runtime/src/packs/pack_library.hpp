// One pack shared library, loaded and initialised at most once per process (internal to the packs
// stage; the rest of the runtime uses PackManager).
//
// WHY once per process: a pack's init creates state that only the pack can destroy, and packs are
// never unloaded, so running init again for a second PackManager (tests create many) would leak or
// confuse that state. The library remembers what init registered and each PackManager replays it
// into its own registry; a refusal is remembered too, and reported by every load that meets it.
#pragma once

#include "packs/pack_record.hpp"

#include <dense/abi/dense_abi.h>

#include <boost/dll/shared_library.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace dense::packs {

struct PackLibrary;

// The host table handed to one pack's init, with what its callbacks need. Allocated once per
// library and never freed: a pack may keep the table and call `log` from any thread for the rest of
// the process, so neither the table nor its user pointer may ever dangle.
struct HostContext {
    std::string log_name;  // prefix of the pack's log lines; immutable after creation
    // Set only while this pack's init runs: registrations go there. Atomic because a pack may call
    // register_* from any thread, at any time; after init they are refused.
    std::atomic<PackLibrary*> staging{nullptr};
    std::vector<std::string> rejected;  // registrations the host refused during init, with reasons
    dense_host_api api{};
};

// The host table for a pack whose log lines carry `log_name`. Never freed (see HostContext).
HostContext* make_host_context(const std::string& log_name);

struct StagedType {
    RegisteredType type;
    bool created = false;  // this pack added it to the global type table (else it re-used an identical one)
};

struct PackLibrary {
    std::filesystem::path path;  // canonical
    std::string file_name;       // "<family>-<variant>" from the file name
    std::string refusal;         // non-empty: refused, with the reason (fields below may be partial)

    std::unique_ptr<boost::dll::shared_library> lib;  // never destroyed (see pack_library.cpp)
    dense_pack_score_fn score = nullptr;
    dense_pack_init_fn init = nullptr;
    dense_pack_release_fn release = nullptr;
    bool abi_known = false;
    uint32_t abi_version = 0;  // score(NULL)

    HostContext* host = nullptr;
    const dense_pack* pack = nullptr;  // what init returned (pack-owned)
    dense_pack info{};                 // size-limited copy
    std::string name;                  // info.name, or file_name if the pack gave none
    std::string version;
    std::vector<dense_op_impl> ops;  // registered during init (validated, size-limited copies)
    std::vector<StagedType> types;   // registered during init
};

// The library at `absolute_path`, loaded and initialised on first use (thread-safe). Never throws
// for a bad pack: the result's `refusal` says what was wrong. The returned object lives for the
// rest of the process.
const PackLibrary& open_pack_library(const std::filesystem::path& absolute_path, const std::string& file_name);

// The pack's score for one device; 0 if the call fails in any way.
uint32_t score_pack(const PackLibrary& library, const dense_hw_desc& hw) noexcept;

// "DENSE_E_DEVICE" etc.; "status <n>" for unknown codes.
std::string status_name(dense_status status);

}  // namespace dense::packs
