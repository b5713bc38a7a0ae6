// The whole token step on a GPU pack against the same step on cpu-ref: synthetic tiny qwen35 models
// (all 12 quant formats, or Q8_0 everywhere), per-layer hidden states, logits and greedy tokens; and
// the step replayed from a captured device graph against the same step run op by op. Skips (with
// the reason) when no GPU pack can run here.
#include "common/pack_loading.hpp"
#include "common/scoped_env.hpp"
#include "common/test_paths.hpp"
#include "exec/session_fixture.hpp"
#include "plan/bus_share.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/weight_arena.hpp"
#include "synth/synth_model.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <functional>
#include <utility>
#include <map>
#include <cmath>
#include <optional>
#include <random>

namespace dense::test {
namespace {

// Every pack of the build (cpu-ref and the CUDA packs), on the probed devices.
packs::PackManager& all_packs() {
    // Never destroyed: packs stay loaded for the whole process (pack_manager.hpp).
    static packs::PackManager* pm = load_packs_from({build_pack_dir()}).release();
    return *pm;
}

// The first real CUDA device some pack can serve, or the reason there is none.
std::optional<size_t> gpu_device(std::string& why) {
    const auto& pm = all_packs();
    for (size_t i = 0; i < pm.devices().size(); ++i) {
        const auto& d = pm.devices()[i];
        if (d.kind() != DENSE_DEVICE_CUDA || d.simulated) continue;
        if (pm.chosen_pack(i) != nullptr) return i;
        why = "no kernel pack scores above 0 on " + d.id();
        return std::nullopt;
    }
    if (why.empty()) why = "no CUDA device (no driver or no GPU on this machine)";
    return std::nullopt;
}

#define REQUIRE_GPU(var)                                  \
    std::string var##_why;                                \
    const auto var = gpu_device(var##_why);               \
    if (!var) GTEST_SKIP() << "GPU test: " << var##_why;

struct SynthFile {
    std::vector<std::byte> bytes;
    std::unique_ptr<Model> model;
};

SynthFile synth_tiny(const std::string& mix) {
    synth::SynthRequest r;
    r.shape = synth::make_shape("tiny", {});
    r.mix = synth::parse_mix(mix);
    r.seed = 7;
    r.vocab = data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
    r.threads = 2;
    SynthFile f;
    f.bytes = synth::SynthModel(r).write_to_bytes();
    f.model = bind_file(gguf::GgufFile::parse(f.bytes, "synth:tiny:" + mix));
    return f;
}

std::unique_ptr<exec::Session> session_on(const Model& m, size_t device, bool device_graph = true,
                                          dense_type_id gemv_activation = DENSE_TYPE_NONE,
                                          std::optional<plan::Placement> split = std::nullopt,
                                          int64_t prefill_chunk = -1) {
    exec::SessionOptions o;
    o.gemv_activation = gemv_activation;
    o.prefill_chunk = prefill_chunk;
    o.n_ctx = 128;
    o.kv_type = DENSE_TYPE_F16;
    o.device = device;
    o.device_graph = device_graph;
    o.row_split = std::move(split);
    return std::make_unique<exec::Session>(m.bound, qwen35_spec(), all_packs(), o);
}

double cosine(std::span<const float> a, std::span<const float> b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        ab += double(a[i]) * b[i];
        aa += double(a[i]) * a[i];
        bb += double(b[i]) * b[i];
    }
    return ab / std::sqrt(aa * bb);
}

int32_t argmax(std::span<const float> v) {
    return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

std::vector<int32_t> random_prompt(int n, int32_t vocab, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> u(0, std::min(vocab, 151000) - 1);
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (auto& t : ids) t = u(rng);
    return ids;
}

// Hidden states after every layer at every position: the GPU pack's layer outputs against cpu-ref's
// with the same inputs (both teacher-forced on one token sequence). cpu-ref is run with the GPU's
// activation format (Q8_32, whose cpu-ref dot products are the GPU kernels' oracle), so the two
// sides differ only by float summation order and the fp32 math of the activation ops (bounds in
// tests/cuda: ~1e-6 relative per op). Bar: cosine >= 0.9999 for every layer's output at every
// position and for the logits (the bar), identical argmax, identical greedy tokens.
//
// Why a quantized model can still drift: the activation quantizer is discontinuous. When an element
// sits within ~1e-7 (relative) of a rounding boundary, the last-bit difference between the two
// sides' norms flips its int8 code; the random-weight recurrent layers then amplify that step by
// step (the llama.cpp oracle shows the same effect against cpu-ref, issue 3). Measured on the H200:
// seed-iq4 worst layer 0.9999904, logits 0.9999594; q8_0 falls smoothly from 1.0 at layer 0 to
// 0.99888 at layer 7 with one argmax flip in 12 positions (no layer jumps: no op is wrong). F32
// weights have no quantizer: there the sides differ by fp32 rounding alone.
// `half_split`: the GPU session runs with half of every splittable weight's rows on the CPU (the
// row split's executor, exec/host_nodes.hpp), which must keep the same bar: its CPU rows compute
// what cpu-ref computes.
void compare_with_cpu_ref(const std::string& mix, double min_cosine, int max_argmax_flips, bool half_split = false,
                          bool same_greedy_tokens = true) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny(mix);
    auto cpu = session_on(*f.model, 0, true, DENSE_TYPE_Q8_32);
    std::optional<plan::Placement> split;
    if (half_split) split = split_all_at(*f.model, [](int64_t rows) { return rows / 2; });
    auto dev = session_on(*f.model, *gpu, true, DENSE_TYPE_NONE, split);
    std::vector<std::vector<float>> cpu_layers, gpu_layers;
    std::vector<int64_t> layer_of;
    cpu->set_layer_observer([&](int64_t l, int64_t, std::span<const float> h) {
        cpu_layers.emplace_back(h.begin(), h.end());
        layer_of.push_back(l);
    });
    dev->set_layer_observer([&](int64_t, int64_t, std::span<const float> h) { gpu_layers.emplace_back(h.begin(), h.end()); });

    const auto prompt = random_prompt(12, static_cast<int32_t>(cpu->n_vocab()), 11);
    double worst_layer = 1, worst_logits = 1;
    int mismatches = 0;
    for (size_t i = 0; i < prompt.size(); ++i) {
        cpu->step(prompt[i], true);
        dev->step(prompt[i], true);
        worst_logits = std::min(worst_logits, cosine(cpu->logits(), dev->logits()));
        mismatches += argmax(cpu->logits()) != argmax(dev->logits());
    }
    ASSERT_EQ(cpu_layers.size(), gpu_layers.size());
    ASSERT_FALSE(cpu_layers.empty());
    int64_t first_bad = -1;
    for (size_t i = 0; i < cpu_layers.size(); ++i) {
        const double c = cosine(cpu_layers[i], gpu_layers[i]);
        if (c < 0.9999 && first_bad < 0) first_bad = layer_of[i];
        worst_layer = std::min(worst_layer, c);
    }
    EXPECT_GE(worst_layer, min_cosine) << mix << ": first layer below 0.9999: " << first_bad;
    std::map<int64_t, double> per_layer;  // layer -> worst cosine over the positions (diagnostics)
    for (size_t i = 0; i < cpu_layers.size(); ++i) {
        const double c = cosine(cpu_layers[i], gpu_layers[i]);
        auto [it, fresh] = per_layer.emplace(layer_of[i], c);
        if (!fresh) it->second = std::min(it->second, c);
    }
    for (const auto& [l, c] : per_layer) std::printf("[ %s ] layer %lld worst cosine %.9f\n", mix.c_str(), static_cast<long long>(l), c);
    EXPECT_GE(worst_logits, min_cosine) << mix;
    EXPECT_LE(mismatches, max_argmax_flips) << mix << ": argmax differs at teacher-forced positions";
    ::testing::Test::RecordProperty("worst_layer_cosine", std::to_string(worst_layer));
    ::testing::Test::RecordProperty("worst_logits_cosine", std::to_string(worst_logits));
    std::printf("[ %s ] worst layer cosine %.7f, worst logits cosine %.7f over %zu positions\n", mix.c_str(),
                worst_layer, worst_logits, prompt.size());

    // Greedy generation from the prompt, each side feeding back its own tokens: the same 16 tokens.
    cpu->set_layer_observer({});
    dev->set_layer_observer({});
    std::vector<int32_t> cpu_tokens, gpu_tokens;
    int32_t tc = argmax(cpu->logits()), tg = argmax(dev->logits());
    for (int i = 0; i < 16; ++i) {
        cpu_tokens.push_back(tc);
        gpu_tokens.push_back(tg);
        cpu->step(tc, true);
        dev->step(tg, true);
        tc = argmax(cpu->logits());
        tg = argmax(dev->logits());
    }
    const auto agree = std::mismatch(cpu_tokens.begin(), cpu_tokens.end(), gpu_tokens.begin()).first - cpu_tokens.begin();
    std::printf("[ %s ] greedy tokens agree for %td of 16\n", mix.c_str(), agree);
    if (same_greedy_tokens) {
        EXPECT_EQ(cpu_tokens, gpu_tokens) << mix;
    }
}

// The bar on the all-formats model and on F32 weights (every activation op, no quantizer).
TEST(GpuSession, SeedIq4MixMatchesCpuRefLayerByLayer) { compare_with_cpu_ref("seed-iq4", 0.9999, 0); }

TEST(GpuSession, F32ModelMatchesCpuRefLayerByLayer) { compare_with_cpu_ref("f32", 0.9999, 0); }

// The same per-layer and logits bar with half of every weight's rows on the CPU. Greedy tokens are
// not required to agree: measured on the H200, the split's layers stay >= 0.99996 and its logits
// >= 0.99993 against cpu-ref at every teacher-forced position with no argmax flip, yet the free-running
// sequences part at the 2nd token (a near tie, after which each side feeds back its own tokens).
// The F32 split test below shows the executor itself adds no error.
TEST(GpuSession, RowSplitSeedIq4MixMatchesCpuRefLayerByLayer) { compare_with_cpu_ref("seed-iq4", 0.9999, 0, true, false); }

// Known gap against the 0.9999 bar (see above): measured 0.99888; bounded so a real defect (which
// gives cosines far below, e.g. 0.91 when the two sides used different activation formats) fails.
TEST(GpuSession, Q8_0ModelDriftsOnlyByRoundingFlips) { compare_with_cpu_ref("q8_0", 0.998, 1); }

// Steps both sessions through `prompt` in lockstep; where `logits_at(i)`, their logits must agree
// bit for bit, and their state after the last step too.
void expect_bit_identical_steps(exec::Session& a, exec::Session& b, const std::vector<int32_t>& prompt,
                                const std::function<bool(size_t)>& logits_at = [](size_t) { return true; }) {
    for (size_t i = 0; i < prompt.size(); ++i) {
        const bool logits = logits_at(i);
        a.step(prompt[i], logits);
        b.step(prompt[i], logits);
        if (!logits) continue;
        const auto x = a.logits(), y = b.logits();
        ASSERT_EQ(x.size(), y.size());
        EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin())) << "position " << i;
    }
    EXPECT_EQ(a.snapshot_state(), b.snapshot_state());
}

