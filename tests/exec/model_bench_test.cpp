// The whole-model bench (bench/model_bench.hpp, `dense-rt bench`) on the CPU reference: what its rows
// and report carry beyond tokens per second.
#include "bench/bench_report.hpp"
#include "bench/model_bench.hpp"
#include "exec/session_fixture.hpp"

namespace dense::test {
namespace {

// `bench`'s tg rows time the host's part of choosing every next token apart: it is inside every tg
// figure. It was the scan over the logits (1.2-1.9 ms of a token on the build machine before session
// 29's blocked scans, text/sampler.cpp; 0.2-0.4 ms on the GPU hosts); since ABI 1.12 the device
// chooses (ARGMAX) and the host reads one word. The report says which, and how much of a token it took.
TEST(ModelBench, TgRowsTimeTheHostsTokenChoice) {
    auto model = bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    auto session = make_session(*model, 32);
    bench::ModelBenchOptions o;
    o.prompt_tokens = 0;
    o.gen_tokens = 4;
    o.reps = 2;
    const auto rows = bench::bench_model(*session, o);
    ASSERT_EQ(rows.size(), 1u);
    const auto& tg = rows[0];
    ASSERT_EQ(tg.tok_per_s.size(), 2u);
    const double token_ms = 1e3 / tg.mean_tok_per_s();
    EXPECT_GT(tg.select_ms, 0.0);
    EXPECT_LT(tg.select_ms, token_ms);  // a part of the token's time
    EXPECT_TRUE(tg.greedy_on_device) << "cpu-ref implements ARGMAX: the graph chooses";
    bench::BenchReport r;
    r.rows = rows;
    const auto md = bench::to_markdown(r);
    EXPECT_NE(md.find("tg4 at depth 0: choosing the next token (greedy, ARGMAX on the device; the host reads it back) took "),
              std::string::npos)
        << md;
    EXPECT_NE(bench::to_json(r).find("\"select_ms_per_token\""), std::string::npos);
    EXPECT_NE(bench::to_json(r).find("\"greedy_on_device\": true"), std::string::npos);
    r.rows[0].greedy_on_device = false;  // packs without ARGMAX: the host scans the logits
    EXPECT_NE(bench::to_markdown(r).find("tg4 at depth 0: choosing the next token on the host (greedy over the logits copied back) took "),
              std::string::npos);
}

// A tg row at depth is set against the read ceiling twice: by its weights alone (the issue's
// roofline) and by everything a token moves (bytes_moved_per_token: + recurrent state + the KV
// history its attention reads). The numbers are chosen so each column has one exact value.
TEST(ModelBench, AllBytesCountTheKvHistoryAndTheState) {
    bench::BenchReport r;
    r.weight_bytes_per_token = 1'000'000'000;
    r.state_bytes_per_token = 100'000'000;
    r.kv_bytes_per_position = 100'000;
    r.ceiling = bench::BandwidthCeiling{};
    r.ceiling->read_gbs = 1000;
    bench::ModelBenchRow tg{"tg3", 998, 3, {100.0}, 0};  // positions 998..1000: 1,000 on average, + 1 for itself
    r.rows = {tg};
    EXPECT_DOUBLE_EQ(bench::bytes_moved_per_token(r, tg), 1.0e9 + 1.0e8 + 1.0e5 * 1000.0);
    const auto md = bench::to_markdown(r);
    // 1.0 GB x 100 tok/s = 100 GB/s (10 % of 1,000); 1.2 GB x 100 = 120 GB/s (12 %).
    EXPECT_NE(md.find("| tg3 | 998 | 100.00 | 0.00 | 100 | 10.0 % | 120 | 12.0 % |  |"), std::string::npos) << md;
    EXPECT_NE(bench::to_json(r).find("\"bytes_moved_per_token\": 1200000000.0"), std::string::npos) << bench::to_json(r);
}

// What `bench` copies into those fields comes from the session's bill: K + V of every full-attention
// layer per position (here f32, from the file's head shape) and both state banks.
TEST(ModelBench, TheBillGivesKvPerPositionFromTheHeadShape) {
    auto model = bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    auto session = make_session(*model, 32);
    const auto& hp = model->bound.hparams;
    const int64_t attn_layers = model->bound.count_layers("full_attention");
    ASSERT_GT(attn_layers, 0);
    const auto expected = static_cast<uint64_t>(attn_layers * 2 * hp.get_int("n_head_kv") * hp.get_int("head_dim") * 4);
    EXPECT_EQ(session->bill().kv_bytes_per_token, expected);
    EXPECT_GT(session->bill().bytes_of(plan::Item::RecurrentState), 0u);
}

}  // namespace
}  // namespace dense::test
