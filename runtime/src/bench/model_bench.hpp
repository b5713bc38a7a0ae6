// Whole-model benchmark in the manner of llama-bench: for each depth d, prompt processing of P
// tokens (pp) and generation of N tokens (tg), each repeated R times, reported as tokens per second
// (mean and standard deviation), plus time to first token (the pp run: P steps, the last with
// logits) and the device memory the session holds.
//
// Depth: the session's position is moved to d without computing the d tokens before it
// (Session::skip_positions_for_bench): every step then attends over d + i positions of the KV cache,
// which is what makes deep contexts slow, while the bench does not spend minutes on prefill. The
// numbers are the cost of a step at that depth; the text is meaningless, as the weights are.
#pragma once

#include "exec/session.hpp"

#include <string>
#include <vector>

namespace dense::bench {

// The bench's prompt ids: a fixed pseudo-random sequence of ordinary tokens (the first 150k ids are
// text), token i of a prompt.
int32_t prompt_token(int i, int64_t n_vocab);

struct ModelBenchOptions {
    int prompt_tokens = 512;  // -p; 0 = skip pp
    int gen_tokens = 128;     // -n; 0 = skip tg
    std::vector<int64_t> depths{0};
    int reps = 3;
};

struct ModelBenchRow {
    std::string test;  // "pp512", "tg128"
    int64_t depth = 0;
    int tokens = 0;
    std::vector<double> tok_per_s;  // one per repetition
    double mean_tok_per_s() const;
    double stddev_tok_per_s() const;
    bool is_tg() const { return test.rfind("tg", 0) == 0; }  // a generation row (else a prompt row)
    double ttft_s = 0;  // pp rows: mean seconds to the first token's logits
    // tg rows: mean milliseconds a token spent on the host choosing the next token (greedy), part of
    // every tg figure (llama-bench's tg does not choose tokens): reading the device's ARGMAX where the
    // graph has it (greedy_on_device), else the scan over the logits copied back.
    double select_ms = 0;
    bool greedy_on_device = false;
};

// The next token of a greedy run after a step with logits: the device's choice where the session has
// one (exec::Session::greedy_token), else text::greedy_token over the logits; the same token.
int32_t greedy_next(const exec::Session& session);

// Runs on a session whose n_ctx >= max depth + P + N (the caller sizes it). Resets the session.
std::vector<ModelBenchRow> bench_model(exec::Session& session, const ModelBenchOptions& options);

}  // namespace dense::bench