// The replayed device graph must compute exactly what the op-by-op run computes (same kernels, same
// order): logits bit for bit, state-only prompt steps included.
TEST(GpuSession, CapturedGraphReplaysTheSameStepBitForBit) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    auto direct = session_on(*f.model, *gpu, false);
    auto replay = session_on(*f.model, *gpu, true);
    const auto prompt = random_prompt(20, static_cast<int32_t>(direct->n_vocab()), 5);
    expect_bit_identical_steps(*direct, *replay, prompt,
                               [&](size_t i) { return i % 3 == 2 || i + 1 == prompt.size(); });
}

std::unique_ptr<exec::Session> split_session_on(const Model& m, size_t device, plan::Placement split,
                                                bool device_graph = true, double bus_share = 0) {
    exec::SessionOptions o;
    o.n_ctx = 128;
    o.kv_type = DENSE_TYPE_F16;
    o.device = device;
    o.device_graph = device_graph;
    o.threads = 4;
    o.row_split = std::move(split);
    o.bus_read_share = bus_share;
    return std::make_unique<exec::Session>(m.bound, qwen35_spec(), all_packs(), o);
}

// A row split on the GPU (exec/host_nodes.hpp): the CPU rows run on the CPU pack with the GPU's own
// activation bytes (copied from the device), so a split changes only the float summation order of
// the rows the CPU computes (~1e-6 relative per GEMV, tests/cuda). Compared with the same GPU
// without a split, at several split points: half of every splittable weight (ffn_down's
// GEMV+residual and the LM head included), all rows but one tile on the CPU, every row on the CPU
// (weights with an empty GPU slot), and the planner's own choice for a third of the weights; with
// state-only steps among the prompt's.
struct SplitBar {
    double min_cosine;  // every compared position's logits
    int max_flips;      // teacher-forced positions whose argmax may differ
    bool same_tokens;   // 16 greedy tokens identical
};

