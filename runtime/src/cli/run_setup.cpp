#include "cli/run_setup.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

#include <cstdlib>

namespace dense::cli {

model::RunConfig load_run_config(const CommonFlags& flags) {
    if (flags.config.empty() && flags.model.empty())
        throw Error(ErrorKind::Usage, "no model: give --config FILE.yaml or -m FILE.gguf");
    model::RunConfig c = flags.config.empty() ? model::RunConfig::defaults_for(flags.model)
                                              : model::RunConfig::load(flags.config);
    if (!flags.model.empty()) c.model = flags.model;  // -m wins over the config's model
    if (flags.vram_budget == "auto") {  // the device's free memory, whatever the config says
        c.vram_budget.reset();
        c.vram_budget_source.clear();
    } else if (!flags.vram_budget.empty()) {
        const auto bytes = parse_byte_size(flags.vram_budget);
        if (!bytes || *bytes == 0)
            throw Error(ErrorKind::Usage, "--vram-budget: '" + flags.vram_budget +
                                              "' is not a size; use e.g. 8GiB, 7.5GB, 512MiB, or auto (the "
                                              "device's free memory)");
        c.vram_budget = *bytes;
        c.vram_budget_source = "--vram-budget";
    }
    if (!flags.bus_read_share.empty()) {
        const auto share = parse_bus_read_share(flags.bus_read_share);
        if (!share)
            throw Error(ErrorKind::Usage, "--bus-read-share: '" + flags.bus_read_share +
                                              "' is not 'auto' or a share between 0 and 1");
        c.bus_read_share = *share;
    }
    if (flags.prefill_chunk > 0) c.prefill_chunk = flags.prefill_chunk;      // CLI11 checked the range
    return c;
}

packs::PackPolicy pack_policy_for(const model::RunConfig* config, const packs::PackPolicy& flags) {
    packs::PackPolicy p = flags;
    if (config == nullptr) return p;
    // Flags' paths are searched first, then the config's.
    p.paths.insert(p.paths.end(), config->packs.paths.begin(), config->packs.paths.end());
    p.prefer.insert(p.prefer.end(), config->packs.prefer.begin(), config->packs.prefer.end());
    p.deny.insert(p.deny.end(), config->packs.deny.begin(), config->packs.deny.end());
    if (!p.force) p.force = config->packs.force;
    return p;
}

std::optional<double> parse_bus_read_share(const std::string& text) {
    if (text == "auto") return model::kAutoBusShare;
    char* end = nullptr;
    const double share = std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || *end != '\0' || !(share >= 0.0 && share <= 1.0)) return std::nullopt;
    return share;
}

}  // namespace dense::cli
