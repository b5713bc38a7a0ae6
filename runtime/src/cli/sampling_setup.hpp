// The sampler a run config asks for, and what its session keeps on the device for it: one rule for
// the run (cmd_generate.cpp) and for the plan of that run (cmd_plan.cpp, cli/vram_guard.cpp), so
// that both build the same graph.
#pragma once

#include "model/run_config.hpp"
#include "text/sampler.hpp"

#include <cstdint>

namespace dense::cli {

text::SamplerConfig sampler_config(const model::RunConfig& config);

// exec::SessionOptions::device_top_k for a run of `config`: the sampler's top_k where it samples
// without penalties and k <= DENSE_TOP_K_MAX (the device then keeps the k best logits, TOP_K), else 0.
int32_t session_top_k(const model::RunConfig& config);

}  // namespace dense::cli
