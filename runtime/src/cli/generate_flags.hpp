// Flags of the main job (generation) and how they override the run config.
#pragma once

#include "model/run_config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dense::cli {

struct GenerateFlags {
    std::string prompt;                    // -p
    std::string prompt_ids;                // --prompt-ids 1,2,3 (skips the tokenizer)
    bool chat = false;                     // --chat: interactive, keeps the conversation state
    std::optional<int64_t> n_predict;      // -n
    std::optional<double> temperature;     // --temp
    std::optional<int64_t> top_k;
    std::optional<double> top_p, min_p, repeat_penalty, presence_penalty;
    std::optional<uint64_t> seed;
    std::optional<int64_t> context;        // --ctx
    std::optional<std::string> kv_type;    // --kv-type f16|f32
    std::vector<std::string> stop;         // --stop (repeatable, added to the config's)
    std::optional<std::string> system;     // --system (chat)
    std::optional<bool> thinking;          // --think / --no-think (chat)
    bool print_ids = false;                // --print-ids: generated ids instead of text
    bool all_logits = false;               // --all-logits: logits at every prompt position
    std::string logits_out;                // --logits-out FILE (+ FILE.json)
    std::string dump_layers;               // --dump-layers DIR
    bool no_special = false;               // --no-special: special-token text in the prompt is plain text
};

// The config with every given flag applied (flags win).
model::RunConfig apply_flags(model::RunConfig config, const GenerateFlags& flags);

// "1,2,3" -> ids; throws dense::Error(Usage) naming the bad item.
std::vector<int32_t> parse_id_list(const std::string& text);

}  // namespace dense::cli
