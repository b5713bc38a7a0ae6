// dense-rt command line: parses flags with CLI11 and dispatches to one function per subcommand.
// Generated text (later) goes to stdout; logs, progress and timings go to stderr.
#include "cli/commands.hpp"
#include "cli/run_setup.hpp"
#include "core/error.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <optional>
#include <string>

namespace {

void setup_logging(const std::string& level) {
    auto logger = spdlog::stderr_color_mt("dense-rt");
    logger->set_pattern("%^%l%$: %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"dense-rt: dense hybrid LLM runtime (GGUF, one GPU, kernel packs)"};
    app.require_subcommand(0, 1);
    app.fallthrough();  // common flags may come before or after the subcommand
    app.set_version_flag("--version", std::string("dense-rt ") + DENSE_VERSION);

    dense::cli::CommonFlags common;
    std::string log_level = "info";
    app.add_option("-c,--config", common.config, "Run config YAML (configs/*.yaml)");
    app.add_option("-m,--model", common.model, "GGUF model file (overrides the config's; alone: architecture defaults)");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

    auto* info = app.add_subcommand("info", "Architecture, hparams, layer schedule, tensors and bytes per quant type");

    dense::packs::PackPolicy policy;
    bool json = false;
    auto* packs = app.add_subcommand("packs", "List kernel packs, their scores per device and the ops they register");
    packs->add_flag("--json", json, "Machine-readable output");
    std::optional<std::string> force_pack;
    bool no_default_packs = false;
    packs->add_option("--pack", policy.paths, "Pack file or directory to load (repeatable; searched first)");
    packs->add_flag("--no-default-packs", no_default_packs, "Ignore $DENSE_PACK_PATH and the install dir: only --pack");
    packs->add_option("--prefer", policy.prefer, "Pack name preferred on every device it can run on (repeatable)");
    packs->add_option("--deny", policy.deny, "Pack name never to load (repeatable)");
    packs->add_option("--force", force_pack, "The only pack considered for the main device");
    packs->footer(
        "Packs are searched in --pack paths, then the config's packs.paths, then $DENSE_PACK_PATH\n"
        "(':'-separated dirs), then <dir of dense-rt>/../lib/dense-rt/packs. Set DENSE_FAKE_DEVICES to preview\n"
        "selection on GPUs you do not have, e.g. DENSE_FAKE_DEVICES=\"cuda:12.0:16GiB:RTX 5060 Ti,cuda:9.0:141GiB:H200\"\n"
        "(cuda:<cc>:<memory>:<name>; such devices are marked simulated and never run anything).");

    CLI11_PARSE(app, argc, argv);
    setup_logging(log_level);
    try {
        if (*info) return dense::cli::cmd_info(dense::cli::load_run_config(common));
        if (*packs) {
            if (no_default_packs) policy.use_env = policy.use_default_dir = false;
            policy.force = force_pack;
            std::optional<dense::model::RunConfig> config;
            if (!common.config.empty()) config = dense::model::RunConfig::load(common.config);
            return dense::cli::cmd_packs(dense::cli::pack_policy_for(config ? &*config : nullptr, policy), json);
        }
        std::cout << app.help();
        return 0;
    } catch (const dense::Error& e) {
        spdlog::error("{}", e.what());
        return 1;
    } catch (const std::exception& e) {
        spdlog::error("internal error: {}", e.what());
        return 2;
    }
}
