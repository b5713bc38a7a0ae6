// The flags of `dense-rt synth` (parsed in main.cpp, run by cmd_synth.cpp).
#pragma once

#include "synth/shape.hpp"

#include <cstdint>
#include <string>

namespace dense::cli {

struct SynthFlags {
    std::string arch = "qwen35";
    std::string shape;
    std::string mix;
    std::string out;
    uint64_t seed = 1;
    std::string vocab;     // empty: ggml-vocab-qwen35.gguf (cwd tests/data/vocab, installed share, source tree)
    unsigned threads = 0;  // 0: all cores
    synth::ShapeOverrides dims;
};

}  // namespace dense::cli
