// Turning command-line flags into the values the stages take: which run config (a YAML file, or the
// architecture's defaults for a bare -m), and the pack policy (config `packs:` plus flags).
#pragma once

#include "model/run_config.hpp"
#include "packs/pack_policy.hpp"

#include <optional>
#include <string>

namespace dense::cli {

struct CommonFlags {
    std::string config;       // --config
    std::string model;        // -m/--model: overrides the config's model, or alone means "defaults"
    std::string vram_budget;  // --vram-budget SIZE|auto: overrides the config's vram_budget
    std::string bus_read_share;  // --bus-read-share auto|S: overrides the config's bus_read_share (empty: not given)
    int64_t prefill_chunk = 0;   // --prefill-chunk N: overrides the config's prefill_chunk (0: not given)
};

// Throws dense::Error(Usage) when neither --config nor -m is given, or for a bad --vram-budget.
model::RunConfig load_run_config(const CommonFlags& flags);

// "auto" -> model::kAutoBusShare, "0".."1" -> that share; anything else (NaN, out of range, not a
// number) -> nullopt. The --bus-read-share flag is checked with it as it is parsed, whatever the command.
std::optional<double> parse_bus_read_share(const std::string& text);

// The config's packs section (if a config was given) merged under the flags' explicit choices.
packs::PackPolicy pack_policy_for(const model::RunConfig* config, const packs::PackPolicy& flags);

}  // namespace dense::cli
