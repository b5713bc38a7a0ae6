// Loading one pack: dlopen (Boost.DLL), the three exports, the ABI version, init. Every failure
// becomes a refusal reason; nothing a pack does may take the host down with it.
#include "packs/pack_library.hpp"

#include "core/type_table.hpp"
#include "packs/abi_struct_copy.hpp"

#include <boost/dll/shared_library_load_mode.hpp>
#include <boost/system/system_error.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <system_error>
#include <type_traits>

namespace dense::packs {
namespace {

// Size of dense_device_api in ABI 1.0 (the least a 1.x pack writes); pinned in abi_layout_check.cpp.

// Every library ever opened, by absolute path. Intentionally never destroyed, not even at exit:
//  - unloading a pack while anything it registered may still be called is undefined behaviour, and
//    at exit other static destructors (loggers, the executor's caches) may still reach into packs;
//  - CUDA packs carry their own CUDA runtime, whose teardown at dlclose races the driver's own.
// So the shared_library objects (and the host tables the packs hold) simply live until the process
// ends. It is reachable from a static pointer, so leak checkers do not report it.
struct LibraryCache {
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<PackLibrary>> by_path;
};
LibraryCache& cache() {
    static auto* c = new LibraryCache;  // never deleted, see above
    return *c;
}

// Boost.DLL puts dlerror()'s text in its exception message; that text is what a user needs
// ("...: wrong ELF class", "undefined symbol: ..."), so take it out of Boost's wording.
std::string load_error_text(const std::exception& e) {
    const std::string what = e.what();
    const std::string marker = "dlerror system message: ";
    const auto at = what.find(marker);
    if (at == std::string::npos) return what;
    auto text = what.substr(at + marker.size());
    if (const auto close = text.rfind(')'); close != std::string::npos) text.erase(close);
    return text;
}

std::string version_text(uint32_t major, uint32_t minor) {
    return std::to_string(major) + "." + std::to_string(minor);
}

// Undo the global side effects of a failed init: formats it added to the type table. Its staged ops
// never reached any registry.
void roll_back(PackLibrary& lib) {
    for (const auto& t : lib.types)
        if (t.created) global_type_table().remove_runtime(t.type.id);
    lib.types.clear();
    lib.ops.clear();
}

template <class Fn>
Fn find_export(PackLibrary& lib, const char* name) {
    if (!lib.lib->has(name)) {
        if (lib.refusal.empty()) lib.refusal = std::string("missing export ") + name;
        return nullptr;
    }
    return lib.lib->get<std::remove_pointer_t<Fn>>(name);
}

void load_and_check_version(PackLibrary& lib) {
    try {
        lib.lib = std::make_unique<boost::dll::shared_library>(
            boost::dll::fs::path(lib.path.string()),
            boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
    } catch (const std::exception& e) {
        lib.refusal = "cannot load: " + load_error_text(e);
        return;
    }
    lib.score = find_export<dense_pack_score_fn>(lib, "dense_pack_score");
    lib.init = find_export<dense_pack_init_fn>(lib, "dense_pack_init");
    lib.release = find_export<dense_pack_release_fn>(lib, "dense_pack_release");
    if (!lib.refusal.empty()) return;

    // score(NULL) is the one call that reads nothing: it tells the ABI the pack was built with,
    // before the host hands it any struct.
    try {
        lib.abi_version = lib.score(nullptr);
    } catch (...) {
        lib.refusal = "dense_pack_score(NULL) threw an exception";
        return;
    }
    lib.abi_known = true;
    const uint32_t major = DENSE_ABI_VERSION_MAJOR(lib.abi_version);
    if (major != DENSE_ABI_MAJOR)
        lib.refusal = "built for ABI " + version_text(major, DENSE_ABI_VERSION_MINOR(lib.abi_version)) +
                      ", this runtime speaks " + version_text(DENSE_ABI_MAJOR, DENSE_ABI_MINOR);
}

std::string rejected_suffix(const HostContext& ctx) {
    if (ctx.rejected.empty()) return {};
    return " (host rejected: " + ctx.rejected.back() + ")";
}

void initialise(PackLibrary& lib) {
    lib.host = make_host_context(lib.file_name);
    HostContext& ctx = *lib.host;
    ctx.staging = &lib;
    dense_pack* out = nullptr;
    dense_status status = DENSE_E_INTERNAL;
    bool threw = false;
    // The SDK's entry points already turn exceptions into status codes; this is the defence for
    // packs written without it (an exception escaping a C function is otherwise fatal or worse).
    try {
        status = lib.init(&ctx.api, &out);
    } catch (...) {
        threw = true;
    }
    ctx.staging = nullptr;  // from now on registrations are refused; `log` keeps working

    if (threw) {
        lib.refusal = "dense_pack_init threw an exception";
    } else if (status != DENSE_OK) {
        lib.refusal = "dense_pack_init failed with " + status_name(status) + rejected_suffix(ctx);
    } else if (out == nullptr) {
        lib.refusal = "dense_pack_init returned DENSE_OK but no pack object";
    } else if (std::string why = check_pack_struct(out, kAbi10PackSize, "the dense_pack it returned"); !why.empty()) {
        lib.refusal = why;
    } else {
        const dense_pack info = copy_pack_struct(*out);
        if (info.device_kind != DENSE_DEVICE_CPU && info.device_kind != DENSE_DEVICE_CUDA) {
            lib.refusal = "its dense_pack names unknown device kind " + std::to_string(info.device_kind);
        } else if (std::string dwhy = info.device != nullptr
                                          ? check_pack_struct(info.device, kAbi10DeviceApiSize, "its dense_device_api")
                                          : std::string();
                   !dwhy.empty()) {
            lib.refusal = dwhy;
        } else {
            lib.pack = out;
            lib.info = info;
            lib.info.hdr.struct_size =
                std::min<uint32_t>(out->hdr.struct_size, static_cast<uint32_t>(sizeof(dense_pack)));
            lib.name = pack_string(info.name);
            if (lib.name.empty()) lib.name = lib.file_name;
            lib.version = pack_string(info.version);
            return;
        }
    }
    roll_back(lib);
    // A pack object init handed over that the host cannot accept goes back to its owner. After a
    // failed init there is no object to give back (the pack cleans up after itself).
    if (status == DENSE_OK && out != nullptr && !threw) {
        try {
            lib.release(out);
        } catch (...) {
        }
    }
}

}  // namespace

std::string status_name(dense_status status) {
    switch (status) {
        case DENSE_OK:
            return "DENSE_OK";
        case DENSE_E_UNSUPPORTED:
            return "DENSE_E_UNSUPPORTED";
        case DENSE_E_INVALID_ARGUMENT:
            return "DENSE_E_INVALID_ARGUMENT";
        case DENSE_E_OUT_OF_MEMORY:
            return "DENSE_E_OUT_OF_MEMORY";
        case DENSE_E_DEVICE:
            return "DENSE_E_DEVICE";
        case DENSE_E_NUMERIC:
            return "DENSE_E_NUMERIC";
        case DENSE_E_INTERNAL:
            return "DENSE_E_INTERNAL";
        case DENSE_E_ABI:
            return "DENSE_E_ABI";
        default:
            return "status " + std::to_string(status);
    }
}

const PackLibrary& open_pack_library(const std::filesystem::path& absolute_path, const std::string& file_name) {
    LibraryCache& c = cache();
    // One lock for the whole load: init registers into the global type table, which is not
    // thread-safe, and the same library must not be initialised twice.
    std::lock_guard lock(c.mutex);
    // Keyed by the canonical path: the dynamic loader hands out one handle per file however it is
    // reached (symlinks), and that one handle must be initialised once.
    std::error_code ec;
    std::filesystem::path key = std::filesystem::canonical(absolute_path, ec);
    if (ec) key = absolute_path;
    auto& slot = c.by_path[key.string()];
    if (slot) return *slot;
    slot = std::make_unique<PackLibrary>();
    PackLibrary& lib = *slot;
    lib.path = key;
    lib.file_name = file_name;
    load_and_check_version(lib);
    if (lib.refusal.empty()) initialise(lib);
    // Registrations a successful pack ignored the failure of: worth a line each, once per process.
    if (lib.refusal.empty() && lib.host != nullptr)
        for (const auto& why : lib.host->rejected)
            spdlog::warn("pack {}: ignored registration: {}", lib.path.string(), why);
    return lib;
}

uint32_t score_pack(const PackLibrary& library, const dense_hw_desc& hw) noexcept {
    if (library.score == nullptr || !library.refusal.empty()) return 0;
    try {
        return library.score(&hw);
    } catch (...) {
        return 0;
    }
}

}  // namespace dense::packs