// bus_share > 0: that share of each split weight's host rows is computed by the GPU itself from
// copies made over PCIe into VRAM staging slots during the step (exec/bus_copies.hpp), the CPU
// computing the rest; 1: the CPU computes none.
void split_matches_unsplit(const std::string& mix, SplitBar bar, double bus_share = 0) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny(mix);
    const Model& m = *f.model;
    struct Case {
        std::string name;
        plan::Placement placement;
    };
    std::vector<Case> cases;
    cases.push_back({"half", split_all_at(m, [](int64_t rows) { return rows / 2; })});
    cases.push_back({"one tile on the gpu", split_all_at(m, [](int64_t) { return 8; })});
    cases.push_back({"all on the cpu", split_all_at(m, [](int64_t) { return 0; })});
    // The planner as runs on a GPU use it: token_embd in host memory first (a host table), then a
    // third of the weights' bytes as rows (the table alone is more than a third of the F32 model).
    uint64_t tables = 0;
    for (const auto* t : plan::weight_arena(m.bound).tensors)
        for (const auto& name : plan::row_read_tables(m.bound, qwen35_spec()))
            if (t->name == name) tables += t->n_bytes;
    cases.push_back({"planner, a third", plan::choose_row_split(m.bound, qwen35_spec(),
                                                                tables + plan::weight_arena(m.bound).bytes / 3, {}, true)
                                             .placement});
    auto plain = session_on(m, *gpu);
    const auto prompt = random_prompt(12, static_cast<int32_t>(plain->n_vocab()), 23);
    std::vector<std::vector<float>> reference;
    for (int32_t t : prompt) {
        plain->step(t, true);
        reference.emplace_back(plain->logits().begin(), plain->logits().end());
    }
    std::vector<int32_t> plain_tokens;
    for (int i = 0; i < 16; ++i) {
        plain_tokens.push_back(argmax(plain->logits()));
        plain->step(plain_tokens.back(), true);
    }
    for (const auto& c : cases) {
        SCOPED_TRACE(mix + ", split " + c.name + ", bus share " + std::to_string(bus_share));
        auto split = split_session_on(m, *gpu, c.placement, true, bus_share);
        EXPECT_GT(split->bill().cpu_read_bytes, 0u);
        // auto (plan/bus_share.hpp): the share measured and chosen at load, and what from.
        const double share = split->bus_read_share();
        if (plan::is_auto_bus_share(bus_share)) {
            EXPECT_GE(share, 0.0);
            EXPECT_LE(share, 1.0);
            EXPECT_NE(split->bus_share_note().find("GB/s"), std::string::npos) << split->bus_share_note();
            std::printf("[ %s split %s ] bus_read_share auto: %s\n", mix.c_str(), c.name.c_str(),
                        split->bus_share_note().c_str());
        } else {
            EXPECT_EQ(share, bus_share);
            EXPECT_TRUE(split->bus_share_note().empty());
        }
        if (plan::is_auto_bus_share(bus_share)) {
            if (split->bus_weight_bytes() > 0) {
                EXPECT_GT(share, 0.0);
            }
            if (share == 0) {
                EXPECT_EQ(split->bus_weight_bytes(), 0u);
            } else if (share >= 0.5) {
                EXPECT_GT(split->bus_weight_bytes(), 0u);  // half of each split weight's host rows or more
            }
            EXPECT_LE(split->bus_weight_bytes(), split->bill().cpu_read_bytes);
        } else if (bus_share > 0) {
            EXPECT_GT(split->bus_weight_bytes(), 0u);
            EXPECT_LE(split->bus_weight_bytes(), split->bill().cpu_read_bytes);
        } else {
            EXPECT_EQ(split->bus_weight_bytes(), 0u);
        }
        double worst = 1;
        int flips = 0;
        std::string per_position;
        for (size_t i = 0; i < prompt.size(); ++i) {
            split->step(prompt[i], i % 4 != 1);  // state-only steps too (the LM head's CPU rows skipped)
            if (i % 4 == 1) continue;
            const double cos = cosine(split->logits(), reference[i]);
            char buf[32];
            std::snprintf(buf, sizeof buf, " %.7f", cos);
            per_position += buf;
            worst = std::min(worst, cos);
            flips += argmax(split->logits()) != argmax(reference[i]);
        }
        EXPECT_GE(worst, bar.min_cosine);
        EXPECT_LE(flips, bar.max_flips);
        std::vector<int32_t> tokens;
        for (int i = 0; i < 16; ++i) {
            tokens.push_back(argmax(split->logits()));
            split->step(tokens.back(), true);
        }
        if (bar.same_tokens) {
            EXPECT_EQ(tokens, plain_tokens);
        }
        const auto stats = split->host_split_stats();
        // At 1 the GPU reads every host row: no CPU part at all (auto: whatever rows its share left).
        if (plan::is_auto_bus_share(bus_share) ? split->bus_weight_bytes() < split->bill().cpu_read_bytes : bus_share < 1) {
            EXPECT_GT(stats.jobs, 0u);
            EXPECT_GT(stats.bytes_to_host, 0u);
            EXPECT_GT(stats.bytes_to_device, 0u);
        } else {
            EXPECT_EQ(stats.jobs, 0u);
        }
        const auto same = std::mismatch(tokens.begin(), tokens.end(), plain_tokens.begin()).first - tokens.begin();
        std::printf("[ %s split %s, bus share %.2f ] logits cosine per position:%s; greedy tokens agree for %td of 16; "
                    "%llu CPU GEMV parts, %.1f ms CPU, %.1f ms waited; %llu bytes of rows read over the bus\n",
                    mix.c_str(), c.name.c_str(), share, per_position.c_str(), same,
                    static_cast<unsigned long long>(stats.jobs), stats.cpu_ms, stats.wait_ms,
                    static_cast<unsigned long long>(split->bus_weight_bytes()));
    }
}

