// Shared helpers of the conformance tests: where the llama.cpp oracle and our helper tools are, and how
// to run them.
#pragma once

#include "common/run_command.hpp"
#include "common/test_paths.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dense::conformance::test {

// $DENSE_LLAMA_ORACLE_DIR, else <repo>/.oracle/lib (scripts/fetch-oracle.sh puts it there).
inline std::filesystem::path oracle_dir() {
    if (const char* env = std::getenv("DENSE_LLAMA_ORACLE_DIR"); env != nullptr && *env != '\0') return env;
    return dense::test::source_dir() / ".oracle" / "lib";
}

// Empty when the oracle's libraries are there; else the reason to skip.
inline std::string oracle_problem() {
    const auto dir = oracle_dir();
    for (const char* lib : {"libllama.v0.5.0.so", "libggml.v0.5.0.so", "libggml-base.so", "libggml-cpu-haswell.so"})
        if (!std::filesystem::exists(dir / lib))
            return "the llama.cpp oracle is not available (" + (dir / lib).string() +
                   " missing); run scripts/fetch-oracle.sh or set DENSE_LLAMA_ORACLE_DIR";
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
          __builtin_cpu_supports("bmi2")))
        return "this CPU lacks AVX2/FMA/F16C/BMI2 needed by the pinned oracle variant libggml-cpu-haswell.so";
    return {};
}

inline std::filesystem::path llama_logits_path() {
    return dense::test::detail::rebase(DENSE_LLAMA_LOGITS_PATH, DENSE_BUILD_DIR, "DENSE_BUILD_DIR");
}
inline std::filesystem::path compare_logits_path() {
    return dense::test::detail::rebase(DENSE_COMPARE_LOGITS_PATH, DENSE_BUILD_DIR, "DENSE_BUILD_DIR");
}

inline std::string join_ids(const std::vector<int32_t>& ids) {
    std::string s;
    for (int32_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s;
}

// `llama-logits --lib-dir <oracle> --model M --ids IDS --out OUT <extra>`.
inline dense::test::CommandResult run_llama_logits_tool(const std::filesystem::path& model,
                                                        const std::vector<int32_t>& ids,
                                                        const std::filesystem::path& out,
                                                        const std::string& extra = "") {
    using dense::test::shell_quote;
    return dense::test::run_command(shell_quote(llama_logits_path().string()) + " --lib-dir " +
                                    shell_quote(oracle_dir().string()) + " --model " + shell_quote(model.string()) +
                                    " --ids " + join_ids(ids) + " --out " + shell_quote(out.string()) + " " + extra);
}

// The 80 ids of tests/data/golden-tiny/tokens.txt.
inline std::vector<int32_t> golden_tokens() {
    std::ifstream in(dense::test::data_dir() / "golden-tiny" / "tokens.txt");
    std::vector<int32_t> ids;
    std::string item;
    while (std::getline(in, item, ',')) ids.push_back(static_cast<int32_t>(std::stol(item)));
    return ids;
}

inline std::filesystem::path golden_dir() {
    return dense::test::data_dir() / "golden-tiny";
}

}  // namespace dense::conformance::test
