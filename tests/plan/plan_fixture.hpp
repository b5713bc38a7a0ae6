// Shared setup for the plan tests: synthetic qwen35 models made in memory (any shape override, tied
// head, MTP block), requests for a CUDA device that is not here, and the cpu-ref packs.
#pragma once

#include "common/test_paths.hpp"
#include "exec/session_fixture.hpp"
#include "plan/plan_builder.hpp"
#include "plan/plan_target.hpp"
#include "plan/row_split.hpp"
#include "synth/synth_model.hpp"

#include <algorithm>
#include <functional>
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
    // A fixed chunk: `auto` lowers it to fit a budget (PlanBudget.AutoPrefillChunkStepsDownBeforeAnythingElse),
    // which would hide what the other budget tests look at.
    r.prefill_chunk = 16;
    return r;
}

inline int64_t hp(const Model& m, const std::string& name) {
    return m.bound.hparams.get_int(name);
}

inline uint64_t aligned(uint64_t bytes) {
    return (bytes + 255) / 256 * 256;
}

// Every splittable weight of `m` split at gpu_rows(rows) (rounded down to the 8-row tile, clamped to
// [0, rows]); the other weights wholly on the GPU.
inline plan::Placement split_all_at(const Model& m, const std::function<int64_t(int64_t rows)>& gpu_rows) {
    const auto splittable = plan::splittable_tensors(m.bound, qwen35_spec());
    plan::Placement out;
    for (const auto& r : plan::whole_on_gpu(m.bound).ranges) {
        if (std::find(splittable.begin(), splittable.end(), r.tensor) == splittable.end()) {
            out.ranges.push_back(r);
            continue;
        }
        const int64_t g = std::clamp<int64_t>(gpu_rows(r.end) / 8 * 8, 0, r.end);
        if (g > 0) out.ranges.push_back({r.tensor, 0, g, plan::Side::Gpu});
        if (g < r.end) out.ranges.push_back({r.tensor, g, r.end, plan::Side::Cpu});
    }
    return out;
}

}  // namespace dense::test
