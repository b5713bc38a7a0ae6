// The main job: `dense-rt --config C -p "prompt"` streams generated text to stdout; `--chat` is an
// interactive chat that keeps the conversation state between turns (each turn processes only its
// new tokens). Logs, progress and the timing summary go to stderr.
#include "cli/commands.hpp"
#include "cli/loaded_model.hpp"
#include "cli/logits_writer.hpp"
#include "cli/sampling_setup.hpp"
#include "cli/vram_guard.hpp"
#include "core/error.hpp"
#include "exec/session.hpp"
#include "packs/pack_manager.hpp"
#include "text/chat_template.hpp"
#include "text/sampler.hpp"
#include "text/stop_strings.hpp"
#include "text/tokenizer.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <iostream>

namespace dense::cli {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Counters {
    int64_t prompt_tokens = 0;
    double prompt_seconds = 0;
    int64_t generated = 0;
    double gen_seconds = 0;
};

// Everything a run needs, built once.
struct Runner {
    std::unique_ptr<LoadedModel> model;
    std::unique_ptr<packs::PackManager> packs;
    std::unique_ptr<text::Tokenizer> tokenizer;
    std::unique_ptr<exec::Session> session;
    std::unique_ptr<LogitsWriter> logits;
    std::unique_ptr<LayerDumper> dumper;
    Counters counters;

    // Feeds ids at the next positions; logits only for the last one (or all with all_logits).
    void prefill(const std::vector<int32_t>& ids, bool all_logits) {
        const auto t = Clock::now();
        size_t i = 0;
        if (!all_logits && !ids.empty()) {  // batched where the session can, logits for the last token only
            session->prefill(ids, true);
            if (logits->enabled()) logits->add(session->position() - 1, session->logits());
            i = ids.size();
        }
        for (; i < ids.size(); ++i) {
            const bool want = all_logits || i + 1 == ids.size();
            session->step(ids[i], want);
            if (want && logits->enabled()) logits->add(session->position() - 1, session->logits());
        }
        counters.prompt_tokens += static_cast<int64_t>(ids.size());
        counters.prompt_seconds += seconds_since(t);
    }

    // Samples up to max_tokens tokens, streaming text (or ids). Returns the last sampled token if
    // it was NOT fed back (generation stopped on it or at the limit), for the next chat turn.
    std::optional<int32_t> generate(const model::RunConfig& config, bool print_ids, std::vector<int32_t>& history) {
        text::Sampler sampler(sampler_config(config));
        text::TextStream stream(*tokenizer, config.sampling.stop);
        const auto t = Clock::now();
        std::optional<int32_t> unfed;
        std::string ids_text;
        for (int64_t n = 0; n < config.sampling.max_tokens; ++n) {
            // Greedy without penalties: the device's ARGMAX where the session has it (the same token
            // as the sampler's scan); sampled without penalties: the draw from the device's top k
            // (TOP_K: the candidates the sampler would build, the same random sequence). The logits
            // then never cross the bus. Else the sampler over the logits.
            std::optional<int32_t> chosen;
            if (sampler.is_plain_greedy(history)) {
                chosen = session->greedy_token();
            } else if (const auto top = session->top_k();
                       top && sampler.takes_top_k(history, static_cast<int32_t>(top->ids.size()))) {
                chosen = sampler.sample_from_top(top->ids, top->values);
            }
            const int32_t tok = chosen ? *chosen : sampler.sample(session->logits(), history);
            history.push_back(tok);
            ++counters.generated;
            const auto piece = stream.push(tok);
            if (print_ids) {
                ids_text += (ids_text.empty() ? "" : ",") + std::to_string(tok);
            } else {
                std::fwrite(piece.text.data(), 1, piece.text.size(), stdout);
                std::fflush(stdout);
            }
            if (piece.stop != text::StopReason::None || n + 1 == config.sampling.max_tokens || session->position() >= session->n_ctx()) {
                unfed = tok;
                break;
            }
            session->step(tok, true);
            if (logits->enabled()) logits->add(session->position() - 1, session->logits());
        }
        if (print_ids) {
            std::printf("%s\n", ids_text.c_str());
        } else {
            const std::string rest = stream.finish();
            std::fwrite(rest.data(), 1, rest.size(), stdout);
        }
        std::fflush(stdout);
        counters.gen_seconds += seconds_since(t);
        return unfed;
    }
};

void print_timings(const Counters& c, double load_seconds) {
    auto rate = [](int64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0.0; };
    std::fprintf(stderr, "\ntimings: load %.2f s | prompt %lld tok in %.3f s (%.1f tok/s) | generated %lld tok in %.3f s (%.1f tok/s)\n",
                 load_seconds, static_cast<long long>(c.prompt_tokens), c.prompt_seconds, rate(c.prompt_tokens, c.prompt_seconds),
                 static_cast<long long>(c.generated), c.gen_seconds, rate(c.generated, c.gen_seconds));
}

std::unique_ptr<Runner> start(const model::RunConfig& config, const GenerateFlags& flags, const packs::PackPolicy& policy) {
    auto r = std::make_unique<Runner>();
    // Packs first: a model may store tensors in a format a pack registers (dense.type.<id> keys),
    // which the GGUF reader can only resolve once the pack has registered it.
    r->packs = std::make_unique<packs::PackManager>(policy);
    r->packs->load();
    r->model = load_model(config);
    r->tokenizer = std::make_unique<text::Tokenizer>(text::Tokenizer::from_gguf(r->model->file));
    exec::SessionOptions so;
    so.n_ctx = config.context;
    so.kv_type = config.kv_type == "f32" ? DENSE_TYPE_F32 : DENSE_TYPE_F16;
    so.threads = static_cast<int32_t>(config.threads);
    so.keep_page_cache = config.keep_page_cache;
    so.bus_read_share = config.bus_read_share;
    so.prefill_chunk = config.prefill_chunk;
    // A sampled run without penalties draws from the k best logits the device keeps (TOP_K, ABI 1.15).
    so.device_top_k = session_top_k(config);
    // The main device (the best GPU with a usable pack) unless the config asks for the CPU. A GPU
    // pack that lacks an op this model needs is reported, and the run falls back to the CPU reference.
    so.device = config.placement == model::Placement::Cpu ? 0 : r->packs->main_device_index();
    if (so.device != 0) {
        try {
            place_in_vram(*r->model, *r->packs, so, config);  // the bill before any allocation
            r->session = std::make_unique<exec::Session>(r->model->bound, r->model->spec, *r->packs, so);
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::Pack || config.placement == model::Placement::GpuOnly) throw;
            spdlog::warn("{}; running on the CPU reference instead", e.what());
            so.device = 0;
        }
    }
    if (!r->session) {
        so.prefill_chunk = config.prefill_chunk;  // the GPU's plan may have lowered it
        place_in_vram(*r->model, *r->packs, so, config);  // on the CPU: no split; says the budget does not apply
        r->session = std::make_unique<exec::Session>(r->model->bound, r->model->spec, *r->packs, so);
    }
    r->logits = std::make_unique<LogitsWriter>(flags.logits_out, r->session->n_vocab());
    r->dumper = std::make_unique<LayerDumper>(flags.dump_layers, static_cast<int64_t>(r->model->bound.layers.size()),
                                              r->model->bound.hparams.get_int("n_embd"));
    if (r->dumper->enabled()) {
        LayerDumper* d = r->dumper.get();
        r->session->set_layer_observer([d](int64_t layer, int64_t pos, std::span<const float> h) { d->add(layer, pos, h); });
    }
    spdlog::info("session: {} nodes, {} context, KV {}, {:.1f} MiB allocated on {}", r->session->node_count(),
                 config.context, config.kv_type, static_cast<double>(r->session->memory_bytes()) / 1048576.0,
                 r->session->device_label());
    return r;
}

