// Runs a shell command for end-to-end CLI tests: exit code, stdout and stderr separately.
#pragma once

#include "common/test_paths.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace dense::test {

struct CommandResult {
    int exit_code = -1;  // -1 if it did not exit normally (signal: a crash is never a clean error)
    std::string out;
    std::string err;
};

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline CommandResult run_command(const std::string& command) {
    static int counter = 0;
    const auto err_file = scratch_dir("cmd") / ("stderr-" + std::to_string(counter++) + ".txt");
    CommandResult r;
    FILE* pipe = ::popen((command + " 2>" + shell_quote(err_file.string())).c_str(), "r");
    if (pipe == nullptr) return r;
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    r.err = ss.str();
    return r;
}

// `dense-rt <args>` run from the repository root (so configs/... paths work); `input`, when given, is
// what it reads on stdin (the chat's lines).
inline CommandResult run_dense_rt(const std::string& args, const std::string& input = {}) {
    const std::string feed = input.empty() ? "" : "printf '%s' " + shell_quote(input) + " | ";
    return run_command("cd " + shell_quote(source_dir().string()) + " && " + feed + shell_quote(cli_path().string()) +
                       " " + args);
}

}  // namespace dense::test
