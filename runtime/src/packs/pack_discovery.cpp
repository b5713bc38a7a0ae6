#include "packs/pack_discovery.hpp"
#include "core/install_prefix.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <system_error>
#include <utility>

#ifndef DENSE_PACK_SUBDIR
#error "DENSE_PACK_SUBDIR must be defined by the build (lib/dense-rt/packs)"
#endif

namespace dense::packs {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "libdense-";
constexpr std::string_view kSuffix = ".so";
const char* const kNameRule = "file name must be libdense-<family>-<variant>.so";

bool is_lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool looks_like_pack(std::string_view name) {
    return name.size() > kPrefix.size() + kSuffix.size() && name.substr(0, kPrefix.size()) == kPrefix &&
           name.substr(name.size() - kSuffix.size()) == kSuffix;
}

class Collector {
public:
    std::vector<PackFile> files;

    void add_file(const fs::path& path, const std::string& origin) {
        PackFile f;
        f.path = path;
        f.origin = origin;
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0) {
            // The identity of a file is its inode, not its spelling: a symlink or a second search
            // directory reaching the same file must not load it twice.
            if (!seen_.insert({static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)})
                     .second) {
                spdlog::debug("pack {} ({}) was already found: skipped", path.string(), origin);
                return;
            }
        }
        if (auto name = pack_name_from_file(path.filename().string()))
            f.file_name = *name;
        else
            f.problem = kNameRule;
        files.push_back(std::move(f));
    }

    void add_problem(const fs::path& path, const std::string& origin, const std::string& problem) {
        files.push_back({path, origin, "", problem});
    }

    void add_dir(const fs::path& dir, const std::string& origin) {
        std::error_code ec;
        std::vector<fs::path> found;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (looks_like_pack(name) && it->is_regular_file(ec)) found.push_back(it->path());
        }
        if (ec) spdlog::warn("cannot list pack directory {} ({}): {}", dir.string(), origin, ec.message());
        std::sort(found.begin(), found.end());  // deterministic order, whatever the file system returns
        for (const auto& p : found) add_file(p, origin);
    }

private:
    std::set<std::pair<unsigned long long, unsigned long long>> seen_;
};

fs::path absolute_of(const fs::path& p) {
    std::error_code ec;
    fs::path a = fs::absolute(p, ec);
    return ec ? p : a.lexically_normal();
}

}  // namespace

std::optional<std::string> pack_name_from_file(std::string_view file_name) {
    if (!looks_like_pack(file_name)) return std::nullopt;
    const std::string_view stem = file_name.substr(kPrefix.size(), file_name.size() - kPrefix.size() - kSuffix.size());
    const auto dash = stem.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 >= stem.size()) return std::nullopt;
    const std::string_view family = stem.substr(0, dash);
    const std::string_view variant = stem.substr(dash + 1);
    if (!std::all_of(family.begin(), family.end(), is_lower_alnum)) return std::nullopt;
    if (variant.front() == '-') return std::nullopt;
    if (!std::all_of(variant.begin(), variant.end(), [](char c) { return is_lower_alnum(c) || c == '_' || c == '-'; }))
        return std::nullopt;
    return std::string(stem);
}

fs::path default_pack_dir() {
    const auto prefix = install_prefix();
    if (!prefix) return {};
    return (*prefix / DENSE_PACK_SUBDIR).lexically_normal();
}

std::vector<PackFile> discover_pack_files(const PackPolicy& policy) {
    Collector c;
    for (const auto& given : policy.paths) {
        const fs::path p = absolute_of(given);
        std::error_code ec;
        const auto st = fs::status(p, ec);
        if (fs::is_directory(st))
            c.add_dir(p, "--pack/config");
        else if (fs::exists(st))
            c.add_file(p, "--pack/config");
        else
            c.add_problem(p, "--pack/config", "no such file or directory");
    }
    if (policy.use_env) {
        if (const char* env = std::getenv("DENSE_PACK_PATH"); env != nullptr) {
            std::string_view rest = env;
            while (!rest.empty()) {
                const auto colon = rest.find(':');
                const std::string_view entry = rest.substr(0, colon);
                rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
                if (entry.empty()) continue;
                const fs::path dir = absolute_of(fs::path(std::string(entry)));
                std::error_code ec;
                if (fs::is_directory(dir, ec))
                    c.add_dir(dir, "DENSE_PACK_PATH");
                else
                    spdlog::debug("DENSE_PACK_PATH entry {} is not a directory: skipped", dir.string());
            }
        }
    }
    if (policy.use_default_dir) {
        const fs::path dir = default_pack_dir();
        std::error_code ec;
        if (!dir.empty() && fs::is_directory(dir, ec))
            c.add_dir(dir, "default dir");
        else
            spdlog::debug("default pack directory {} does not exist", dir.string());
    }
    return std::move(c.files);
}

}  // namespace dense::packs
