// Paths the build passes to every test binary (see tests/CMakeLists.txt). When the build tree is
// carried to another machine (the GPU test machine), the environment overrides them:
//   DENSE_SOURCE_DIR  the repository root there      DENSE_BUILD_DIR  the build tree there
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace dense::test {

namespace detail {
inline std::filesystem::path rebase(const char* compiled, const char* compiled_root, const char* env_name) {
    const char* env = std::getenv(env_name);
    if (env == nullptr || *env == '\0') return compiled;
    const std::filesystem::path rel = std::filesystem::path(compiled).lexically_relative(compiled_root);
    return std::filesystem::path(env) / rel;
}
}  // namespace detail

inline std::filesystem::path source_dir() { return detail::rebase(DENSE_SOURCE_DIR, DENSE_SOURCE_DIR, "DENSE_SOURCE_DIR"); }
inline std::filesystem::path data_dir() { return detail::rebase(DENSE_TEST_DATA_DIR, DENSE_SOURCE_DIR, "DENSE_SOURCE_DIR"); }
inline std::filesystem::path build_pack_dir() {
    return detail::rebase(DENSE_BUILD_PACK_DIR, DENSE_BUILD_DIR, "DENSE_BUILD_DIR");
}
inline std::filesystem::path test_pack_dir() { return detail::rebase(DENSE_TEST_PACK_DIR, DENSE_BUILD_DIR, "DENSE_BUILD_DIR"); }
inline std::filesystem::path cli_path() { return detail::rebase(DENSE_CLI_PATH, DENSE_BUILD_DIR, "DENSE_BUILD_DIR"); }

namespace detail {
// The scratch directories this process made, removed when it exits: ctest runs every test in a
// process of its own, so a run used to leave thousands of dense-test-* directories in /tmp.
// DENSE_KEEP_TEST_FILES=1 keeps them (to look at what a failing test wrote).
class ScratchDirs {
public:
    void add(const std::filesystem::path& dir) { dirs_.push_back(dir); }
    ~ScratchDirs() {
        if (::getpid() != owner_) return;  // a forked child exiting must not take its parent's files
        const char* keep = std::getenv("DENSE_KEEP_TEST_FILES");
        if (keep != nullptr && std::string(keep) == "1") return;
        std::error_code ec;  // best effort: a directory a test already removed is fine
        for (const auto& dir : dirs_) std::filesystem::remove_all(dir, ec);
    }

private:
    std::vector<std::filesystem::path> dirs_;
    pid_t owner_ = ::getpid();
};
inline ScratchDirs& scratch_dirs() {
    static ScratchDirs dirs;
    return dirs;
}
}  // namespace detail

// A fresh scratch directory under the system temp dir, unique per test process and tag; removed
// when the process exits (detail::ScratchDirs).
inline std::filesystem::path scratch_dir(const std::string& tag) {
    auto dir = std::filesystem::temp_directory_path() /
               ("dense-test-" + tag + "-" + std::to_string(static_cast<long long>(::getpid())));
    if (!std::filesystem::exists(dir)) detail::scratch_dirs().add(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace dense::test
