// One function per `dense-rt` subcommand. main.cpp parses the command line and calls these; each
// returns the process exit code. Errors a user can cause are dense::Error, caught in main.
#pragma once

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

}  // namespace dense::cli
