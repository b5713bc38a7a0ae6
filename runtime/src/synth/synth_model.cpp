#include "synth/synth_model.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "synth/chunk_pipeline.hpp"
#include "synth/rng.hpp"

#include <cmath>
#include <cstring>
#include <thread>

namespace dense::synth {

struct SynthModel::Stream {
    std::vector<PipelineTensor> jobs;
    uint64_t total_bytes = 0;
    std::unique_ptr<ChunkPipeline> pipeline;  // alive only while writing
    ProgressFn progress;
    uint64_t done = 0;
};

namespace {

std::vector<float> draw_vector(Init init, uint64_t n, Rng& rng) {
    std::vector<float> v(n);
    for (auto& x : v) {
        const double z = rng.normal();
        switch (init) {
            case Init::NormOne: case Init::SsmNorm: x = static_cast<float>(1.0 + 0.1 * z); break;
            case Init::SsmA: x = static_cast<float>(-std::exp(0.5 * z)); break;
            case Init::DtBias: case Init::Conv: x = static_cast<float>(0.5 * z); break;
            case Init::Matrix: x = static_cast<float>(z); break;
        }
    }
    return v;
}

uint64_t elements(const std::vector<int64_t>& ne) {
    uint64_t n = 1;
    for (int64_t d : ne) n *= static_cast<uint64_t>(d);
    return n;
}

}  // namespace

SynthModel::SynthModel(const SynthRequest& request)
    : request_(request), stream_(std::make_shared<Stream>()) {
    validate(request_.shape);
    if (request_.mix.name.empty()) throw Error(ErrorKind::Usage, "synth: no mix given");
    vocab_ = load_vocab(request_.vocab, request_.shape.vocab_size);
    plan_ = plan_tensors(request_.shape, vocab_.size(), request_.mix);
    add_metadata();
    add_tensors();
}

SynthModel::~SynthModel() = default;

unsigned SynthModel::threads() const noexcept {
    if (request_.threads > 0) return request_.threads;
    return std::max(1u, std::thread::hardware_concurrency());
}

void SynthModel::add_metadata() {
    const Shape& s = request_.shape;
    gguf::GgufWriter& w = writer_;
    const std::string a = "qwen35.";
    w.add_string("general.architecture", "qwen35");
    w.add_string("general.name", "synthetic qwen35 " + s.name + " " + request_.mix.name);
    w.add_u32("general.file_type", request_.mix.file_type);
    w.add_u32("general.quantization_version", 2);
    w.add_u32(a + "block_count", s.block_count());
    if (s.mtp) w.add_u32(a + "nextn_predict_layers", 1);
    w.add_u32(a + "context_length", s.context_length);
    w.add_u32(a + "embedding_length", s.n_embd);
    w.add_u32(a + "feed_forward_length", s.n_ff);
    w.add_u32(a + "attention.head_count", s.n_head);
    w.add_u32(a + "attention.head_count_kv", s.n_head_kv);
    w.add_u32(a + "attention.key_length", s.head_dim);
    w.add_u32(a + "attention.value_length", s.head_dim);
    w.add_f32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
    w.add_u32(a + "full_attention_interval", s.full_attn_interval);
    w.add_u32(a + "rope.dimension_count", s.n_rot);
    const auto sections = rope_sections(s.n_rot);
    w.add_array<int32_t>(a + "rope.dimension_sections", sections);
    w.add_f32(a + "rope.freq_base", s.rope_base);
    w.add_u32(a + "ssm.conv_kernel", s.ssm_conv);
    w.add_u32(a + "ssm.state_size", s.ssm_state);
    w.add_u32(a + "ssm.group_count", s.ssm_groups);
    w.add_u32(a + "ssm.time_step_rank", s.ssm_heads);
    w.add_u32(a + "ssm.inner_size", s.ssm_inner());
    vocab_.add_to(w);
    // Where the file came from, so a test failure on it can be reproduced.
    w.add_string("dense.synth.shape", s.name);
    w.add_string("dense.synth.mix", request_.mix.name);
    w.add_u64("dense.synth.seed", request_.seed);
}

void SynthModel::add_tensors() {
    for (size_t i = 0; i < plan_.size(); ++i) {
        const PlannedTensor& t = plan_[i];
        if (t.init != Init::Matrix) {
            Rng rng(stream_seed(request_.seed, i, 0));
            const auto values = draw_vector(t.init, elements(t.ne), rng);
            writer_.add_tensor(t.name, DENSE_TYPE_F32, t.ne, std::as_bytes(std::span<const float>(values)));
            continue;
        }
        PipelineTensor job;
        job.recipe = make_recipe(t.type, 1.0 / std::sqrt(static_cast<double>(t.ne[0])));
        job.n_blocks = elements(t.ne) / job.recipe.block_elements;
        job.stream = i;
        const size_t j = stream_->jobs.size();
        stream_->jobs.push_back(job);
        stream_->total_bytes += job.n_blocks * job.recipe.block_bytes;
        writer_.add_tensor(t.name, t.type, t.ne, [s = stream_, j](uint64_t offset, std::span<std::byte> out) {
            s->pipeline->read(j, offset, out);
            s->done += out.size();
            if (s->progress) s->progress(s->done, s->total_bytes);
        });
    }
}

uint64_t SynthModel::tensor_data_bytes() const {
    uint64_t total = 0;
    for (const auto& t : plan_) total += writer_.tensor_bytes(t.type, t.ne);
    return total;
}

std::map<std::string, TypeTotals> SynthModel::bytes_per_type() const {
    std::map<std::string, TypeTotals> out;
    for (const auto& t : plan_) {
        const TypeInfo* info = global_type_table().find(t.type);
        auto& tot = out[info ? info->name : std::to_string(t.type)];
        tot.tensors += 1;
        tot.bytes += writer_.tensor_bytes(t.type, t.ne);
    }
    return out;
}

template <class Sink>
void SynthModel::run(const Sink& sink, const ProgressFn& progress) const {
    stream_->pipeline = std::make_unique<ChunkPipeline>(stream_->jobs, request_.seed, threads());
    stream_->progress = progress;
    stream_->done = 0;
    try {
        sink();
    } catch (...) {
        stream_->pipeline.reset();
        stream_->progress = {};
        throw;
    }
    stream_->pipeline.reset();
    stream_->progress = {};
}

void SynthModel::write(const std::filesystem::path& path, const ProgressFn& progress) const {
    run([&] { writer_.write_to_file(path); }, progress);
}

std::vector<std::byte> SynthModel::write_to_bytes() const {
    std::vector<std::byte> bytes;
    run([&] { bytes = writer_.write_to_bytes(); }, {});
    return bytes;
}

}  // namespace dense::synth
