// The executor's rules: state-only prompt tokens change nothing but the skipped logits; a step that
// produces NaN/Inf (injected through a poisoned embedding row) throws and leaves the recurrent state,
// the position and later results exactly as if it never ran; bad token ids and a full context are
// refused without side effects; the layer observer sees every trunk layer.
#include "core/error.hpp"
#include "exec/session_fixture.hpp"
#include "gguf/gguf_writer.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace dense::test {
namespace {

std::unique_ptr<Model> golden() {
    return bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
}

// The golden model with element 0 of token_embd row `row` replaced by NaN.
std::unique_ptr<Model> golden_with_nan_row(int32_t row) {
    const auto src = gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf");
    gguf::GgufWriter w;
    for (const auto& kv : src.kvs())
        if (kv.key != "general.alignment") w.add_value(std::string(kv.key), kv.value);
    for (const auto& t : src.tensors()) {
        std::vector<std::byte> data(t.data.begin(), t.data.end());
        if (t.name == "token_embd.weight") {
            const float nan = std::numeric_limits<float>::quiet_NaN();
            std::memcpy(data.data() + static_cast<size_t>(row) * static_cast<size_t>(t.ne[0]) * 4, &nan, 4);
        }
        w.add_tensor(std::string(t.name), t.type, std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), data);
    }
    return bind_file(gguf::GgufFile::parse_owned(w.write_to_bytes(), "poisoned.gguf"));
}

TEST(SessionRules, StateOnlyPrefixGivesBitIdenticalLastLogits) {
    auto model = golden();
    const auto ids = golden_tokens();
    auto full = make_session(*model, 64);
    auto lean = make_session(*model, 64);
    for (size_t i = 0; i < 12; ++i) {
        full->step(ids[i], true);
        lean->step(ids[i], i == 11);
    }
    ASSERT_EQ(full->logits().size(), lean->logits().size());
    EXPECT_EQ(std::memcmp(full->logits().data(), lean->logits().data(), full->logits().size_bytes()), 0);
    EXPECT_EQ(full->snapshot_state(), lean->snapshot_state());
}

// A step with logits ends with the greedy choice on the session's device (ARGMAX, ABI 1.12; cpu-ref
// here, the GPU packs in gpu_session_test.cpp): it is the host's scan over the same logits, after token
// steps and after a prompt, and there is none after a state-only step or a reset.
TEST(SessionRules, DeviceGreedyChoiceIsTheHostScanOfTheSameLogits) {
    auto model = golden();
    const auto ids = golden_tokens();
    auto s = make_session(*model, static_cast<int64_t>(ids.size()) + 16);
    EXPECT_FALSE(s->greedy_token().has_value());
    s->prefill(ids, true);
    const int32_t tok = expect_device_greedy_chain(*s, 6, "cpu-ref");
    s->step(tok, false);
    EXPECT_FALSE(s->greedy_token().has_value());
    EXPECT_THROW((void)s->logits(), Error);
    s->step(tok, true);
    EXPECT_TRUE(s->greedy_token().has_value());
    s->reset();
    EXPECT_FALSE(s->greedy_token().has_value());
}

// A session asked for the sampler's top_k (SessionOptions::device_top_k) ends a step with logits with the
// k best on its device (TOP_K, ABI 1.15; cpu-ref here, the GPU packs in gpu_session_test.cpp): the host's
// candidates over the same logits, after a prompt and after token steps, and the token drawn from them
// is the one the sampler draws from all the logits. None after a state-only step, a reset, or in a
// session that did not ask (or asked for more than DENSE_TOP_K_MAX).
TEST(SessionRules, DeviceTopKIsTheHostsCandidatesOfTheSameLogits) {
    auto model = golden();
    const auto ids = golden_tokens();
    const int32_t k = 40;
    auto s = make_session(*model, static_cast<int64_t>(ids.size()) + 16, DENSE_TYPE_F32, k);
    EXPECT_FALSE(s->top_k().has_value());
    s->prefill(ids, true);
    text::SamplerConfig cfg;  // temperature 0.8, top_k 40
    cfg.seed = 5;
    text::Sampler device(cfg), host(cfg);
    std::vector<int32_t> history(ids.begin(), ids.end());
    for (int i = 0; i < 6; ++i) {
        const auto top = expect_device_top_k(*s, k, "cpu-ref, step " + std::to_string(i));
        ASSERT_TRUE(top.has_value());
        ASSERT_TRUE(device.takes_top_k(history, static_cast<int32_t>(top->ids.size())));
        const int32_t tok = device.sample_from_top(top->ids, top->values);
        EXPECT_EQ(tok, host.sample(s->logits(), history)) << "step " << i;
        EXPECT_TRUE(s->greedy_token().has_value()) << "ARGMAX still there";
        history.push_back(tok);
        s->step(tok, true);
    }
    s->step(history.back(), false);
    EXPECT_FALSE(s->top_k().has_value());
    s->step(history.back(), true);
    EXPECT_TRUE(s->top_k().has_value());
    s->reset();
    EXPECT_FALSE(s->top_k().has_value());
    for (const int32_t none : {0, DENSE_TOP_K_MAX + 1}) {
        auto plain = make_session(*model, 16, DENSE_TYPE_F32, none);
        plain->step(ids[0], true);
        EXPECT_FALSE(plain->top_k().has_value()) << "device_top_k " << none;
        EXPECT_TRUE(plain->greedy_token().has_value());
    }
    // k = 1 and k = DENSE_TOP_K_MAX, after a single token step.
    for (const int32_t edge : {1, DENSE_TOP_K_MAX}) {
        auto e = make_session(*model, 16, DENSE_TYPE_F32, edge);
        e->step(ids[0], true);
        expect_device_top_k(*e, edge, "k = " + std::to_string(edge));
    }
}

