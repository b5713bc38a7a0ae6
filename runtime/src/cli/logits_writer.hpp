// --logits-out FILE: float32 logits of every position that produced logits, row-major
// [rows x vocab], plus FILE.json = {"rows": n, "vocab": V, "positions": [...]}. The llama.cpp
// oracle tool of the conformance tests writes the same format.
#pragma once

#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <vector>

namespace dense::cli {

class LogitsWriter {
public:
    LogitsWriter(const std::string& path, int64_t vocab);  // path "" = disabled
    void add(int64_t position, std::span<const float> logits);
    void finish();  // writes the sidecar; throws dense::Error(Io) on a write failure
    bool enabled() const noexcept { return !path_.empty(); }

private:
    std::string path_;
    int64_t vocab_ = 0;
    std::ofstream out_;
    std::vector<int64_t> positions_;
};

// --dump-layers DIR: DIR/layerNN.f32 holds the hidden state after trunk layer NN for every position
// run, row-major [positions x n_embd]; DIR/layers.json lists the positions and sizes.
class LayerDumper {
public:
    LayerDumper(const std::string& dir, int64_t n_layers, int64_t n_embd);  // dir "" = disabled
    void add(int64_t layer, int64_t position, std::span<const float> hidden);
    void finish();
    bool enabled() const noexcept { return !dir_.empty(); }

private:
    std::string dir_;
    int64_t n_embd_ = 0;
    std::vector<std::ofstream> files_;
    std::vector<int64_t> positions_;
};

}  // namespace dense::cli