// F32 weights: no activation quantizer, so nothing can flip and the sides differ by fp32 summation
// order alone. Measured on the H200: cosine 1.0000000 at every position for all four split points,
// 16 of 16 greedy tokens the same. This is the test that the executor computes what the unsplit
// step computes (a wrong row, a missed join or a stale copy gives cosines far below).
TEST(GpuSession, RowSplitF32ModelMatchesTheUnsplitStep) { split_matches_unsplit("f32", {0.99999, 0, true}); }

// Quantized weights: the Q8_32 activation quantizer is discontinuous, so the last-bit differences of
// the CPU rows' summation order flip an int8 code now and then, and the random-weight recurrent
// layers carry that step forward (the effect GpuSession.Q8_0ModelDriftsOnlyByRoundingFlips bounds
// for GPU against cpu-ref). Measured on the H200 (half split): positions 0-3 at 1.0000000, then one
// abrupt drop at position 4 (0.99975, a flip, not a drift), worst 0.99684 at position 10; the
// other splits 0.9947-0.9992; no teacher-forced argmax flip; greedy tokens agree for 3-6 of 16. Bar:
// cosine >= 0.99 at every position and no argmax flip; a defect in the split (a wrong or stale
// row block) falls far below (0.91 when the two sides merely used different activation formats).
TEST(GpuSession, RowSplitMatchesTheUnsplitStep) { split_matches_unsplit("seed-iq4", {0.99, 0, false}); }

// Host rows computed by the GPU itself from copies over the bus (exec/bus_copies.hpp), half of them
// beside the CPU's and then all of them: the bus rows run the same GPU kernels on the same bytes,
// from staging slots instead of the arena, so the F32 model holds the strict bar and the quantized
// one the split's own.
TEST(GpuSession, BusRowsF32ModelMatchTheUnsplitStep) {
    split_matches_unsplit("f32", {0.99999, 0, true}, 0.5);
    split_matches_unsplit("f32", {0.99999, 0, true}, 1.0);
}

// bus_read_share auto: the session measures the bus, CPU and GPU rates on its biggest split weight
// at load and picks the share from them; whatever it picks, the step computes what the unsplit one
// does (the same bar as the fixed shares).
TEST(GpuSession, AutoBusShareIsMeasuredAndMatchesTheUnsplitStep) {
    split_matches_unsplit("f32", {0.99999, 0, true}, plan::kAutoBusShare);
}

TEST(GpuSession, BusRowsMatchTheUnsplitStep) {
    split_matches_unsplit("seed-iq4", {0.99, 0, false}, 0.5);
    split_matches_unsplit("seed-iq4", {0.99, 0, false}, 1.0);
}