TEST(SessionRules, NanStepLeavesStateAndPositionUntouched) {
    const int32_t poisoned = 7;
    auto model = golden_with_nan_row(poisoned);
    auto clean_model = golden();
    const auto ids = golden_tokens();
    auto s = make_session(*model, 64);
    auto reference = make_session(*clean_model, 64);
    for (size_t i = 0; i < 5; ++i) {
        ASSERT_NE(ids[i], poisoned);
        s->step(ids[i], false);
        reference->step(ids[i], false);
    }
    const auto before = s->snapshot_state();
    try {
        s->step(poisoned, true);
        FAIL() << "a NaN step must throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Numeric);
        EXPECT_NE(std::string(e.what()).find("NaN or Inf"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("position 5"), std::string::npos) << e.what();
    }
    EXPECT_EQ(s->position(), 5);
    EXPECT_EQ(s->snapshot_state(), before);
    // The next token continues as if the bad step never happened.
    ASSERT_NE(ids[5], poisoned);
    s->step(ids[5], true);
    reference->step(ids[5], true);
    EXPECT_EQ(std::memcmp(s->logits().data(), reference->logits().data(), s->logits().size_bytes()), 0);
    EXPECT_EQ(s->snapshot_state(), reference->snapshot_state());
}

TEST(SessionRules, BadTokenIdsAndAFullContextAreRefusedWithoutSideEffects) {
    auto model = golden();
    auto s = make_session(*model, 3);
    s->step(1, false);
    const auto before = s->snapshot_state();
    for (int32_t bad : {-1, 300, 1 << 30}) {
        try {
            s->step(bad, true);
            FAIL() << "token " << bad << " must be refused";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage);
            EXPECT_NE(std::string(e.what()).find("out of range [0, 300)"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(s->position(), 1);
    EXPECT_EQ(s->snapshot_state(), before);
    s->step(2, false);
    s->step(3, true);
    try {
        s->step(4, true);
        FAIL() << "a full context must be refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("context is full: 3 tokens"), std::string::npos) << e.what();
    }
    EXPECT_EQ(s->position(), 3);
}

TEST(SessionRules, ResetStartsOver) {
    auto model = golden();
    auto s = make_session(*model, 16);
    for (int32_t t : {5, 6, 7}) s->step(t, true);
    const std::vector<float> first(s->logits().begin(), s->logits().end());
    s->reset();
    EXPECT_EQ(s->position(), 0);
    for (int32_t t : {5, 6, 7}) s->step(t, true);
    EXPECT_EQ(std::memcmp(first.data(), s->logits().data(), s->logits().size_bytes()), 0);
}

TEST(SessionRules, LayerObserverSeesEveryTrunkLayerAndTheLastIsTheResidual) {
    auto model = golden();
    auto s = make_session(*model, 16);
    std::vector<int64_t> layers;
    std::vector<float> last;
    s->set_layer_observer([&](int64_t layer, int64_t pos, std::span<const float> h) {
        EXPECT_EQ(pos, 0);
        layers.push_back(layer);
        last.assign(h.begin(), h.end());
    });
    s->step(42, false);
    EXPECT_EQ(layers, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    ASSERT_EQ(last.size(), s->hidden().size());
    EXPECT_EQ(std::memcmp(last.data(), s->hidden().data(), s->hidden().size_bytes()), 0);
    for (float v : last) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace dense::test
