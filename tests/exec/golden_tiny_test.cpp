// The whole qwen35 forward pass on cpu-ref against llama.cpp's recorded logits for the golden tiny
// F32 model (tests/data/golden-tiny). Tolerances from its README: max abs <= 1e-4 with an F32 KV
// cache (float32 vs llama.cpp's float32, different summation order), <= 5e-3 with an F16 cache
// (K/V rounded to fp16), and the same argmax at every position.
#include "exec/session_fixture.hpp"

#include <algorithm>
#include <cmath>

namespace dense::test {
namespace {

struct Stats {
    double max_abs = 0;
    int argmax_mismatches = 0;
};

Stats compare(const std::vector<std::vector<float>>& ours, const std::vector<std::vector<float>>& ref) {
    Stats s;
    EXPECT_EQ(ours.size(), ref.size());
    for (size_t p = 0; p < std::min(ours.size(), ref.size()); ++p) {
        EXPECT_EQ(ours[p].size(), ref[p].size());
        for (size_t i = 0; i < ours[p].size(); ++i)
            s.max_abs = std::max(s.max_abs, std::fabs(static_cast<double>(ours[p][i]) - ref[p][i]));
        const auto a = std::max_element(ours[p].begin(), ours[p].end()) - ours[p].begin();
        const auto b = std::max_element(ref[p].begin(), ref[p].end()) - ref[p].begin();
        s.argmax_mismatches += a != b;
    }
    return s;
}

std::vector<std::vector<float>> run_all_positions(dense_type_id kv) {
    auto model = bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    auto session = make_session(*model, 128, kv);
    std::vector<std::vector<float>> rows;
    for (int32_t t : golden_tokens()) {
        session->step(t, true);
        rows.emplace_back(session->logits().begin(), session->logits().end());
    }
    return rows;
}

TEST(GoldenTiny, F32KvMatchesLlamaCppBatchTokenwiseAndMixed) {
    const auto ours = run_all_positions(DENSE_TYPE_F32);
    ASSERT_EQ(ours.size(), 80u);
    for (const char* f : {"logits.llamacpp.f32kv.batch.txt", "logits.llamacpp.f32kv.tokenwise.txt",
                          "logits.llamacpp.f32kv.half-batch-then-tokenwise.txt"}) {
        const Stats s = compare(ours, golden_logits(f));
        EXPECT_LE(s.max_abs, 1e-4) << f;
        EXPECT_EQ(s.argmax_mismatches, 0) << f;
        std::printf("[ golden   ] %-52s max abs %.3g\n", f, s.max_abs);
    }
}

TEST(GoldenTiny, F16KvMatchesLlamaCppDefaults) {
    const Stats s = compare(run_all_positions(DENSE_TYPE_F16), golden_logits("logits.llamacpp.f16kv-flashattn.batch.txt"));
    EXPECT_LE(s.max_abs, 5e-3);
    EXPECT_EQ(s.argmax_mismatches, 0);
    std::printf("[ golden   ] f16 KV vs logits.llamacpp.f16kv-flashattn.batch.txt max abs %.3g\n", s.max_abs);
}

}  // namespace
}  // namespace dense::test