// token_embd as a host table (plan/row_split.hpp): the GPU's embedding lookup reads its row from
// page-locked host memory over the bus instead of the weight arena. Same bytes, same kernel: logits
// bit for bit at every position, captured and node by node, and the bill holds the table's bytes
// out of VRAM.
TEST(GpuSession, HostTableEmbeddingIsBitIdenticalToTheArenaOne) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    const Model& m = *f.model;
    plan::Placement placement = plan::whole_on_gpu(m.bound);
    uint64_t table_bytes = 0;
    for (auto& r : placement.ranges)
        if (r.tensor == "token_embd.weight") {
            r.side = plan::Side::HostTable;
            for (const auto* t : plan::weight_arena(m.bound).tensors)
                if (t->name == r.tensor) table_bytes = t->n_bytes;
        }
    ASSERT_GT(table_bytes, 0u);
    for (const bool device_graph : {true, false}) {
        SCOPED_TRACE(device_graph ? "captured" : "node by node");
        auto plain = session_on(m, *gpu);
        auto hosted = split_session_on(m, *gpu, placement, device_graph);
        EXPECT_EQ(plain->bill().weight_bytes - hosted->bill().weight_bytes, plan::weight_slot_bytes(table_bytes));
        EXPECT_EQ(hosted->bill().cpu_read_bytes, 0u);
        expect_bit_identical_steps(*plain, *hosted, random_prompt(10, static_cast<int32_t>(plain->n_vocab()), 31));
    }
}

// The split step captured into a device graph (copies and host functions included) replays exactly
// what the node-by-node run computes: the CPU chunks are fixed row ranges, so both are deterministic.
TEST(GpuSession, RowSplitCapturedGraphReplaysBitForBit) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    const auto placement = split_all_at(*f.model, [](int64_t rows) { return rows / 2; });
    for (const double bus_share : {0.0, 0.5}) {  // with bus rows: their copies on the second stream too
        SCOPED_TRACE("bus share " + std::to_string(bus_share));
        auto direct = split_session_on(*f.model, *gpu, placement, false, bus_share);
        auto replay = split_session_on(*f.model, *gpu, placement, true, bus_share);
        expect_bit_identical_steps(*direct, *replay, random_prompt(10, static_cast<int32_t>(direct->n_vocab()), 9));
    }
}

// DENSE_ROW_SPLIT_SYNC=words (exec/host_nodes.hpp): the CPU parts handed over by words in mapped host
// memory (stream memory operations) instead of host functions change when the work runs, never what
// it computes: logits and state bit for bit against the host-function hand-over, captured and node by
// node, with bus rows too.
TEST(GpuSession, RowSplitWordHandOverMatchesHostFunctions) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    const auto placement = split_all_at(*f.model, [](int64_t rows) { return rows / 2; });
    const char* before = std::getenv("DENSE_ROW_SPLIT_SYNC");
    const std::string saved = before != nullptr ? before : "";
    for (const bool device_graph : {true, false}) {
        SCOPED_TRACE(device_graph ? "captured" : "node by node");
        ::setenv("DENSE_ROW_SPLIT_SYNC", "hostfn", 1);
        auto by_host_fn = split_session_on(*f.model, *gpu, placement, device_graph, 0.5);
        ::setenv("DENSE_ROW_SPLIT_SYNC", "words", 1);
        auto by_words = split_session_on(*f.model, *gpu, placement, device_graph, 0.5);
        expect_bit_identical_steps(*by_host_fn, *by_words, random_prompt(12, static_cast<int32_t>(by_words->n_vocab()), 41));
        EXPECT_TRUE(by_host_fn->host_split_stats().waits_timed);
        EXPECT_FALSE(by_words->host_split_stats().waits_timed) << "the words were not used (no ABI 1.7 on this device?)";
        EXPECT_GT(by_words->host_split_stats().jobs, 0u);
    }
    if (before != nullptr)
        ::setenv("DENSE_ROW_SPLIT_SYNC", saved.c_str(), 1);
    else
        ::unsetenv("DENSE_ROW_SPLIT_SYNC");
}

// GEMVs on one input as GEMV_Q_MULTI nodes (graph/gemv_lists.hpp, on by default on a GPU) against
// every GEMV alone (DENSE_GEMV_LISTS=0): each list output is bit for bit its GEMV_Q (dense_abi.h), so
// the steps must be too, captured and node by node, unsplit and with a split (whose GPU rows still
// merge where they are adjacent); and the lists must exist (fewer nodes).
TEST(GpuSession, GemvListsChangeNoResult) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    const auto placement = split_all_at(*f.model, [](int64_t rows) { return rows / 2; });
    const char* before = std::getenv("DENSE_GEMV_LISTS");
    const std::string saved = before != nullptr ? before : "";
    for (const bool device_graph : {true, false}) {
        SCOPED_TRACE(device_graph ? "captured" : "node by node");
        ::setenv("DENSE_GEMV_LISTS", "0", 1);
        auto alone = session_on(*f.model, *gpu, device_graph);
        auto alone_split = split_session_on(*f.model, *gpu, placement, device_graph);
        ::setenv("DENSE_GEMV_LISTS", "1", 1);
        auto listed = session_on(*f.model, *gpu, device_graph);
        auto listed_split = split_session_on(*f.model, *gpu, placement, device_graph);
        EXPECT_LT(listed->node_count(), alone->node_count());
        EXPECT_LT(listed_split->node_count(), alone_split->node_count());
        expect_bit_identical_steps(*alone, *listed, random_prompt(10, static_cast<int32_t>(alone->n_vocab()), 53));
        expect_bit_identical_steps(*alone_split, *listed_split,
                                   random_prompt(10, static_cast<int32_t>(alone->n_vocab()), 54));
    }
    if (before != nullptr)
        ::setenv("DENSE_GEMV_LISTS", saved.c_str(), 1);
    else
        ::unsetenv("DENSE_GEMV_LISTS");
}

