// Finding pack files: where to look (PackPolicy) and which file names count as packs.
#pragma once

#include "packs/pack_policy.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dense::packs {

struct PackFile {
    std::filesystem::path path;  // absolute
    std::string origin;          // "--pack/config", "DENSE_PACK_PATH", "default dir"
    std::string file_name;       // "<family>-<variant>" from the file name ("" if it breaks the rule)
    std::string problem;         // non-empty: do not load, refuse with this reason
};

// "cuda-sm120" for "libdense-cuda-sm120.so"; nullopt if the name is not libdense-<family>-<variant>.so
// (family: [a-z0-9]+, variant: [a-z0-9_-]+ starting with a letter, digit or '_').
std::optional<std::string> pack_name_from_file(std::string_view file_name);

// <directory of /proc/self/exe>/../<DENSE_PACK_SUBDIR>: the same place in the build tree and after
// `cmake --install`. Empty if the executable's path cannot be read.
std::filesystem::path default_pack_dir();

// Every pack file the policy reaches, in search order: policy.paths (files, or directories whose
// libdense-*.so files are taken in name order), then $DENSE_PACK_PATH directories (':'-separated),
// then default_pack_dir(). The same file reached twice (another path, a symlink) is listed once, at
// its first place. An explicit path that does not exist or a file of a wrong name is listed with a
// `problem`; a missing directory from the environment or the default is skipped quietly.
std::vector<PackFile> discover_pack_files(const PackPolicy& policy);

}  // namespace dense::packs
