// dense-rt command line: parses flags with CLI11 and dispatches to one function per subcommand.
// Generated text (later) goes to stdout; logs, progress and timings go to stderr.
#include "cli/commands.hpp"
#include "cli/run_setup.hpp"
#include "core/error.hpp"
#include "plan/prefill_graph.hpp"

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
    app.add_option("--vram-budget", common.vram_budget,
                   "VRAM the run may use, e.g. 8GiB (config vram_budget; auto = the device's free memory)");
    app.add_option("--bus-read-share", common.bus_read_share,
                   "With a row split on a GPU: share (0-1) of the rows that do not fit in VRAM that the GPU computes "
                   "itself, copied over PCIe each token, beside the CPU; auto = chosen at load from the bus, CPU and "
                   "GPU rates measured there (config bus_read_share; default auto)")
        ->check(CLI::Validator(
            [](std::string& text) {
                return dense::cli::parse_bus_read_share(text) ? std::string()
                                                              : "'" + text + "' is not 'auto' or a share between 0 and 1";
            },
            "auto|0-1"));
    app.add_option("--prefill-chunk", common.prefill_chunk,
                   "Prompt tokens per batched prefill step; 1 = token by token (config prefill_chunk; default " +
                       std::to_string(dense::plan::default_prefill_chunk(DENSE_DEVICE_CUDA)) + " on a GPU, down to " +
                       std::to_string(dense::plan::smallest_auto_prefill_chunk(DENSE_DEVICE_CUDA)) +
                       " where the VRAM plan needs it; " +
                       std::to_string(dense::plan::default_prefill_chunk(DENSE_DEVICE_CPU)) + " on the CPU)")
        ->check(CLI::Range(int64_t{1}, dense::model::kMaxPrefillChunk));
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

    auto* info = app.add_subcommand("info", "Architecture, hparams, layer schedule, tensors and bytes per quant type");

    // The main job (no subcommand): generation.
    dense::cli::GenerateFlags gen;
    CLI::Option* prompt_opt = app.add_option("-p,--prompt", gen.prompt, "Prompt text (completion; see --chat for conversations)");
    CLI::Option* prompt_ids_opt = app.add_option("--prompt-ids", gen.prompt_ids, "Prompt as token ids 1,2,3 (skips the tokenizer)");
    app.add_flag("--chat", gen.chat,
                 "Interactive chat on stdin; the conversation state is kept between turns (the default when a config or "
                 "model is given with no prompt and no subcommand)");
    app.add_option("-n,--n-predict", gen.n_predict, "Tokens to generate (config sampling.max_tokens)");
    app.add_option("--temp", gen.temperature, "Temperature; 0 = greedy");
    app.add_option("--top-k", gen.top_k, "Top-k (0 = off)");
    app.add_option("--top-p", gen.top_p, "Top-p (1 = off)");
    app.add_option("--min-p", gen.min_p, "Min-p (0 = off)");
    app.add_option("--repeat-penalty", gen.repeat_penalty, "Repetition penalty (1 = off)");
    app.add_option("--presence-penalty", gen.presence_penalty, "Presence penalty (0 = off)");
    app.add_option("--seed", gen.seed, "Sampling seed (0 = from the clock)");
    app.add_option("--ctx", gen.context, "Context length in tokens (config `context`)");
    app.add_option("--kv-type", gen.kv_type, "KV cache type: f16 or f32");
    app.add_option("--stop", gen.stop, "Stop string (repeatable)");
    app.add_option("--system", gen.system, "System prompt for --chat");
    bool think = false, no_think = false;
    app.add_flag("--think", think, "Chat with thinking on");
    app.add_flag("--no-think", no_think, "Chat with thinking off");
    app.add_flag("--print-ids", gen.print_ids, "Print generated token ids (comma-separated) instead of text");
    app.add_flag("--all-logits", gen.all_logits, "Compute logits at every prompt position (teacher-forced comparisons)");
    app.add_option("--logits-out", gen.logits_out, "Write float32 logits of every position that produced them (+ FILE.json)");
    app.add_option("--dump-layers", gen.dump_layers, "Write the hidden state after every layer to DIR/layerNN.f32");
    app.add_flag("--no-special", gen.no_special, "Treat special-token text in the prompt as plain text");

    std::string tok_text, detok_ids;
    bool tok_no_special = false;
    auto* tokenize = app.add_subcommand("tokenize", "Print the token ids of TEXT (comma-separated)");
    tokenize->add_option("text", tok_text, "Text to tokenize")->required();
    tokenize->add_flag("--no-special", tok_no_special, "Special-token text is plain text");
    auto* detokenize = app.add_subcommand("detokenize", "Print the text of comma-separated token ids");
    detokenize->add_option("ids", detok_ids, "Ids, e.g. 1,2,3")->required();
    detokenize->add_flag("--no-special", tok_no_special, "Do not render special tokens");

    // `dense-rt synth` (cli/cmd_synth.cpp): a synthetic qwen35 GGUF of any shape and quant mix.
    dense::cli::SynthFlags syn;
    auto* synth = app.add_subcommand("synth", "Write a synthetic qwen35 GGUF: any shape, any quant mix, random weights");
    synth->add_option("--arch", syn.arch, "Architecture")->check(CLI::IsMember({"qwen35"}))->capture_default_str();
    synth->add_option("--shape", syn.shape, "Named shape: 27b, tiny, small, wide, deep")->required();
    synth->add_option("--mix", syn.mix, "seed-iq4 (all 12 quant formats) or one type for every matrix (q4_k, f16, ...)")->required();
    synth->add_option("-o,--out", syn.out, "Output GGUF file")->required();
    synth->add_option("--seed", syn.seed, "Seed of the weights")->capture_default_str();
    synth->add_option("--vocab", syn.vocab, "Vocabulary GGUF whose tokenizer.* keys are copied (default: the qwen35 test vocab)");
    synth->add_option("--threads", syn.threads, "Generator threads (default: all cores); the file does not depend on it");
    synth->add_option("--n-embd", syn.dims.n_embd, "Override: embedding length");
    synth->add_option("--n-layer", syn.dims.n_layer, "Override: trunk layers");
    synth->add_option("--n-ff", syn.dims.n_ff, "Override: feed-forward length");
    synth->add_option("--n-head", syn.dims.n_head, "Override: query heads");
    synth->add_option("--n-head-kv", syn.dims.n_head_kv, "Override: KV heads");
    synth->add_option("--head-dim", syn.dims.head_dim, "Override: attention head dim (n_rot follows as head_dim/4)");
    synth->add_option("--n-rot", syn.dims.n_rot, "Override: rotary dims per head");
    synth->add_option("--ssm-state", syn.dims.ssm_state, "Override: Gated DeltaNet head dim (state size)");
    synth->add_option("--ssm-groups", syn.dims.ssm_groups, "Override: Gated DeltaNet key heads");
    synth->add_option("--ssm-heads", syn.dims.ssm_heads, "Override: Gated DeltaNet value heads");
    synth->add_option("--vocab-size", syn.dims.vocab_size, "Override: vocabulary entries (pads or truncates the vocab)");
    synth->add_option("--full-attn-interval", syn.dims.full_attn_interval, "Override: every Nth layer is full attention");
    synth->add_option("--context-length", syn.dims.context_length, "Override: qwen35.context_length");
    synth->add_flag("--tied", syn.dims.tied, "No output.weight: the LM head is tied to token_embd");
    synth->add_flag("--mtp", syn.dims.mtp, "Append the MTP block (nextn_predict_layers = 1)");

    // `dense-rt bench` (cli/cmd_bench.cpp): llama-bench-style model bench and the GEMV micro-bench.
    dense::cli::BenchFlags bf;
    auto* bench = app.add_subcommand("bench", "Benchmark: pp/tg tok/s at context depths, and GEMV GB/s per format");
    bench->add_option("-p,--n-prompt", bf.prompt_tokens, "Prompt tokens per pp test (0: none)")->capture_default_str();
    bench->add_option("-n,--n-gen", bf.gen_tokens, "Generated tokens per tg test (0: none)")->capture_default_str();
    bench->add_option("-d,--depth", bf.depths, "Context depths, comma-separated (e.g. 0,8192,32768)")->capture_default_str();
    bench->add_option("-r,--repetitions", bf.reps, "Repetitions per test")->capture_default_str();
    bench->add_option("--json", bf.json_out, "Also write the results as JSON to FILE");
    bench->add_option("--plot", bf.plot_out, "Also write an SVG plot of tok/s against depth to FILE");
    bench->add_flag("--gemv", bf.gemv, "Also run the per-format GEMV micro-bench at the 27B shapes");
    bench->add_flag("--gemv-only", bf.gemv_only, "Only the bandwidth ceiling and the GEMV micro-bench (no model)");
    bench->add_option("--gemv-formats", bf.gemv_formats, "Formats for the GEMV micro-bench (default: all 12)")->delimiter(',');
    bench->add_option("--gemm-cols", bf.gemm_cols,
                      "GEMV micro-bench: time GEMM_Q (batched prefill) of T columns instead, e.g. 16,32,64")
        ->delimiter(',')
        ->check(CLI::Range(2, 4096));
    bench->add_option("--ceiling-buffer", bf.ceiling_gib, "GiB per buffer of the bandwidth probe")->capture_default_str();
    bench->add_flag("--cpu", bf.cpu, "Benchmark the CPU reference instead of the main device");
    bench->add_option("--profile", bf.profile_steps,
                      "Also time N decode steps node by node at the first depth: time per op and tensor role "
                      "(and, with prompt rows and batched prefill, up to 4 prompt steps the same way)")
        ->check(CLI::NonNegativeNumber);
    bench->add_flag("--cpu-rows", bf.cpu_rows,
                    "Only the row split's CPU side: GEMV rows (Q8_32 activation) on the worker pool, GB/s per "
                    "thread count, from memory and from a file mapping, beside the host's read bandwidth (no model)");
    bench->add_option("--cpu-threads", bf.cpu_threads, "Worker counts for --cpu-rows (default: 1,2,4,8, all but one, all)")
        ->delimiter(',')
        ->check(CLI::PositiveNumber);
    bench->add_option("--cpu-rows-gib", bf.cpu_rows_gib, "GiB of weight rows per --cpu-rows pass")->capture_default_str();
    bench->add_option("--repeat-nodes", bf.repeat_nodes,
                      "Timing experiment: run every node whose implementation name contains one of these words "
                      "(e.g. rms_norm,swiglu) twice per step; the tok/s difference is their marginal cost. The "
                      "outputs may then not be the model's (a residual GEMV adds twice)")
        ->delimiter(',');

    // `dense-rt plan` (cli/cmd_plan.cpp): the VRAM bill before anything is allocated.
    dense::cli::PlanFlags pf;
    auto* plan = app.add_subcommand("plan", "VRAM bill (per item and layer kind), budget, placement; exit 3 if over budget");
    plan->add_option("--context", pf.context, "Context length in tokens (config `context`)");
    plan->add_flag("--json", pf.json, "The plan as JSON on stdout");
    plan->add_flag("--allow-cpu-split", pf.allow_cpu_split,
                   "Over budget, exit 0 when the row split onto the CPU it shows fits");
    plan->footer(
        "The budget is --vram-budget (or vram_budget in the config), else the free memory of the GPU. Without a\n"
        "GPU here, give --vram-budget to plan for one. --kv-type f16|f32 sets the KV cache type. Exit codes: 0 fits,\n"
        "3 over budget (the bill says what would fit, incl. the row split onto the CPU; 0 with --allow-cpu-split\n"
        "when that split fits), 1 error.");

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
        "(cuda:<cc>:<memory>:<name>; they replace the real GPUs, are marked simulated and never run anything).");

    CLI11_PARSE(app, argc, argv);
    setup_logging(log_level);
    try {
        if (*info) return dense::cli::cmd_info(dense::cli::load_run_config(common));
        if (*synth) return dense::cli::cmd_synth(syn);
        if (*plan) {
            if (!pf.context) pf.context = gen.context;  // --ctx, as for generation
            pf.kv_type = gen.kv_type;
            const auto config = dense::cli::load_run_config(common);
            return dense::cli::cmd_plan(config, pf, dense::cli::pack_policy_for(&config, policy));
        }
        if (*bench) {
            std::string line;
            for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
            if (bf.gemv_only || bf.cpu_rows) return dense::cli::cmd_bench(nullptr, bf, dense::cli::pack_policy_for(nullptr, policy), line);
            auto config = dense::cli::load_run_config(common);
            if (gen.context) {  // --ctx: the bench's context at least (the VRAM plan is checked at it)
                if (*gen.context < 1) throw dense::Error(dense::ErrorKind::Usage, "--ctx must be at least 1");
                config.context = *gen.context;
            }
            if (gen.kv_type) {  // --kv-type, as for generation (the bench's KV cache and its VRAM plan)
                if (*gen.kv_type != "f16" && *gen.kv_type != "f32")
                    throw dense::Error(dense::ErrorKind::Usage, "--kv-type must be f16 or f32");
                config.kv_type = *gen.kv_type;
            }
            return dense::cli::cmd_bench(&config, bf, dense::cli::pack_policy_for(&config, policy), line);
        }
        if (*tokenize) return dense::cli::cmd_tokenize(dense::cli::load_run_config(common), tok_text, !tok_no_special);
        if (*detokenize)
            return dense::cli::cmd_detokenize(dense::cli::load_run_config(common), detok_ids, !tok_no_special);
        // An empty prompt given on purpose (often an unset shell variable) is an error, not a request
        // for the help text: there is no token to start from.
        if (prompt_opt->count() > 0 && gen.prompt.empty())
            throw dense::Error(dense::ErrorKind::Usage, "--prompt is empty: give the text to continue (or use --chat)");
        if (prompt_ids_opt->count() > 0 && gen.prompt_ids.empty())
            throw dense::Error(dense::ErrorKind::Usage, "--prompt-ids is empty: give token ids such as 1,2,3");
        // A model to run and nothing else asked for (`dense-rt --config my.yaml`): the chat, as with --chat
        // (lines from stdin, Ctrl-D ends), rather than the help text. `packs` is the one subcommand left.
        const bool only_a_model = (!common.config.empty() || !common.model.empty()) && !*packs;
        if (!gen.prompt.empty() || !gen.prompt_ids.empty() || gen.chat || only_a_model) {
            if (gen.prompt.empty() && gen.prompt_ids.empty()) gen.chat = true;  // no prompt: the chat
            if (think && no_think) throw dense::Error(dense::ErrorKind::Usage, "--think and --no-think contradict each other");
            if (think || no_think) gen.thinking = think;
            const auto config = dense::cli::apply_flags(dense::cli::load_run_config(common), gen);
            return dense::cli::cmd_generate(config, gen, dense::cli::pack_policy_for(&config, policy));
        }
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
