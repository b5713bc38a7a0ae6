#include "cli/sampling_setup.hpp"

#include <dense/abi/dense_abi.h>

namespace dense::cli {

text::SamplerConfig sampler_config(const model::RunConfig& config) {
    text::SamplerConfig sc;
    sc.temperature = static_cast<float>(config.sampling.temperature);
    sc.top_k = static_cast<int32_t>(config.sampling.top_k);
    sc.top_p = static_cast<float>(config.sampling.top_p);
    sc.min_p = static_cast<float>(config.sampling.min_p);
    sc.repeat_penalty = static_cast<float>(config.sampling.repeat_penalty);
    sc.presence_penalty = static_cast<float>(config.sampling.presence_penalty);
    sc.penalty_last_n = static_cast<int32_t>(config.sampling.repeat_last_n);
    sc.seed = config.sampling.seed;
    return sc;
}

int32_t session_top_k(const model::RunConfig& config) {
    return text::device_top_k_for(sampler_config(config), DENSE_TOP_K_MAX);
}

}  // namespace dense::cli
