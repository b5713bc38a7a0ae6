// A PackManager over exactly the given pack files or directories (not $DENSE_PACK_PATH, not the
// install dir), loaded: what the tests that need real packs start from.
#pragma once

#include "packs/pack_manager.hpp"

#include <filesystem>
#include <memory>
#include <vector>

namespace dense::test {

inline std::unique_ptr<packs::PackManager> load_packs_from(std::vector<std::filesystem::path> paths) {
    packs::PackPolicy policy;
    policy.paths = std::move(paths);
    policy.use_env = false;
    policy.use_default_dir = false;
    auto m = std::make_unique<packs::PackManager>(policy);
    m->load();
    return m;
}

}  // namespace dense::test
