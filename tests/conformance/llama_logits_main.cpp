// llama-logits: the oracle side of the teacher-forced conformance tests (a test helper, never shipped).
//
//   llama-logits --lib-dir DIR --model F.gguf --ids 1,2,3 [--kv f32|f16] [--flash-attn on|off]
//                [--batch all|N|N,M,...] [--variant haswell] --out logits.f32
//
// Writes float32 logits row-major [positions x vocab] to --out and the sidecar <out>.json (see
// logits_io.hpp), the same format as `dense-rt --logits-out`. Exit codes: 0 done, 1 user error (bad
// flag, model llama.cpp cannot load, id out of range), 2 internal error, 3 the oracle cannot run here
// (library missing, CPU lacks the variant's ISA) so that tests skip rather than fail.
#include "llama_logits_runner.hpp"
#include "logits_io.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>

int main(int argc, char** argv) {
    using namespace dense::conformance;
    CLI::App app{"llama-logits: llama.cpp (CPU, pinned variant, no repacking, 1 thread) logits at every position"};
    LlamaRunOptions options;
    std::string lib_dir, model, ids, batch = "all", flash = "off", out;
    app.add_option("--lib-dir", lib_dir,
                   "Folder with libllama.v0.5.0.so, libggml*.so (npm @node-llama-cpp/linux-x64@3.22.1)")
        ->required();
    app.add_option("--model", model, "GGUF model file")->required();
    app.add_option("--ids", ids, "Comma-separated token ids, decoded teacher-forced from position 0")->required();
    app.add_option("--kv", options.kv, "KV cache type")->check(CLI::IsMember({"f32", "f16"}))->capture_default_str();
    app.add_option("--flash-attn", flash, "Flash attention")
        ->check(CLI::IsMember({"on", "off"}))
        ->capture_default_str();
    app.add_option(
           "--batch", batch,
           "Tokens per llama_decode call: all, N (chunks of N; 1 = one at a time) or N,M,... (the last repeats, "
           "e.g. 40,1)")
        ->capture_default_str();
    app.add_option("--variant", options.variant, "CPU variant library libggml-cpu-<variant>.so to pin")
        ->capture_default_str();
    app.add_option("--out", out, "Logits output (float32); the sidecar goes to <out>.json")->required();
    app.add_flag("--verbose", options.verbose, "Print llama.cpp's log to stderr");
    CLI11_PARSE(app, argc, argv);

    try {
        options.lib_dir = lib_dir;
        options.model = model;
        options.ids = parse_ids(ids);
        options.batch_schedule = parse_batch_schedule(batch);
        options.flash_attn = flash == "on";
        const LogitMatrix m = run_llama_logits(options);
        write_logits(out, m);
        std::fprintf(
            stderr, "llama-logits: %zu positions x vocab %zu -> %s (variant %s, kv %s, flash-attn %s, batch %s)\n",
            m.rows, m.vocab, out.c_str(), options.variant.c_str(), options.kv.c_str(), flash.c_str(), batch.c_str());
        return 0;
    } catch (const OracleUnavailable& e) {
        std::cerr << "llama-logits: oracle unavailable: " << e.what() << "\n";
        return 3;
    } catch (const dense::Error& e) {
        std::cerr << "llama-logits: " << e.what() << "\n";
        return e.kind() == dense::ErrorKind::Internal ? 2 : 1;
    } catch (const std::exception& e) {
        std::cerr << "llama-logits: internal error: " << e.what() << "\n";
        return 2;
    }
}
