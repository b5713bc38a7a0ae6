// Paths the build passes to every test binary (see tests/CMakeLists.txt).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace dense::test {

inline std::filesystem::path data_dir() { return DENSE_TEST_DATA_DIR; }
inline std::filesystem::path source_dir() { return DENSE_SOURCE_DIR; }
inline std::filesystem::path build_pack_dir() { return DENSE_BUILD_PACK_DIR; }
inline std::filesystem::path test_pack_dir() { return DENSE_TEST_PACK_DIR; }
inline std::filesystem::path cli_path() { return DENSE_CLI_PATH; }

// A fresh scratch directory under the system temp dir, unique per test process.
inline std::filesystem::path scratch_dir(const std::string& tag) {
    auto dir = std::filesystem::temp_directory_path() /
               ("dense-test-" + tag + "-" + std::to_string(static_cast<long long>(::getpid())));
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace dense::test
