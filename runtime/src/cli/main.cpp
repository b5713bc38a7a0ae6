// dense-rt command line: parses flags with CLI11 and dispatches to one function per subcommand.
#include "cli/commands.hpp"
#include "core/error.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"dense-rt: dense hybrid LLM runtime (GGUF, one GPU, kernel packs)"};
    app.require_subcommand(0, 1);
    dense::packs::PackPolicy policy;
    bool json = false;
    auto* packs = app.add_subcommand("packs", "List kernel packs, their scores per device and the ops they register");
    packs->add_flag("--json", json, "Machine-readable output");
    CLI11_PARSE(app, argc, argv);
    try {
        if (*packs) return dense::cli::cmd_packs(policy, json);
        std::cout << app.help();
        return 0;
    } catch (const dense::Error& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
}
