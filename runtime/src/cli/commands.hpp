// One function per `dense-rt` subcommand. main.cpp parses the command line and calls these; each
// returns the process exit code. Errors a user can cause are dense::Error, caught in main.
#pragma once

#include "cli/bench_flags.hpp"
#include "cli/generate_flags.hpp"
#include "cli/plan_flags.hpp"
#include "cli/synth_flags.hpp"
#include "model/run_config.hpp"
#include "packs/pack_policy.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace dense::cli {

// `dense-rt packs`: lists every pack found, its ABI version, score per device and the ops x types
// it registers; packs refused (wrong ABI major, missing export, failing init, score 0 everywhere)
// are listed with the reason.
int cmd_packs(const packs::PackPolicy& policy, bool json);

// `dense-rt info`: file facts, the model description's hparams and layer schedule, bytes per quant
// type; or the exact validation / binding error (thrown as dense::Error).
int cmd_info(const model::RunConfig& config);

// The main job: generate text from -p / --prompt-ids, or an interactive --chat.
int cmd_generate(const model::RunConfig& config, const GenerateFlags& flags, const packs::PackPolicy& policy);

// `dense-rt tokenize -m F "text"` / `dense-rt detokenize -m F 1,2,3`: ids as comma-separated text.
int cmd_tokenize(const model::RunConfig& config, const std::string& text, bool parse_special);
int cmd_detokenize(const model::RunConfig& config, const std::string& ids, bool render_special);

// `dense-rt bench`: llama-bench-style model benchmark (pp/tg at depths; markdown, JSON, SVG) and
// the per-format GEMV micro-bench against a bandwidth ceiling measured in the same run.
// `config` is null with --gemv-only.
int cmd_bench(const model::RunConfig* config, const BenchFlags& flags, const packs::PackPolicy& policy,
              const std::string& command_line);

// `dense-rt plan`: the VRAM bill of the run `config` describes (per item and layer kind), the
// budget, the placement decision and what would fit; text or JSON on stdout. Returns 0 when it
// fits, kPlanOverBudgetExit when not.
int cmd_plan(model::RunConfig config, const PlanFlags& flags, const packs::PackPolicy& policy);

// `dense-rt synth`: writes a synthetic qwen35 GGUF (any shape, any quant mix, seeded random weights)
// and checks that it binds to models/qwen35.yaml.
int cmd_synth(const SynthFlags& flags);

}  // namespace dense::cli
