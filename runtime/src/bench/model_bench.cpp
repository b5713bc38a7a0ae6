#include "bench/model_bench.hpp"

#include "text/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace dense::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int32_t prompt_token(int i, int64_t n_vocab) {
    const uint64_t h = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
    return static_cast<int32_t>((h >> 33) % static_cast<uint64_t>(std::min<int64_t>(n_vocab, 150000)));
}

int32_t greedy_next(const exec::Session& session) {
    if (const auto chosen = session.greedy_token()) return *chosen;
    return text::greedy_token(session.logits());
}

double ModelBenchRow::mean_tok_per_s() const {
    return tok_per_s.empty() ? 0 : std::accumulate(tok_per_s.begin(), tok_per_s.end(), 0.0) / static_cast<double>(tok_per_s.size());
}

double ModelBenchRow::stddev_tok_per_s() const {
    if (tok_per_s.size() < 2) return 0;
    const double m = mean_tok_per_s();
    double ss = 0;
    for (double v : tok_per_s) ss += (v - m) * (v - m);
    return std::sqrt(ss / static_cast<double>(tok_per_s.size() - 1));
}

std::vector<ModelBenchRow> bench_model(exec::Session& session, const ModelBenchOptions& o) {
    std::vector<ModelBenchRow> rows;
    for (int64_t depth : o.depths) {
        ModelBenchRow pp{"pp" + std::to_string(o.prompt_tokens), depth, o.prompt_tokens, {}, 0};
        ModelBenchRow tg{"tg" + std::to_string(o.gen_tokens), depth, o.gen_tokens, {}, 0};
        // One untimed round first: captures the step graphs, warms caches and clocks.
        for (int r = -1; r < o.reps; ++r) {
            if (o.prompt_tokens > 0) {
                session.reset();
                session.skip_positions_for_bench(depth);
                std::vector<int32_t> prompt(static_cast<size_t>(o.prompt_tokens));
                for (int i = 0; i < o.prompt_tokens; ++i) prompt[static_cast<size_t>(i)] = prompt_token(i, session.n_vocab());
                const auto t = Clock::now();
                // As a run feeds a prompt: batched where the session can, with the last token's
                // logits.
                session.prefill(prompt, true);
                (void)greedy_next(session);
                const double s = seconds_since(t);
                if (r >= 0) {
                    pp.tok_per_s.push_back(o.prompt_tokens / s);
                    pp.ttft_s += s / o.reps;
                }
            }
            if (o.gen_tokens > 0) {
                session.reset();
                session.skip_positions_for_bench(depth);
                session.step(prompt_token(0, session.n_vocab()), true);  // untimed: the token to start from
                const auto t = Clock::now();
                double select_s = 0;
                const auto select = [&] {
                    const auto t0 = Clock::now();
                    const int32_t next = greedy_next(session);
                    select_s += seconds_since(t0);
                    return next;
                };
                int32_t tok = select();
                for (int i = 0; i < o.gen_tokens; ++i) {
                    session.step(tok, true);
                    tok = select();
                }
                if (r >= 0) {
                    tg.tok_per_s.push_back(o.gen_tokens / seconds_since(t));
                    tg.select_ms += select_s * 1e3 / (o.gen_tokens + 1) / o.reps;
                    tg.greedy_on_device = session.greedy_token().has_value();
                }
            }
        }
        if (o.prompt_tokens > 0) rows.push_back(pp);
        if (o.gen_tokens > 0) rows.push_back(tg);
    }
    return rows;
}

}  // namespace dense::bench