// Batched prefill (plan/prefill_graph.hpp) in the exact order (DENSE_PREFILL_EXACT=1): the CUDA
// pack's GEMM_Q gives every column bit for bit its GEMV_Q, and the norms, SwiGLU and the gated norm
// compute each row as for one token, so a prompt run 4 or 16 tokens per step must leave the same bits
// as token by token: the hidden state after the prompt, the logits of the steps after it, and the
// recurrent state — over two prompts (a second chat turn at a non-zero position), captured and node
// by node.
TEST(GpuSession, BatchedPrefillLeavesTheSameBitsAsTokenByToken) {
    REQUIRE_GPU(gpu);
    const ScopedEnv exact("DENSE_PREFILL_EXACT", "1");  // read while the sessions' graphs are built
    for (const char* mix : {"seed-iq4", "q4_k"}) {
        const SynthFile f = synth_tiny(mix);
        for (const bool device_graph : {true, false}) {
            SCOPED_TRACE(std::string(mix) + (device_graph ? ", captured" : ", node by node"));
            auto one = session_on(*f.model, *gpu, device_graph, DENSE_TYPE_NONE, std::nullopt, 1);
            const auto vocab = static_cast<int32_t>(one->n_vocab());
            const std::vector<std::vector<int32_t>> turns = {random_prompt(37, vocab, 61), random_prompt(20, vocab, 62)};
            for (const int64_t chunk : {4, 16}) {
                auto batched = session_on(*f.model, *gpu, device_graph, DENSE_TYPE_NONE, std::nullopt, chunk);
                ASSERT_EQ(batched->prefill_chunk(), chunk) << batched->prefill_note();
                one->reset();
                for (const auto& turn : turns) {
                    const std::span<const int32_t> head(turn.data(), turn.size() - 1);
                    one->prefill(head);
                    batched->prefill(head);
                    const auto h1 = one->hidden(), hb = batched->hidden();
                    EXPECT_TRUE(std::equal(h1.begin(), h1.end(), hb.begin())) << "hidden state after the prompt";
                    ASSERT_EQ(one->position(), batched->position());
                    one->step(turn.back(), true);
                    batched->step(turn.back(), true);
                    const auto x = one->logits(), y = batched->logits();
                    EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin())) << "logits after the prompt";
                }
                expect_bit_identical_steps(*one, *batched, random_prompt(4, vocab, 63));
            }
        }
    }
}

// prefill(tokens, true) on the GPU: where the prompt's last token ends a batched step the token
// step's LM head runs alone on a copy of its hidden state; the logits must be bit for bit those of
// a step with logits after the rest of the prompt (32 tokens: two batched steps of 16 and the head
// alone; 37: 16 + 16 + 4 batched and a token step with logits; both turns on one session, then
// generation). In the exact order, as the test above.
TEST(GpuSession, LastLogitsFromABatchedStepAreThoseOfAStepWithLogits) {
    REQUIRE_GPU(gpu);
    const ScopedEnv exact("DENSE_PREFILL_EXACT", "1");
    for (const char* mix : {"seed-iq4", "q4_k"}) {
        const SynthFile f = synth_tiny(mix);
        for (const bool device_graph : {true, false}) {
            SCOPED_TRACE(std::string(mix) + (device_graph ? ", captured" : ", node by node"));
            auto one = session_on(*f.model, *gpu, device_graph, DENSE_TYPE_NONE, std::nullopt, 1);
            auto batched = session_on(*f.model, *gpu, device_graph, DENSE_TYPE_NONE, std::nullopt, 16);
            ASSERT_EQ(batched->prefill_chunk(), 16) << batched->prefill_note();
            const auto vocab = static_cast<int32_t>(one->n_vocab());
            for (const auto& turn : {random_prompt(32, vocab, 81), random_prompt(37, vocab, 82)}) {
                one->prefill(std::span<const int32_t>(turn.data(), turn.size() - 1));
                one->step(turn.back(), true);
                const uint64_t batched_before = batched->batched_steps_run();
                batched->prefill(turn, true);
                EXPECT_EQ(batched->batched_steps_run() - batched_before, turn.size() == 32 ? 2u : 3u)
                    << turn.size() << " tokens";
                ASSERT_EQ(one->position(), batched->position());
                const auto x = one->logits(), y = batched->logits();
                EXPECT_TRUE(std::equal(x.begin(), x.end(), y.begin())) << turn.size() << " tokens: logits after the prompt";
                const auto h1 = one->hidden(), hb = batched->hidden();
                EXPECT_TRUE(std::equal(h1.begin(), h1.end(), hb.begin())) << "hidden state after the prompt";
            }
            expect_bit_identical_steps(*one, *batched, random_prompt(4, vocab, 83));
        }
    }
}

