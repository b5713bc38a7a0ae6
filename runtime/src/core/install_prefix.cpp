#include "core/install_prefix.hpp"

#include <system_error>

namespace dense {

std::optional<std::filesystem::path> install_prefix() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec || exe.empty()) return std::nullopt;
    return exe.parent_path().parent_path();
}

}  // namespace dense
