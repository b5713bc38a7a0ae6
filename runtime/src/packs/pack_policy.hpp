// Where to look for kernel packs and which to prefer: the part of the run config (and command line)
// the pack stage needs, handed over as a plain value.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dense::packs {

struct PackPolicy {
    // Searched first, in order: pack files or directories (config `packs.paths`, `--pack` flags).
    std::vector<std::filesystem::path> paths;
    // Then the directories in $DENSE_PACK_PATH (':'-separated) ...
    bool use_env = true;
    // ... then <dir of the dense-rt executable>/../lib/dense-rt/packs (build tree and install tree).
    bool use_default_dir = true;
    std::vector<std::string> prefer;   // pack names that win ties / get a bonus on every device
    std::vector<std::string> deny;     // pack names that are never loaded
    std::optional<std::string> force;  // if set, the only pack considered for the main device
};

}  // namespace dense::packs
