// `dense-rt synth`: a synthetic qwen35 GGUF of any shape and quant mix, that binds to
// models/qwen35.yaml, with deterministic random weights.
//
//   SynthRequest req;
//   req.shape = make_shape("tiny", {});
//   req.mix = parse_mix("seed-iq4");
//   req.seed = 1;
//   req.vocab = *default_vocab_path();
//   SynthModel model(req);            // loads the vocabulary, plans every tensor; no weights yet
//   model.file_size();                // exact size of the file write() produces
//   model.write("tiny.gguf", progress);   // weights generated in parallel, streamed to disk
//
// Metadata: every key of spec/qwen35-architecture.md section 2 with its exact GGUF type
// (qwen35.block_count, ..., rope.dimension_sections [11,11,10,0] scaled to n_rot), general.architecture
// = qwen35, general.name, general.file_type (informative), general.quantization_version 2, the
// vocabulary file's tokenizer.* keys (resized, see vocab_source.hpp) and dense.synth.{shape,mix,seed}.
//
// Values (chosen so that a 64-layer forward pass stays finite and non-degenerate):
//   matrices      random valid blocks, mean 0, std 1/sqrt(ne[0]) (block_fill.hpp): W*x = O(1) for O(1) x
//   norm weights  1 + N(0, 0.1^2)  (attn_norm, post_attention_norm, output_norm, attn_q/k_norm, MTP norms)
//   ssm_norm      1 + N(0, 0.1^2)  (raw weight, the same draw)
//   ssm_a         -exp(N(0, 0.5^2)) (negative: decay = exp(softplus(.) * ssm_a) in (0, 1))
//   ssm_dt.bias   N(0, 0.5^2)
//   ssm_conv1d    N(0, 0.5^2)      (4 taps: output variance ~ input variance)
// Each tensor draws from its own stream(s) seeded by (seed, tensor index, chunk index): the file is a
// function of the seed alone, whatever --threads.
#pragma once

#include "gguf/gguf_writer.hpp"
#include "synth/mix.hpp"
#include "synth/shape.hpp"
#include "synth/tensor_plan.hpp"
#include "synth/vocab_source.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dense::synth {

struct SynthRequest {
    Shape shape;
    Mix mix;
    uint64_t seed = 1;
    std::filesystem::path vocab;
    unsigned threads = 0;  // 0: std::thread::hardware_concurrency()
};

struct TypeTotals {
    uint64_t tensors = 0;
    uint64_t bytes = 0;
};

class SynthModel {
public:
    using ProgressFn = std::function<void(uint64_t bytes_done, uint64_t bytes_total)>;

    // Throws dense::Error: Usage for a bad shape / mix / vocabulary size or dims a format cannot
    // store; Io / Format if the vocabulary file cannot be read.
    explicit SynthModel(const SynthRequest& request);
    ~SynthModel();
    SynthModel(const SynthModel&) = delete;
    SynthModel& operator=(const SynthModel&) = delete;

    const SynthRequest& request() const noexcept { return request_; }
    const SynthVocab& vocab() const noexcept { return vocab_; }
    const std::vector<PlannedTensor>& tensors() const noexcept { return plan_; }
    uint64_t file_size() const { return writer_.file_size(); }
    uint64_t tensor_data_bytes() const;
    std::map<std::string, TypeTotals> bytes_per_type() const;  // type name -> count and bytes
    unsigned threads() const noexcept;

    // Streams the file to `path` (removed again if writing fails). `progress` is called from the
    // writing thread after every piece (about 4 MiB) of tensor data.
    void write(const std::filesystem::path& path, const ProgressFn& progress = {}) const;
    // The same bytes in memory (tests; small shapes only).
    std::vector<std::byte> write_to_bytes() const;

private:
    struct Stream;
    void add_metadata();
    void add_tensors();
    template <class Sink>
    void run(const Sink& sink, const ProgressFn& progress) const;

    SynthRequest request_;
    SynthVocab vocab_;
    std::vector<PlannedTensor> plan_;
    gguf::GgufWriter writer_;
    std::shared_ptr<Stream> stream_;  // shared with the writer's fill functions
};

}  // namespace dense::synth
