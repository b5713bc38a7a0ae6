// The lowering's quantize fusion (graph/step_lowering.cpp, fuse_quantize_into_producer): where the
// device's packs implement a norm or SwiGLU with a quantized copy of its output, the op that
// produces a GEMV input writes that input's quantized buffer itself and the QUANTIZE_ACT node goes.
// Checked on the symbolic graph of the tiny synthetic qwen35 (nothing runs): what fuses, that every
// fused copy is exactly what the GEMVs read, and that without the capability nothing changes. The
// numbers of the fused path are held to cpu-ref by the GPU session tests (gpu_session_test.cpp).
#include "graph/graph_builder.hpp"
#include "session_fixture.hpp"
#include "synth/synth_model.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace dense::test {
namespace {

struct TinyModel {
    std::vector<std::byte> bytes;
    std::unique_ptr<Model> model;
};

const TinyModel& tiny_model() {
    static const TinyModel m = [] {
        synth::SynthRequest r;
        r.shape = synth::make_shape("tiny", {});
        r.mix = synth::parse_mix("seed-iq4");
        r.seed = 3;
        r.vocab = data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
        r.threads = 2;
        TinyModel t;
        t.bytes = synth::SynthModel(r).write_to_bytes();
        t.model = bind_file(gguf::GgufFile::parse(t.bytes, "synth:tiny:seed-iq4"));
        return t;
    }();
    return m;
}

// A GPU-like lowering: every GEMV takes Q8_32; `fusable` says which ops the "pack" fuses.
graph::Graph lower(std::function<bool(dense_op_kind, dense_type_id)> fusable) {
    graph::GraphOptions o;
    o.n_ctx = 64;
    o.kv_type = DENSE_TYPE_F16;
    o.device_kind = DENSE_DEVICE_CUDA;
    o.activation_for = [](dense_type_id) { return DENSE_TYPE_Q8_32; };
    o.fuses_quantize = std::move(fusable);
    return graph::build_graph(tiny_model().model->bound, qwen35_spec(), o);
}

size_t count(const graph::Graph& g, dense_op_kind op, dense_type_id act) {
    size_t n = 0;
    for (const auto& node : g.nodes) n += node.key.op == op && node.key.act == act;
    return n;
}

bool fusable_op(dense_op_kind op) {
    return op == DENSE_OP_RMS_NORM || op == DENSE_OP_GATED_RMS_NORM || op == DENSE_OP_SWIGLU;
}

TEST(GraphFusion, WithoutTheCapabilityTheGraphIsUnchanged) {
    const graph::Graph plain = lower(nullptr);
    const graph::Graph refused = lower([](dense_op_kind, dense_type_id) { return false; });
    ASSERT_EQ(plain.nodes.size(), refused.nodes.size());
    for (size_t i = 0; i < plain.nodes.size(); ++i) {
        EXPECT_EQ(plain.nodes[i].label, refused.nodes[i].label);
        EXPECT_EQ(plain.nodes[i].key, refused.nodes[i].key);
    }
    EXPECT_GT(count(plain, DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_Q8_32), 0u);
}

TEST(GraphFusion, NormsAndSwigluWriteTheGemvInputAndTheQuantizeNodesGo) {
    const graph::Graph plain = lower(nullptr);
    const graph::Graph fused = lower([](dense_op_kind op, dense_type_id act) {
        return fusable_op(op) && act == DENSE_TYPE_Q8_32;
    });
    const size_t n_fused = count(fused, DENSE_OP_RMS_NORM, DENSE_TYPE_Q8_32) +
                           count(fused, DENSE_OP_GATED_RMS_NORM, DENSE_TYPE_Q8_32) +
                           count(fused, DENSE_OP_SWIGLU, DENSE_TYPE_Q8_32);
    const int64_t layers = static_cast<int64_t>(tiny_model().model->bound.layers.size());
    // Per layer: the attention-input norm, the ffn norm, SwiGLU, and the gated norm of a Gated
    // DeltaNet layer (an attention layer's output projection reads the attention output, which no
    // norm produces); plus the final norm before the LM head.
    EXPECT_GE(n_fused, static_cast<size_t>(3 * layers + 1));
    EXPECT_EQ(fused.nodes.size() + n_fused, plain.nodes.size());
    EXPECT_EQ(count(fused, DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_Q8_32) + n_fused,
              count(plain, DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_Q8_32));

    // Each fused node's dst1 is a Q8_32 view of its whole output, and the next node that reads that
    // quantized buffer is a GEMV taking it as its activation, before anything writes the buffer again.
    std::set<graph::BufferId> fused_outputs;
    for (size_t i = 0; i < fused.nodes.size(); ++i) {
        const auto& n = fused.nodes[i];
        if (!fusable_op(n.key.op) || n.key.act != DENSE_TYPE_Q8_32) continue;
        SCOPED_TRACE(n.label);
        ASSERT_EQ(n.dst.size(), 2u);
        const auto& y = n.dst[0];
        const auto& q = n.dst[1];
        EXPECT_EQ(q.view.type, DENSE_TYPE_Q8_32);
        EXPECT_EQ(q.view.ne[0], y.view.ne[0] * y.view.ne[1]);
        EXPECT_EQ(y.view.nb[1], y.view.ne[0] * 4) << "fused output must be contiguous";
        EXPECT_NE(q.buffer, y.buffer);
        fused_outputs.insert(q.buffer);
        bool read = false;
        for (size_t j = i + 1; j < fused.nodes.size() && !read; ++j) {
            const auto& m = fused.nodes[j];
            for (const auto& s : m.src)
                if (!s.external && s.buffer == q.buffer) {
                    EXPECT_EQ(m.key.op, DENSE_OP_GEMV_Q) << m.label;
                    read = true;
                }
            for (const auto& d : m.dst) ASSERT_FALSE(!read && !d.external && d.buffer == q.buffer) << m.label;
        }
        EXPECT_TRUE(read) << "no GEMV reads the fused copy";
    }
    EXPECT_FALSE(fused_outputs.empty());
}

TEST(GraphFusion, OnlyTheOpsThePackFusesAreFused) {
    const graph::Graph only_swiglu = lower([](dense_op_kind op, dense_type_id) { return op == DENSE_OP_SWIGLU; });
    EXPECT_GT(count(only_swiglu, DENSE_OP_SWIGLU, DENSE_TYPE_Q8_32), 0u);
    EXPECT_EQ(count(only_swiglu, DENSE_OP_RMS_NORM, DENSE_TYPE_Q8_32), 0u);
    EXPECT_EQ(count(only_swiglu, DENSE_OP_GATED_RMS_NORM, DENSE_TYPE_Q8_32), 0u);
    EXPECT_EQ(count(only_swiglu, DENSE_OP_SWIGLU, DENSE_TYPE_NONE), 0u);
}

}  // namespace
}  // namespace dense::test
