// Shared helpers of the synth tests: requests for named shapes with the test vocabulary, the qwen35
// model description, and in-memory synthetic files.
#pragma once

#include "common/test_paths.hpp"
#include "gguf/gguf_file.hpp"
#include "model/model_spec.hpp"
#include "synth/synth_model.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dense::synth::test {

inline std::filesystem::path vocab_file() { return dense::test::data_dir() / "vocab" / "ggml-vocab-qwen35.gguf"; }

inline SynthRequest request(const std::string& shape, const std::string& mix, uint64_t seed = 1,
                            ShapeOverrides overrides = {}, unsigned threads = 2) {
    SynthRequest r;
    r.shape = make_shape(shape, overrides);
    r.mix = parse_mix(mix);
    r.seed = seed;
    r.vocab = vocab_file();
    r.threads = threads;
    return r;
}

// A small vocabulary keeps files of the wide shapes small where the test is not about the vocabulary.
inline ShapeOverrides small_vocab(uint32_t size = 512) {
    ShapeOverrides o;
    o.vocab_size = size;
    return o;
}

inline const model::ModelSpec& qwen35_spec() {
    static const model::ModelSpec spec = model::ModelSpec::load(dense::test::source_dir() / "models" / "qwen35.yaml");
    return spec;
}

// A synthetic file held in memory together with its parsed view.
struct MemoryFile {
    std::vector<std::byte> bytes;
    std::unique_ptr<gguf::GgufFile> file;
};

inline MemoryFile synthesize(const SynthRequest& req) {
    MemoryFile m;
    SynthModel model(req);
    m.bytes = model.write_to_bytes();
    m.file = std::make_unique<gguf::GgufFile>(gguf::GgufFile::parse(m.bytes, "synth:" + req.shape.name + ":" + req.mix.name));
    return m;
}

}  // namespace dense::synth::test
