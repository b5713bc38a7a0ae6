// A synthetic file is a function of its seed: the same bytes with 1 or 4 threads, different weights
// (and only weights) with another seed; the pipeline copes with any read pattern the writer uses.
#include "synth_test_support.hpp"

#include "synth/chunk_pipeline.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using namespace dense::synth;
using dense::synth::test::request;

ShapeOverrides small_file() {
    ShapeOverrides o = dense::synth::test::small_vocab(1024);
    o.n_layer = 8;
    return o;
}

TEST(SynthDeterminism, SameSeedSameBytesWhateverTheThreads) {
    const auto one = SynthModel(request("tiny", "seed-iq4", 42, small_file(), 1)).write_to_bytes();
    const auto four = SynthModel(request("tiny", "seed-iq4", 42, small_file(), 4)).write_to_bytes();
    const auto again = SynthModel(request("tiny", "seed-iq4", 42, small_file(), 3)).write_to_bytes();
    ASSERT_EQ(one.size(), four.size());
    EXPECT_TRUE(one == four);
    EXPECT_TRUE(one == again);
}

TEST(SynthDeterminism, LargeTensorsSpanManyUnitsAndStayDeterministic) {
    // f32 token_embd of 256 x 8192 = 8 MiB: more than one 4 MiB unit, so thread interleaving matters.
    ShapeOverrides o = dense::synth::test::small_vocab(8192);
    o.n_layer = 4;
    const auto a = SynthModel(request("tiny", "f32", 5, o, 1)).write_to_bytes();
    const auto b = SynthModel(request("tiny", "f32", 5, o, 4)).write_to_bytes();
    EXPECT_TRUE(a == b);
}

TEST(SynthDeterminism, DifferentSeedDifferentWeightsSameLayout) {
    const auto a = dense::synth::test::synthesize(request("tiny", "seed-iq4", 1, small_file()));
    const auto b = dense::synth::test::synthesize(request("tiny", "seed-iq4", 2, small_file()));
    ASSERT_EQ(a.bytes.size(), b.bytes.size());
    ASSERT_EQ(a.file->tensors().size(), b.file->tensors().size());
    for (size_t i = 0; i < a.file->tensors().size(); ++i) {
        const auto& ta = a.file->tensors()[i];
        const auto& tb = b.file->tensors()[i];
        EXPECT_EQ(ta.name, tb.name);
        EXPECT_EQ(ta.type, tb.type);
        EXPECT_EQ(ta.offset, tb.offset);
        ASSERT_EQ(ta.n_bytes, tb.n_bytes);
        EXPECT_NE(std::memcmp(ta.data.data(), tb.data.data(), ta.n_bytes), 0) << ta.name << " is the same for both seeds";
    }
}

TEST(SynthDeterminism, TensorsAreDifferentFromEachOther) {
    const auto a = dense::synth::test::synthesize(request("tiny", "q8_0", 1, small_file()));
    const auto* g0 = a.file->find_tensor("blk.0.ffn_gate.weight");
    const auto* g1 = a.file->find_tensor("blk.1.ffn_gate.weight");
    const auto* u0 = a.file->find_tensor("blk.0.ffn_up.weight");
    ASSERT_TRUE(g0 && g1 && u0);
    EXPECT_NE(std::memcmp(g0->data.data(), g1->data.data(), g0->n_bytes), 0);
    EXPECT_NE(std::memcmp(g0->data.data(), u0->data.data(), g0->n_bytes), 0);
}

// The pipeline on its own: odd read sizes, many threads, tensors smaller and larger than a unit.
TEST(SynthPipeline, OddReadSizesGiveTheSameBytes) {
    std::vector<PipelineTensor> tensors;
    for (auto [type, blocks] : std::vector<std::pair<dense_type_id, uint64_t>>{
             {DENSE_TYPE_Q4_K, 70000}, {DENSE_TYPE_Q8_0, 3}, {DENSE_TYPE_IQ3_S, 40000}, {DENSE_TYPE_F16, 1}}) {
        PipelineTensor t;
        t.recipe = make_recipe(type, 0.05);
        t.n_blocks = blocks;
        t.stream = tensors.size() * 7;
        tensors.push_back(t);
    }
    const auto read_all = [&](unsigned threads, size_t piece) {
        ChunkPipeline p(tensors, 99, threads);
        std::vector<std::byte> out;
        for (size_t t = 0; t < tensors.size(); ++t) {
            const uint64_t n = tensors[t].n_blocks * tensors[t].recipe.block_bytes;
            for (uint64_t off = 0; off < n;) {
                const auto k = static_cast<size_t>(std::min<uint64_t>(piece, n - off));
                std::vector<std::byte> buf(k);
                p.read(t, off, buf);
                out.insert(out.end(), buf.begin(), buf.end());
                off += k;
            }
        }
        return out;
    };
    const auto ref = read_all(1, size_t{4} << 20);
    EXPECT_TRUE(read_all(5, 1000003) == ref);
    EXPECT_TRUE(read_all(2, 777) == ref);
}

TEST(SynthPipeline, OutOfOrderReadsAreRefused) {
    PipelineTensor t;
    t.recipe = make_recipe(DENSE_TYPE_Q8_0, 0.1);
    t.n_blocks = 100;
    ChunkPipeline p({t, t}, 1, 2);
    std::vector<std::byte> buf(34);
    EXPECT_THROW(p.read(0, 34, buf), dense::Error);
    EXPECT_THROW(p.read(1, 0, buf), dense::Error) << "tensor 0 not finished";
}

TEST(SynthPipeline, AbandonedMidwayShutsDownCleanly) {
    PipelineTensor t;
    t.recipe = make_recipe(DENSE_TYPE_Q6_K, 0.1);
    t.n_blocks = 200000;  // 42 MB: many units the workers are still producing when we stop
    ChunkPipeline p({t}, 3, 4);
    std::vector<std::byte> buf(1000);
    p.read(0, 0, buf);
    // destructor joins the workers blocked on full slots
}

}  // namespace
