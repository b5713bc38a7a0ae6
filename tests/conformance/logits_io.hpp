// Logit files exchanged by the teacher-forced conformance tests.
//
// The shared format (written by `llama-logits --out F` and by `dense-rt --logits-out F`):
//   F       float32 little-endian, row-major [rows x vocab], row r = logits after input position positions[r]
//   F.json  {"rows": n, "vocab": V, "positions": [p0, ...], ...}; "dtype", if present, must be "float32";
//           any further keys are kept as metadata (llama-logits adds "model", "variant", "kv",
//           "flash_attn", "batch", "ids", ...).
// Also readable: llama.cpp's golden text files of tests/data/golden-tiny ("pos P v0 v1 ... vV-1" per line).
//
// Public API (namespace dense::conformance)
//   LogitMatrix m = read_logits(path);   // *.txt -> golden text format, else float32 + path.json
//   write_logits(path, m);               // float32 + sidecar (m.metadata is written into the sidecar)
//   m.row(r) -> std::span<const float>   // one position's logits
// Errors: dense::Error(Io) when a file cannot be opened/read/written, dense::Error(Format) when its
// content breaks the format (message names the file and what is wrong).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace dense::conformance {

struct LogitMatrix {
    std::size_t rows = 0;
    std::size_t vocab = 0;
    std::vector<int64_t> positions;               // rows entries
    std::vector<float> values;                    // rows * vocab, row-major
    std::map<std::string, std::string> metadata;  // extra sidecar keys, each value as compact JSON text
    std::string source;                           // the file it came from (for messages)

    std::span<const float> row(std::size_t r) const { return {values.data() + r * vocab, vocab}; }
};

// The sidecar path of a float32 logits file: "<path>.json".
std::filesystem::path sidecar_path(const std::filesystem::path& logits_path);

LogitMatrix read_logits(const std::filesystem::path& path);
LogitMatrix read_golden_text(const std::filesystem::path& path);
LogitMatrix read_logits_f32(const std::filesystem::path& path);

void write_logits(const std::filesystem::path& path, const LogitMatrix& m);

}  // namespace dense::conformance