// Batched prefill in the default free order (ABI 1.13: GEMM_Q columns may add their block terms in
// another order than the GEMV, gemm_mma_wide.cuh; 1.14: and round them differently) against token by
// token, free-running over a 37-token prompt and 4 steps after it. Each GEMM column is within the
// rounding bound of its GEMV (CudaGemm.*InFreeOrder*: <= 0.04 of the bound, ~1e-7 relative), but the
// next layer's Q8_32 quantizer turns a value that close to a rounding boundary into a code one step
// away, and the recurrent state carries such flips through the prompt: the mechanism the row split's
// tests name for their bars. Measured on an H100 (session 32): hidden state 0.99983 (seed-iq4) and
// 0.99981 (q4_k), logits 0.99953-0.99987, every argmax the same. The bar: cosine >= 0.999 and the same
// argmax at every step (a wrong column, block or split would be far below). A second run of the same
// batched session gives the same bits (the order does not depend on timing).
TEST(GpuSession, BatchedPrefillInFreeOrderStaysWithinRoundingOfTokenByToken) {
    REQUIRE_GPU(gpu);
    const ScopedEnv free_order("DENSE_PREFILL_EXACT", "0");
    for (const char* mix : {"seed-iq4", "q4_k"}) {
        SCOPED_TRACE(mix);
        const SynthFile f = synth_tiny(mix);
        auto one = session_on(*f.model, *gpu, true, DENSE_TYPE_NONE, std::nullopt, 1);
        auto batched = session_on(*f.model, *gpu, true, DENSE_TYPE_NONE, std::nullopt, 16);
        ASSERT_EQ(batched->prefill_chunk(), 16) << batched->prefill_note();
        const auto vocab = static_cast<int32_t>(one->n_vocab());
        const std::vector<int32_t> prompt = random_prompt(37, vocab, 91);
        std::vector<float> first_hidden;
        for (int run = 0; run < 2; ++run) {
            one->reset();
            batched->reset();
            const std::span<const int32_t> head(prompt.data(), prompt.size() - 1);
            one->prefill(head);
            batched->prefill(head);
            const auto h1 = one->hidden(), hb = batched->hidden();
            EXPECT_GE(cosine(h1, hb), 0.999) << "hidden state after the prompt";
            if (run == 0) first_hidden.assign(hb.begin(), hb.end());
            else EXPECT_TRUE(std::equal(hb.begin(), hb.end(), first_hidden.begin())) << "the same prompt, a second time";
            int32_t token = prompt.back();
            for (int pos = 0; pos < 4; ++pos) {
                one->step(token, true);
                batched->step(token, true);
                const auto x = one->logits(), y = batched->logits();
                EXPECT_GE(cosine(x, y), 0.999) << "logits, step " << pos;
                EXPECT_EQ(argmax(x), argmax(y)) << "step " << pos;
                token = argmax(x);
            }
        }
    }
}

// The layer observer joins each layer's CPU rows and syncs the stream at every layer end; that must
// change when the work runs, never what it computes. Both sessions run node by node (no capture), so
// the only difference is the observer: logits bit for bit at every position, and the state after.
// A split session with bus staging batches its prompts: every host row of a split weight streams
// through the staging slots once per batched step and the GPU computes the whole weight (no CPU
// part). Against an unsplit session's batched prefill the differences are the K split of each chunk's
// GEMM, which follows its rows (choose_ks), and, in the token steps after the prompt, the CPU rows'
// summation order: the split's own bars (RowSplitMatchesTheUnsplitStep says why quantized weights
// get 0.99: the activation quantizer flips a code now and then). Measured on the H200 (session 15):
// hidden state and 4 logits at cosine >= 0.99987 for seed-iq4, >= 0.9999 for q4_k, every argmax
// the same. Both sessions' batched steps run in the exact order (DENSE_PREFILL_EXACT=1): the split's
// bus chunks always do, and the plain session's free order would add its own rounding flips to what
// this test measures (with ABI 1.14's fast terms, q4_k: hidden 0.99989, logits 0.9997-0.9999 against
// the exact split; H100, session 33).
TEST(GpuSession, SplitSessionBatchesItsPromptThroughTheBus) {
    REQUIRE_GPU(gpu);
    const ScopedEnv exact("DENSE_PREFILL_EXACT", "1");  // read while the sessions' graphs are built
    const std::pair<const char*, double> mixes[] = {{"seed-iq4", 0.99}, {"q4_k", 0.9999}};
    // Share 0.5: half the host rows from their page-locked copy, half from the file mapping; share 0:
    // all of them from the mapping (through the bounce buffers), the ring there for the prompts only.
    for (const auto& [mix, bar] : mixes)
      for (const double share : {0.5, 0.0}) {
        SCOPED_TRACE(std::string(mix) + ", share " + std::to_string(share));
        const SynthFile f = synth_tiny(mix);
        const Model& m = *f.model;
        auto plain = session_on(m, *gpu, true, DENSE_TYPE_NONE, std::nullopt, 16);
        auto split = split_session_on(m, *gpu, split_all_at(m, [](int64_t rows) { return rows / 2 / 8 * 8; }), true, share);
        ASSERT_GT(split->prefill_chunk(), 1) << split->prefill_note();
        const auto vocab = static_cast<int32_t>(plain->n_vocab());
        // 48 tokens: whole batched steps at the split's chunk (64: 32 + 16) and at the plain
        // session's (16: 3 x 16), no token step whose CPU part would count a host job.
        const auto prompt = random_prompt(48, vocab, 71);
        plain->prefill(prompt);
        split->prefill(prompt);
        EXPECT_EQ(split->batched_steps_run(), 2u);
        EXPECT_EQ(split->position(), plain->position());
        EXPECT_GT(split->bounced_bytes(), 0u) << "the rows from the file mapping did not go through the bounce buffers";
        EXPECT_EQ(split->host_split_stats().jobs, 0u) << "a batched step has no CPU part";
        EXPECT_GE(cosine(split->hidden(), plain->hidden()), bar) << "hidden state after the prompt";
        for (int32_t t : random_prompt(4, vocab, 72)) {
            plain->step(t, true);
            split->step(t, true);
            EXPECT_GE(cosine(split->logits(), plain->logits()), bar);
            EXPECT_EQ(argmax(split->logits()), argmax(plain->logits()));
        }
        EXPECT_GT(split->host_split_stats().jobs, 0u) << "the token steps' CPU rows ran as host jobs";
      }
}

