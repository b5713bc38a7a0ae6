// `dense-rt synth`: writes a synthetic qwen35 GGUF (runtime/src/synth) and checks that it binds to
// models/qwen35.yaml. Progress goes to stderr (a live line on a terminal, plain lines every 10%
// otherwise); the summary (file, size, tensors, bytes per type) to stdout.
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "gguf/gguf_file.hpp"
#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "synth/synth_model.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

namespace dense::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Progress on stderr: a redrawn line on a terminal (at most 10 times a second), else a plain line at
// every 10%.
class Progress {
public:
    Progress() : tty_(::isatty(STDERR_FILENO) != 0), t0_(Clock::now()), last_draw_(t0_) {}

    void operator()(uint64_t done, uint64_t total) {
        if (total == 0) return;
        const int pct = static_cast<int>(100 * done / total);
        const double s = seconds_since(t0_);
        const double rate = s > 0 ? static_cast<double>(done) / s / 1e9 : 0.0;
        if (tty_) {
            if (done != total && Clock::now() - last_draw_ < std::chrono::milliseconds(100)) return;
            last_draw_ = Clock::now();
            std::fprintf(stderr, "\rsynth: %3d%%  %s / %s  %.2f GB/s   ", pct, format_bytes(done).c_str(),
                         format_bytes(total).c_str(), rate);
            if (done == total) std::fputc('\n', stderr);
            std::fflush(stderr);
        } else if (pct / 10 > last_decile_ || done == total) {
            last_decile_ = pct / 10;
            std::fprintf(stderr, "synth: %3d%%  %s / %s  %.2f GB/s\n", pct, format_bytes(done).c_str(),
                         format_bytes(total).c_str(), rate);
        }
    }

private:
    bool tty_;
    Clock::time_point t0_, last_draw_;
    int last_decile_ = 0;
};

// Binds the written file to its model description: the proof that it is a usable qwen35 model.
void check_binding(const std::filesystem::path& path, std::ostream& out) {
    const auto description = model::find_model_description("qwen35");
    if (!description) {
        out << "binding   skipped: models/qwen35.yaml not found\n";
        return;
    }
    const gguf::GgufFile file = gguf::GgufFile::open(path);
    const model::ModelSpec spec = model::ModelSpec::load(*description);
    const model::BoundModel bound = model::bind_model(file, spec);
    out << "binding   OK against " << description->string() << " (" << bound.layers.size() << " layers:";
    for (const auto& kind : spec.schedule.kinds) out << " " << bound.count_layers(kind) << " " << kind;
    out << ")\n";
}

}  // namespace

int cmd_synth(const SynthFlags& flags) {
    if (flags.arch != "qwen35") throw Error(ErrorKind::Usage, "synth: unknown --arch '" + flags.arch + "' (known: qwen35)");
    synth::SynthRequest req;
    req.shape = synth::make_shape(flags.shape, flags.dims);
    req.mix = synth::parse_mix(flags.mix);
    req.seed = flags.seed;
    req.threads = flags.threads;
    if (!flags.vocab.empty()) {
        req.vocab = flags.vocab;
    } else if (auto v = synth::default_vocab_path()) {
        req.vocab = *v;
    } else {
        throw Error(ErrorKind::Usage,
                    "synth: no --vocab given and ggml-vocab-qwen35.gguf is neither under tests/data/vocab of the "
                    "working directory, nor in <prefix>/share/dense-rt/vocab of this dense-rt, nor in its source tree");
    }
    const std::filesystem::path out_path = flags.out;

    const auto t_plan = Clock::now();
    const synth::SynthModel model(req);
    const auto& vocab = model.vocab();
    std::fprintf(stderr, "synth: qwen35 %s: %s\n", req.shape.name.c_str(), synth::describe(req.shape).c_str());
    std::fprintf(stderr, "synth: vocab %zu tokens from %s (%llu there%s%s), mix %s, seed %llu\n", vocab.size(),
                 vocab.source.string().c_str(), static_cast<unsigned long long>(vocab.source_tokens),
                 vocab.size() > vocab.source_tokens ? ", padded with [PAD<id>] UNUSED tokens"
                 : vocab.size() < vocab.source_tokens ? ", truncated" : "",
                 vocab.dropped_merges ? (", " + std::to_string(vocab.dropped_merges) + " merges dropped").c_str() : "",
                 req.mix.name.c_str(), static_cast<unsigned long long>(req.seed));
    for (const auto& k : vocab.dropped_keys) std::fprintf(stderr, "synth: left out %s (its token was dropped)\n", k.c_str());
    std::fprintf(stderr, "synth: writing %s: %s, %zu tensors, %u threads\n", out_path.string().c_str(),
                 format_bytes(model.file_size()).c_str(), model.tensors().size(), model.threads());

    if (out_path.has_parent_path()) std::filesystem::create_directories(out_path.parent_path());
    Progress progress;
    const auto t_write = Clock::now();
    model.write(out_path, [&](uint64_t done, uint64_t total) { progress(done, total); });
    const double write_s = seconds_since(t_write);

    std::ostream& out = std::cout;
    char line[160];
    std::snprintf(line, sizeof line, "wrote     %s\n", out_path.string().c_str());
    out << line;
    std::snprintf(line, sizeof line, "size      %llu bytes (%s), %zu tensors, %.2f s (%.2f GB/s; %.2f s planning)\n",
                  static_cast<unsigned long long>(model.file_size()), format_bytes(model.file_size()).c_str(),
                  model.tensors().size(), write_s, write_s > 0 ? static_cast<double>(model.file_size()) / write_s / 1e9 : 0.0,
                  std::chrono::duration<double>(t_write - t_plan).count());
    out << line;
    out << "bytes per type:\n";
    const uint64_t total = model.tensor_data_bytes();
    for (const auto& [name, t] : model.bytes_per_type()) {
        std::snprintf(line, sizeof line, "  %-8s %5llu tensors %14llu bytes %11s %6.2f%%\n", name.c_str(),
                      static_cast<unsigned long long>(t.tensors), static_cast<unsigned long long>(t.bytes),
                      format_bytes(t.bytes).c_str(), total ? 100.0 * static_cast<double>(t.bytes) / static_cast<double>(total) : 0.0);
        out << line;
    }
    check_binding(out_path, out);
    return 0;
}

}  // namespace dense::cli
