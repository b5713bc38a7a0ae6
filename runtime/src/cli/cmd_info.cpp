// `dense-rt info`: what a GGUF holds and whether it binds to its model description — architecture,
// hyperparameters, layer schedule, tensor count, bytes per quant type — or the exact error.
#include "cli/commands.hpp"
#include "cli/loaded_model.hpp"
#include "core/error.hpp"
#include "core/type_table.hpp"
#include "core/units.hpp"
#include "gguf/gguf_file.hpp"
#include "model/model_binding.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <iostream>
#include <map>

namespace dense::cli {

namespace {

struct TypeUsage {
    int64_t tensors = 0;
    uint64_t bytes = 0;
};

void print_file_facts(const gguf::GgufFile& f, std::ostream& out) {
    const auto arch = f.get_string_opt("general.architecture");
    out << "file      " << f.path() << " (" << format_bytes(f.file_size()) << ", GGUF v" << f.version()
        << ", alignment " << f.alignment() << ")\n";
    out << "arch      " << (arch ? std::string(*arch) : std::string("(no general.architecture)")) << "\n";
    if (const auto name = f.get_string_opt("general.name")) out << "name      " << *name << "\n";
    std::map<std::string, TypeUsage> usage;
    uint64_t total = 0;
    for (const auto& t : f.tensors()) {
        const TypeInfo* ti = global_type_table().find(t.type);
        auto& u = usage[ti ? ti->name : "type#" + std::to_string(t.type)];
        u.tensors += 1;
        u.bytes += t.n_bytes;
        total += t.n_bytes;
    }
    out << "tensors   " << f.tensors().size() << " (" << format_bytes(total) << " of tensor data), " << f.kvs().size()
        << " metadata keys\n";
    if (usage.empty()) return;
    out << "bytes per type:\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %-10s %8s %14s %12s %7s\n", "type", "tensors", "bytes", "", "share");
    out << line;
    for (const auto& [name, u] : usage) {
        std::snprintf(line, sizeof line, "  %-10s %8lld %14llu %12s %6.2f%%\n", name.c_str(),
                      static_cast<long long>(u.tensors), static_cast<unsigned long long>(u.bytes),
                      format_bytes(u.bytes).c_str(), total ? 100.0 * static_cast<double>(u.bytes) / static_cast<double>(total) : 0.0);
        out << line;
    }
}

void print_binding(const model::BoundModel& m, const model::ModelSpec& spec, std::ostream& out) {
    out << "description " << spec.source.string() << "\n";
    out << "layers    " << m.layers.size() << ":";
    for (const auto& kind : spec.schedule.kinds) out << " " << m.count_layers(kind) << " " << kind;
    out << "\n  schedule ";
    for (const auto& l : m.layers) out << static_cast<char>(std::toupper(static_cast<unsigned char>(l.kind[0])));
    for (size_t i = 0; i < spec.schedule.kinds.size(); ++i)
        out << (i ? ", " : "  (") << static_cast<char>(std::toupper(static_cast<unsigned char>(spec.schedule.kinds[i][0])))
            << "=" << spec.schedule.kinds[i];
    out << ")\n";
    out << "lm head   " << (m.tied_output ? "tied to token_embd.weight" : "output.weight (untied)") << "\n";
    if (m.skipped_blocks.empty()) {
        out << "skipped   none\n";
    } else {
        out << "skipped   " << m.skipped_blocks.size() << " block(s) validated and never run:";
        for (const auto& b : m.skipped_blocks) out << " " << b.kind << "@blk." << b.index << " (" << b.tensors.size() << " tensors)";
        out << "\n";
    }
    out << "hparams:\n";
    for (const auto& name : m.hparams.names()) out << "  " << name << " = " << m.hparams.describe(name) << "\n";
}

}  // namespace

int cmd_info(const model::RunConfig& config) {
    std::ostream& out = std::cout;
    if (!config.source.empty())
        out << "config    " << config.source.string() << ": context " << config.context << ", vram_budget "
            << (config.vram_budget ? format_bytes(*config.vram_budget) : std::string("auto")) << ", placement "
            << model::to_string(config.placement) << ", kv " << config.kv_type << "\n";
    const gguf::GgufFile file = gguf::GgufFile::open(config.model);
    print_file_facts(file, out);

    const auto description = description_for(file, config);
    if (!description) {
        const auto arch = file.get_string("general.architecture");
        out << "description none: no models/" << arch << ".yaml, so tensors and hparams were not checked\n";
        spdlog::warn("{}: architecture '{}' has no model description; dense-rt cannot run it", file.path(), arch);
        return 0;
    }
    const model::ModelSpec spec = model::ModelSpec::load(*description);
    const model::BoundModel bound = model::bind_model(file, spec);
    for (const auto& w : bound.warnings) spdlog::warn("{}: {}", file.path(), w);
    print_binding(bound, spec, out);
    out << "status    OK: every tensor of the " << spec.arch << " description is present with its shape and an allowed type\n";
    return 0;
}

}  // namespace dense::cli