int run_chat(Runner& r, const model::RunConfig& config, bool print_ids) {
    std::vector<int32_t> history;
    std::optional<int32_t> unfed;
    int turn = 0;
    std::string line;
    while (true) {
        std::fprintf(stderr, "\n> ");
        std::fflush(stderr);
        if (!std::getline(std::cin, line)) break;
        if (line.empty()) continue;
        std::vector<text::ChatMessage> messages;
        if (turn == 0 && !config.chat.system_prompt.empty()) messages.push_back({"system", config.chat.system_prompt, {}});
        messages.push_back({"user", line, {}});
        std::string rendered = text::render_qwen35_chat(messages, {true, config.chat.thinking});
        // Later turns continue the conversation already in the session: close the previous reply
        // (its end token was sampled but not fed yet) and append only the new turn.
        std::vector<int32_t> ids;
        if (turn > 0) {
            if (unfed && r.tokenizer->is_eog(*unfed)) ids.push_back(*unfed);
            else {
                if (unfed) ids.push_back(*unfed);
                const auto close = r.tokenizer->encode("<|im_end|>", true);
                ids.insert(ids.end(), close.begin(), close.end());
            }
            rendered = "\n" + rendered;
        }
        const auto turn_ids = r.tokenizer->encode(rendered, true);
        ids.insert(ids.end(), turn_ids.begin(), turn_ids.end());
        if (r.session->position() + static_cast<int64_t>(ids.size()) >= r.session->n_ctx())
            throw Error(ErrorKind::Usage, "turn " + std::to_string(turn + 1) + " needs " + std::to_string(ids.size()) +
                                              " tokens but only " + std::to_string(r.session->n_ctx() - r.session->position()) +
                                              " context slots are left (raise `context`)");
        spdlog::info("turn {}: processing {} new tokens (kept {} tokens of earlier turns in the session)", turn + 1,
                     ids.size(), r.session->position());
        r.prefill(ids, false);
        history.insert(history.end(), ids.begin(), ids.end());
        unfed = r.generate(config, print_ids, history);
        ++turn;
    }
    return 0;
}

}  // namespace

int cmd_generate(const model::RunConfig& config, const GenerateFlags& flags, const packs::PackPolicy& policy) {
    const auto t0 = Clock::now();
    auto r = start(config, flags, policy);
    const double load_seconds = seconds_since(t0);
    if (flags.chat) {
        run_chat(*r, config, flags.print_ids);
    } else {
        std::vector<int32_t> ids = flags.prompt_ids.empty() ? r->tokenizer->encode(flags.prompt, !flags.no_special)
                                                             : parse_id_list(flags.prompt_ids);
        if (ids.empty()) throw Error(ErrorKind::Usage, "empty prompt: give -p TEXT or --prompt-ids IDS");
        for (int32_t id : ids)
            if (id < 0 || id >= r->session->n_vocab())
                throw Error(ErrorKind::Usage, "prompt token id " + std::to_string(id) + " is out of range [0, " +
                                                  std::to_string(r->session->n_vocab()) + ")");
        if (static_cast<int64_t>(ids.size()) > config.context)
            throw Error(ErrorKind::Usage, "prompt of " + std::to_string(ids.size()) + " tokens does not fit the context of " +
                                              std::to_string(config.context) + " (raise `context` or --ctx)");
        r->prefill(ids, flags.all_logits);
        std::vector<int32_t> history = ids;
        if (config.sampling.max_tokens > 0) r->generate(config, flags.print_ids, history);
    }
    r->logits->finish();
    r->dumper->finish();
    print_timings(r->counters, load_seconds);
    return 0;
}

}  // namespace dense::cli
