// Shared setup for the plan tests: synthetic qwen35 models made in memory (any shape override, tied
// head, MTP block), requests for a CUDA device that is not here, and the cpu-ref packs.
#pragma once

#include "common/test_paths.hpp"
#include "exec/session_fixture.hpp"
#include "plan/plan_builder.hpp"
#include "plan/plan_target.hpp"
#include "synth/synth_model.hpp"

#include <memory>
#include <string>

namespace dense::test {

struct SynthOptions {
    std::string mix = "seed-iq4";
    bool tied = false;
    bool mtp = false;
    uint32_t vocab_size = 2048;  // 0: the real 151,936-token vocabulary (slower to make)
};

inline std::unique_ptr<Model> synth_tiny(const SynthOptions& o = {}) {
    synth::ShapeOverrides ov;
    ov.tied = o.tied;
    ov.mtp = o.mtp;
    if (o.vocab_size) ov.vocab_size = o.vocab_size;
    synth::SynthRequest r;
    r.shape = synth::make_shape("tiny", ov);
    r.mix = synth::parse_mix(o.mix);
    r.seed = 3;
    r.vocab = data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
    r.threads = 2;
    return bind_file(gguf::GgufFile::parse_owned(synth::SynthModel(r).write_to_bytes(), "synth:tiny:" + o.mix));
}

// A plan for a CUDA device that is not here (no pack can be asked).
inline plan::PlanRequest absent_gpu(int64_t n_ctx, dense_type_id kv = DENSE_TYPE_F16) {
    plan::PlanRequest r;
    r.n_ctx = n_ctx;
    r.kv_type = kv;
    r.target.kind = DENSE_DEVICE_CUDA;
    r.target.label = "a test GPU (not here)";
    return r;
}

inline int64_t hp(const Model& m, const std::string& name) {
    return m.bound.hparams.get_int(name);
}

inline uint64_t aligned(uint64_t bytes) {
    return (bytes + 255) / 256 * 256;
}

}  // namespace dense::test
