// Runs llama.cpp (the CPU library of npm @node-llama-cpp/linux-x64@3.22.1, dlopen'ed) teacher-forced over
// a list of token ids and returns the logits of every position: the oracle side of the conformance tests.
//
// Determinism: llama.cpp's numbers depend on which CPU variant library runs and on repacked weight
// layouts (a last-bit difference flips an int8 activation rounding that later layers amplify), so
// the runner pins them: exactly one backend, libggml-cpu-<variant>.so, is loaded with
// ggml_backend_load (never ggml_backend_load_all), extra buffer types (repacking) are off, one thread,
// mmap on, lazy loading off.
//
// Public API (namespace dense::conformance)
//   LogitMatrix m = run_llama_logits(options);        // throws OracleUnavailable or dense::Error
//   parse_ids("1,2,3") / parse_batch_schedule("40,1")  // throw Error(Usage)
#pragma once

#include "core/error.hpp"
#include "logits_io.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dense::conformance {

struct LlamaRunOptions {
    std::filesystem::path lib_dir;    // holds libllama.v0.5.0.so, libggml*.so
    std::string variant = "haswell";  // libggml-cpu-<variant>.so
    std::filesystem::path model;
    std::vector<int32_t> ids;
    std::string kv = "f32";  // KV cache type: f32 | f16
    bool flash_attn = false;
    // Tokens per llama_decode call; the last entry repeats. Empty: all tokens in one call.
    // {1}: one token at a time; {40, 1}: 40 tokens, then one at a time.
    std::vector<std::size_t> batch_schedule;
    bool verbose = false;  // stream llama.cpp's log to stderr (else kept for error messages)
};

// The oracle cannot run on this machine (library missing, CPU lacks the variant's ISA): callers skip.
class OracleUnavailable : public Error {
public:
    explicit OracleUnavailable(const std::string& message) : Error(ErrorKind::Io, message) {}
};

// Rows are positions 0..ids.size()-1; metadata records model, variant, kv, flash_attn, batch and ids.
LogitMatrix run_llama_logits(const LlamaRunOptions& options);

std::vector<int32_t> parse_ids(const std::string& text);
std::vector<std::size_t> parse_batch_schedule(const std::string& text);  // "all" | "N" | "N,M,..."
std::string batch_schedule_to_string(const std::vector<std::size_t>& schedule);

}  // namespace dense::conformance