TEST(GpuSession, RowSplitLayerObserverChangesNoResult) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    const auto placement = split_all_at(*f.model, [](int64_t rows) { return rows / 2; });
    auto watched = split_session_on(*f.model, *gpu, placement, false);
    auto plain = split_session_on(*f.model, *gpu, placement, false);
    int64_t layers_seen = 0;
    watched->set_layer_observer([&](int64_t, int64_t, std::span<const float>) { ++layers_seen; });
    const auto prompt = random_prompt(12, static_cast<int32_t>(plain->n_vocab()), 23);
    int first_differing = -1;
    for (size_t i = 0; i < prompt.size(); ++i) {
        watched->step(prompt[i], true);
        plain->step(prompt[i], true);
        const auto a = watched->logits(), b = plain->logits();
        ASSERT_EQ(a.size(), b.size());
        double max_diff = 0;
        for (size_t k = 0; k < a.size(); ++k) max_diff = std::max(max_diff, std::abs(double(a[k]) - b[k]));
        std::printf("[ observer vs none ] position %zu: cosine %.9f, max |diff| %.3g\n", i, cosine(a, b), max_diff);
        if (first_differing < 0 && !std::equal(a.begin(), a.end(), b.begin())) first_differing = static_cast<int>(i);
    }
    EXPECT_GT(layers_seen, 0);
    EXPECT_EQ(first_differing, -1) << "logits differ first at position " << first_differing;
    EXPECT_EQ(watched->snapshot_state(), plain->snapshot_state());
}

// The token step's greedy choice on the GPU (ARGMAX at the end of the step, ABI 1.12) is the host's
// scan over the same logits: after a prompt whose last token ends a batched step (the head alone) and
// after token steps, replayed from the captured graph and run op by op.
TEST(GpuSession, DeviceGreedyChoiceIsTheHostScanOfTheSameLogits) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    for (const bool captured : {false, true}) {
        auto s = session_on(*f.model, *gpu, captured);
        const auto prompt = random_prompt(33, static_cast<int32_t>(s->n_vocab()), 11);
        s->prefill(prompt, true);
        const int32_t tok = expect_device_greedy_chain(*s, 8, captured ? "captured" : "op by op");
        s->step(tok, false);
        EXPECT_FALSE(s->greedy_token().has_value());
    }
}

// The token step's k best logits on the GPU (TOP_K at the end of the step, ABI 1.15) are the host's
// candidates over the same logits, ids and value bits: after a prompt whose last token ends a batched
// step (the head alone) and after token steps, replayed from the captured graph and run op by op,
// for the chat default k = 40 and for k = 1 and 64; each step is fed the token drawn from them.
TEST(GpuSession, DeviceTopKIsTheHostsCandidatesOfTheSameLogits) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("seed-iq4");
    for (const int32_t k : {40, 1, DENSE_TOP_K_MAX}) {
        for (const bool captured : {false, true}) {
            exec::SessionOptions o;
            o.n_ctx = 128;
            o.kv_type = DENSE_TYPE_F16;
            o.device = *gpu;
            o.device_graph = captured;
            o.device_top_k = k;
            auto s = std::make_unique<exec::Session>(f.model->bound, qwen35_spec(), all_packs(), o);
            const std::string where = std::string(captured ? "captured" : "op by op") + ", k = " + std::to_string(k);
            const auto prompt = random_prompt(33, static_cast<int32_t>(s->n_vocab()), 11);
            s->prefill(prompt, true);
            text::SamplerConfig cfg;
            cfg.top_k = k;
            cfg.seed = 9;
            text::Sampler sampler(cfg);
            for (int i = 0; i < 8; ++i) {
                const auto top = expect_device_top_k(*s, k, where + ", step " + std::to_string(i));
                ASSERT_TRUE(top.has_value());
                s->step(sampler.sample_from_top(top->ids, top->values), true);
            }
            s->step(0, false);
            EXPECT_FALSE(s->top_k().has_value()) << where;
        }
    }
}

// Bad input is refused before anything runs on the GPU, and the session goes on as if it never came.
TEST(GpuSession, BadTokenIsRefusedOnTheGpuWithoutSideEffects) {
    REQUIRE_GPU(gpu);
    const SynthFile f = synth_tiny("q8_0");
    auto dev = session_on(*f.model, *gpu);
    EXPECT_THROW(dev->step(static_cast<int32_t>(dev->n_vocab()), true), Error);
    EXPECT_EQ(dev->position(), 0);
    dev->step(1, true);
    EXPECT_EQ(dev->position(), 1);
}

}  // namespace
}  // namespace dense::test
