// Where this dense-rt executable lives: <prefix>/bin/dense-rt, so <prefix> holds share/dense-rt/
// (model descriptions, vocabulary) and lib/dense-rt/packs. The build tree has the same layout.
#pragma once

#include <filesystem>
#include <optional>

namespace dense {

// <prefix> of the running executable (from /proc/self/exe); nullopt when it cannot be read.
std::optional<std::filesystem::path> install_prefix();

}  // namespace dense
