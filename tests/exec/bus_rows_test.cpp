// The GPU's share of a row split's host rows (exec/bus_rows.hpp, exec/bus_copies.hpp), on the CPU:
// how many rows go over the bus at a share, that the page-locked copy holds exactly each tensor's
// bus rows, the lowering's nodes per split weight (device prefix, bus chunks in staging slots, CPU
// rows) covering every output row once, the copy schedule's ordering against the slots' readers,
// and a CPU session with bus rows giving the same logits as without a split, bit for bit.
// That the GPU computes the same logits with bus rows is tested on the GPU
// (GpuSession.BusRows*, tests/exec/gpu_session_test.cpp).
#include "common/page_residency.hpp"
#include "exec/bus_copies.hpp"
#include "exec/bus_rows.hpp"
#include "exec/session.hpp"
#include "plan/bus_share.hpp"
#include "plan/bus_staging.hpp"
#include "graph/graph_builder.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/row_split.hpp"
#include "session_fixture.hpp"
#include "synth/synth_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace dense::test {
namespace {

TEST(BusRows, ShareIsRoundedToWholeRowTiles) {
    EXPECT_EQ(exec::bus_rows_for(1000, 0.0), 0);
    EXPECT_EQ(exec::bus_rows_for(1000, 0.4), 400);
    EXPECT_EQ(exec::bus_rows_for(1000, 0.41), 408);   // 410 rounded down to a multiple of 8
    EXPECT_EQ(exec::bus_rows_for(1000, 1.0), 1000);
    EXPECT_EQ(exec::bus_rows_for(1000, 0.99), 984);   // 990 rounded down; leaves 16 rows to the CPU
    EXPECT_EQ(exec::bus_rows_for(1000, 0.995), 1000); // 992 would leave 8 rows (< 16) to the CPU
    EXPECT_EQ(exec::bus_rows_for(0, 0.5), 0);
    EXPECT_EQ(exec::bus_rows_for(5, 0.5), 0);         // not one whole tile
    EXPECT_EQ(exec::bus_rows_for(1000, -0.5), 0);
}

// A device whose page-locked host memory is plain host memory.
class RecordingMemory final : public exec::DeviceMemory {
public:
    bool can_copy_beside = true;
    std::vector<std::unique_ptr<std::byte[]>> blocks;

    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CUDA; }
    std::string label() const override { return "recording device"; }
    void* alloc(uint64_t, const std::string&) override { return nullptr; }
    void zero(void*, uint64_t) override {}
    void to_device(void*, const void*, uint64_t) override {}
    void to_host(void*, const void*, uint64_t) override {}
    void sync() override {}
    void* stream() const noexcept override { return nullptr; }
    uint64_t allocated_bytes() const noexcept override { return 0; }
    void copy(void*, const void*, uint64_t) override {}
    bool can_overlap_copies() const noexcept override { return can_copy_beside; }
    void* alloc_host_locked(uint64_t bytes) override {
        blocks.push_back(std::make_unique<std::byte[]>(static_cast<size_t>(bytes) + 4096));
        const auto at = (reinterpret_cast<uintptr_t>(blocks.back().get()) + 4095) / 4096 * 4096;  // page-aligned, as the driver's
        return reinterpret_cast<void*>(at);
    }
};

const Model& tiny() {
    static const auto m = synth_tiny();
    return *m;
}

// Half of every splittable weight's rows stay on the device; of the rest, `share` goes over the bus.
struct BusLayout {
    std::map<const gguf::TensorInfo*, int64_t> keep, bus;
};

BusLayout layout(double share) {
    BusLayout l;
    const auto splittable = plan::splittable_tensors(tiny().bound, qwen35_spec());
    for (const auto& name : splittable) {
        const gguf::TensorInfo* t = tiny().file.find_tensor(name);
        const int64_t keep = t->ne[1] / 2 / 8 * 8;
        l.keep[t] = keep;
        const int64_t n = exec::bus_rows_for(t->ne[1] - keep, share);
        if (n > 0) l.bus[t] = n;
    }
    return l;
}

// A GPU-like lowering of the tiny model split as `l` says, its bus chunks staged in `staging`.
graph::GraphOptions split_options(const BusLayout& l, std::function<const void*(const gguf::TensorInfo*)> bus_source,
                                  graph::GraphOptions::BusStaging staging) {
    graph::GraphOptions o;
    o.n_ctx = 64;
    o.kv_type = DENSE_TYPE_F16;
    o.device_kind = DENSE_DEVICE_CUDA;
    o.activation_for = [](dense_type_id) { return DENSE_TYPE_Q8_32; };
    o.device_rows = [&l](const gguf::TensorInfo* t) { return l.keep.count(t) ? l.keep.at(t) : t->ne[1]; };
    o.bus_rows = [&l](const gguf::TensorInfo* t) { return l.bus.count(t) ? l.bus.at(t) : int64_t{0}; };
    o.bus_source = std::move(bus_source);
    o.bus_staging = staging;
    return o;
}

TEST(BusRows, CopiesEachTensorsBusRowsToPageLockedMemory) {
    const BusLayout l = layout(0.5);
    ASSERT_FALSE(l.bus.empty());
    std::vector<const gguf::TensorInfo*> tensors;
    for (const auto& [t, n] : l.bus) tensors.push_back(t);
    RecordingMemory memory;
    const exec::BusRows rows(memory, tensors, [&](const gguf::TensorInfo* t) { return l.keep.at(t); },
                             [&](const gguf::TensorInfo* t) { return l.bus.at(t); });
    ASSERT_EQ(memory.blocks.size(), 1u) << "one block for every tensor";
    uint64_t bus_bytes = 0;
    for (const auto& [t, n] : l.bus) {
        const uint64_t rb = plan::row_bytes(*t);
        const uint64_t bytes = rb * static_cast<uint64_t>(n);
        bus_bytes += bytes;
        const auto* host = static_cast<const std::byte*>(rows.host_rows(t));
        EXPECT_EQ(reinterpret_cast<uintptr_t>(host) % 256, 0u) << t->name;
        EXPECT_EQ(std::memcmp(host, t->data.data() + rb * static_cast<uint64_t>(l.keep.at(t)), bytes), 0) << t->name;
    }
    EXPECT_EQ(rows.bus_bytes(), bus_bytes);
    EXPECT_GE(rows.pinned_bytes(), bus_bytes);
    EXPECT_LT(rows.pinned_bytes(), bus_bytes + 256 * l.bus.size());
    // A tensor without bus rows is refused, not guessed.
    const gguf::TensorInfo* other = tiny().file.find_tensor("token_embd.weight");
    ASSERT_NE(other, nullptr);
    EXPECT_THROW((void)rows.host_rows(other), Error);
}

// After the copy the bus rows' whole pages leave the process (the GPU reads the copy; the process
// would otherwise hold those bytes twice), and the copy still equals the file.
TEST(BusRows, CopiedRowsLeaveTheProcess) {
    synth::SynthRequest r;
    synth::ShapeOverrides ov;
    ov.vocab_size = 2048;
    r.shape = synth::make_shape("small", ov);
    r.mix = synth::parse_mix("q8_0");
    r.vocab = data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
    r.threads = 2;
    const auto dir = scratch_dir("bus-rows");
    const auto path = dir / "small.gguf";
    synth::SynthModel(r).write(path);
    const auto m = bind_file(gguf::GgufFile::open(path));
    std::filesystem::remove_all(dir);

    std::map<const gguf::TensorInfo*, int64_t> keep, bus;
    std::vector<const gguf::TensorInfo*> tensors;
    for (const auto& name : plan::splittable_tensors(m->bound, qwen35_spec())) {
        const gguf::TensorInfo* t = m->file.find_tensor(name);
        keep[t] = t->ne[1] / 4 / 8 * 8;
        bus[t] = exec::bus_rows_for(t->ne[1] - keep[t], 0.5);
        if (bus[t] > 0) tensors.push_back(t);
    }
    // The whole pages inside each tensor's bus rows, touched first (as the CPU's reads would).
    const size_t page = page_bytes();
    std::vector<std::pair<const std::byte*, size_t>> inner;
    size_t inner_pages = 0;
    for (const auto* t : tensors) {
        const uint64_t rb = plan::row_bytes(*t);
        const std::byte* first = t->data.data() + rb * static_cast<uint64_t>(keep[t]);
        const uintptr_t a = (reinterpret_cast<uintptr_t>(first) + page - 1) / page * page;
        const uintptr_t b = (reinterpret_cast<uintptr_t>(first) + rb * static_cast<uint64_t>(bus[t])) / page * page;
        if (b <= a) continue;
        inner.emplace_back(reinterpret_cast<const std::byte*>(a), static_cast<size_t>(b - a));
        volatile std::byte sink{};
        for (size_t i = 0; i < b - a; i += 512) sink = reinterpret_cast<const std::byte*>(a)[i];
        (void)sink;
        inner_pages += (b - a) / page;
    }
    ASSERT_GT(inner_pages, 16u) << "the test wants bus rows spanning whole pages";
    size_t mapped_before = 0;
    for (const auto& [p, n] : inner) mapped_before += pages_mapped(p, n);
    ASSERT_EQ(mapped_before, inner_pages);

    RecordingMemory memory;
    const exec::BusRows rows(memory, tensors, [&](const gguf::TensorInfo* t) { return keep.at(t); },
                             [&](const gguf::TensorInfo* t) { return bus.at(t); });
    size_t mapped_after = 0;
    for (const auto& [p, n] : inner) mapped_after += pages_mapped(p, n);
    EXPECT_EQ(mapped_after, 0u) << "copied bus rows still in the process";
    for (const auto* t : tensors) {
        const uint64_t rb = plan::row_bytes(*t);
        EXPECT_EQ(std::memcmp(rows.host_rows(t), t->data.data() + rb * static_cast<uint64_t>(keep[t]),
                              rb * static_cast<uint64_t>(bus[t])),
                  0)
            << t->name;
    }
}

TEST(BusRows, ADeviceThatCannotCopyBesideTheStepIsRefusedWithTheFix) {
    const BusLayout l = layout(0.5);
    std::vector<const gguf::TensorInfo*> tensors;
    for (const auto& [t, n] : l.bus) tensors.push_back(t);
    RecordingMemory memory;
    memory.can_copy_beside = false;
    try {
        exec::BusRows rows(memory, tensors, [&](const gguf::TensorInfo* t) { return l.keep.at(t); },
                           [&](const gguf::TensorInfo* t) { return l.bus.at(t); });
        FAIL() << "expected a refusal";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Device);
        EXPECT_NE(std::string(e.what()).find("bus_read_share: 0"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(memory.blocks.empty());
}

// The lowering of a split weight with bus rows: the CPU node, the bus chunks and the device prefix
// write disjoint slices of the output that together are every row; each chunk reads its staging
// slot, carries the copy of exactly its rows from the host copy into that slot, and fits the slot;
// slots are handed out round robin over the whole graph.
TEST(BusRows, LoweringCoversEveryOutputRowOnceWithStagedChunks) {
    const BusLayout l = layout(0.5);
    uint64_t widest_row = 0;
    for (const auto& [t, n] : l.bus) widest_row = std::max(widest_row, plan::row_bytes(*t));
    constexpr uint32_t kSlots = 3;
    const uint64_t slot_bytes = widest_row * 24;  // small enough that some weights need several chunks
    std::vector<std::byte> staging(kSlots * slot_bytes);
    // Fake host copies: a distinct address range per tensor (nothing is read: the graph only records them).
    std::map<const gguf::TensorInfo*, uintptr_t> source;
    uintptr_t next_source = uintptr_t{1} << 40;
    for (const auto& [t, n] : l.bus) {
        source[t] = next_source;
        next_source += uintptr_t{1} << 30;
    }
    const graph::Graph g = graph::build_graph(
        tiny().bound, qwen35_spec(),
        split_options(l, [&](const gguf::TensorInfo* t) { return reinterpret_cast<const void*>(source.at(t)); },
                      {staging.data(), kSlots, slot_bytes}));

    uint32_t expected_slot = 0;
    size_t chunks = 0, multi_chunk_weights = 0;
    for (const auto& node : g.nodes) {
        if (node.bus_copy.bytes == 0) continue;
        EXPECT_EQ(node.bus_copy.slot, expected_slot) << node.label << ": slots are not round robin";
        expected_slot = (expected_slot + 1) % kSlots;
        EXPECT_EQ(node.bus_copy.slot_data, staging.data() + slot_bytes * node.bus_copy.slot) << node.label;
        EXPECT_EQ(node.src.at(0).external_ptr, node.bus_copy.slot_data) << node.label << " does not read its slot";
        EXPECT_LE(node.bus_copy.bytes, slot_bytes) << node.label;
        ++chunks;
    }
    for (const auto& [t, n] : l.bus) {
        const std::string name(t->name);
        const uint64_t rb = plan::row_bytes(*t);
        // rows covered per output buffer slice: (first element, count, kind)
        std::vector<std::tuple<int64_t, int64_t, std::string>> parts;
        int64_t bus_nodes = 0;
        for (const auto& node : g.nodes) {
            if (node.key.op != DENSE_OP_GEMV_Q || node.label.rfind(name + " ", 0) != 0) continue;
            const auto& w = node.src.at(0);
            const auto& y = node.dst.at(0);
            const int64_t first = static_cast<int64_t>(y.offset / 4), count = y.view.ne[0];
            EXPECT_EQ(w.view.ne[1], count) << node.label;
            if (node.split_cpu_part) {
                parts.emplace_back(first, count, "cpu");
                EXPECT_EQ(w.external_ptr, t->data.data() + rb * static_cast<uint64_t>(first)) << node.label;
                EXPECT_EQ(node.bus_copy.bytes, 0u) << node.label;
            } else if (node.bus_copy.bytes > 0) {
                parts.emplace_back(first, count, "bus");
                ++bus_nodes;
                EXPECT_EQ(first % 8, 0) << node.label << ": a chunk starts inside a row tile";
                EXPECT_EQ(node.bus_copy.bytes, rb * static_cast<uint64_t>(count)) << node.label;
                EXPECT_EQ(reinterpret_cast<uintptr_t>(node.bus_copy.source),
                          source.at(t) + rb * static_cast<uint64_t>(first - l.keep.at(t)))
                    << node.label << " copies other rows than it computes";
                EXPECT_EQ(node.key.device, DENSE_DEVICE_CUDA) << node.label;
            } else {
                parts.emplace_back(first, count, "device");
            }
        }
        multi_chunk_weights += bus_nodes > 1;
        EXPECT_EQ(bus_nodes, (static_cast<int64_t>(rb) * n + static_cast<int64_t>(slot_bytes / rb / 8 * 8 * rb) - 1) /
                                 static_cast<int64_t>(slot_bytes / rb / 8 * 8 * rb))
            << name << ": not the fewest chunks that fit a slot";
        std::sort(parts.begin(), parts.end());
        int64_t next = 0;
        for (const auto& [first, count, kind] : parts) {
            EXPECT_EQ(first, next) << name << ": gap or overlap at row " << next;
            next = first + count;
        }
        EXPECT_EQ(next, t->ne[1]) << name;
    }
    EXPECT_GT(chunks, static_cast<size_t>(kSlots)) << "the test wants slots reused";
    EXPECT_GT(multi_chunk_weights, 0u) << "the test wants weights cut into several chunks";
}

// The CPU parts of a split start as early as their data allows (graph/cpu_part_hoist.hpp): in every
// layer ffn_up's CPU rows come right after ffn_gate's (they read the same input), before either
// weight's device nodes; and no CPU part moved above a node that writes what it reads.
TEST(CpuPartHoist, CpuPartsOfALayerStartBeforeItsDeviceNodes) {
    const BusLayout l = layout(0.5);
    std::vector<std::byte> staging(8 << 20);
    const graph::Graph g = graph::build_graph(
        tiny().bound, qwen35_spec(),
        split_options(l, [&](const gguf::TensorInfo*) { return static_cast<const void*>(staging.data()); },
                      {staging.data(), 2, 4 << 20}));
    size_t layers_checked = 0;
    for (const auto& layer : tiny().bound.layers) {
        const std::string gate = "blk." + std::to_string(layer.index) + ".ffn_gate.weight ";
        const std::string up = "blk." + std::to_string(layer.index) + ".ffn_up.weight ";
        std::vector<std::string> order;  // "gate cpu", "up cpu", "gate device", ...
        for (const auto& n : g.nodes) {
            const bool is_gate = n.label.rfind(gate, 0) == 0, is_up = n.label.rfind(up, 0) == 0;
            if (!is_gate && !is_up) continue;
            const std::string what = std::string(is_gate ? "gate" : "up") + (n.split_cpu_part ? " cpu" : " device");
            if (order.empty() || order.back() != what) order.push_back(what);
        }
        if (order.empty()) continue;
        ASSERT_GE(order.size(), 3u) << layer.index;
        EXPECT_EQ(order[0], "gate cpu") << layer.index;
        EXPECT_EQ(order[1], "up cpu") << layer.index << ": ffn_up's CPU rows start only after ffn_gate's device nodes";
        ++layers_checked;
    }
    EXPECT_GT(layers_checked, 0u);
    // A CPU part never precedes the node that produces its input.
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!g.nodes[i].split_cpu_part) continue;
        const auto& x = g.nodes[i].src.at(1);
        for (size_t j = i + 1; j < g.nodes.size() && g.nodes[j].layer == g.nodes[i].layer; ++j)
            for (const auto& d : g.nodes[j].dst)
                EXPECT_FALSE(!d.external && d.buffer == x.buffer && g.nodes[j].label.find("gemv") == std::string::npos)
                    << g.nodes[i].label << " runs before " << g.nodes[j].label << ", which writes its input";
    }
}

// A device that runs nothing and logs what is enqueued where: events recorded and waited for, copies
// on the side streams, and (from the test) the GEMVs that read the slots.
class ScheduleLog final : public exec::DeviceMemory {
public:
    struct Op {
        enum Kind { Record, Wait, Copy, Run } kind;
        int stream;         // 0: the main stream, 1 + i: side stream i
        const void* event;  // Record, Wait
        size_t node;        // Copy, Run
    };
    std::vector<Op> ops;
    int main_token = 0;
    int side_tokens[8] = {};
    std::vector<std::unique_ptr<int>> events;

    int stream_id(const void* s) const {
        for (int i = 0; i < 8; ++i)
            if (s == &side_tokens[i]) return 1 + i;
        EXPECT_EQ(s, &main_token) << "an unknown stream";
        return 0;
    }
    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CUDA; }
    std::string label() const override { return "schedule log"; }
    void* alloc(uint64_t, const std::string&) override { return nullptr; }
    void zero(void*, uint64_t) override {}
    void to_device(void*, const void*, uint64_t) override {}
    void to_host(void*, const void*, uint64_t) override {}
    void sync() override {}
    void* stream() const noexcept override { return const_cast<int*>(&main_token); }
    uint64_t allocated_bytes() const noexcept override { return 0; }
    void copy(void*, const void*, uint64_t) override {}
    bool can_overlap_copies() const noexcept override { return true; }
    void* side_stream(unsigned index) override { return &side_tokens[index]; }
    void* create_event() override {
        events.push_back(std::make_unique<int>(0));
        return events.back().get();
    }
    void record_event(void* e, void* s) override { ops.push_back({Op::Record, stream_id(s), e, 0}); }
    void wait_event(void* s, void* e) override { ops.push_back({Op::Wait, stream_id(s), e, 0}); }
    void to_device_on(void* s, void*, const void* src, uint64_t) override {
        EXPECT_NE(stream_id(s), 0) << "a bus copy on the main stream";
        ops.push_back({Op::Copy, stream_id(s), nullptr, reinterpret_cast<uintptr_t>(src)});  // node id smuggled in src
    }
};

// A graph of `n` staged GEMV nodes over `slots` slots (node i reads slot i % slots), the last one
// LogitsOnly (an LM head's chunk), between ordinary nodes.
graph::Graph staged_graph(size_t n, uint32_t slots) {
    graph::Graph g;
    for (size_t i = 0; i < n; ++i) {
        graph::Node plain;
        plain.label = "plain " + std::to_string(i);
        g.nodes.push_back(plain);
        graph::Node staged;
        staged.label = "staged " + std::to_string(i);
        staged.bus_copy.bytes = 1024;
        staged.bus_copy.slot = static_cast<uint32_t>(i % slots);
        staged.bus_copy.source = reinterpret_cast<const void*>(g.nodes.size());  // its node index, for the log
        if (i + 1 == n) staged.phase = graph::Phase::LogitsOnly;
        g.nodes.push_back(staged);
    }
    return g;
}

// Replays the log as the streams would run it (each stream in order; a wait makes everything
// enqueued on the other stream before the event's latest record known done) and checks, for every
// staged node: its copy was enqueued after its stream learned that the previous reader of its slot
// ran (so it cannot overwrite bytes still to be read), and the node ran after the main stream
// learned that its copy was done. Returns how many copies were enqueued before the first staged
// node ran (how far the copies run ahead).
size_t check_schedule(const graph::Graph& g, const ScheduleLog& log, bool want_logits, int side_streams) {
    std::map<const void*, std::pair<int, size_t>> last_record;  // event -> (stream, op index)
    std::map<size_t, std::pair<int, size_t>> copy_at;           // node -> (stream, op index)
    std::map<size_t, size_t> run_at;                            // node -> op index
    std::map<int, size_t> knows_main;                           // side stream -> main ops before this index are done
    std::map<int, size_t> main_knows;                           // side stream -> its ops before this index are done
    std::map<int, bool> forked;
    size_t copies_before_first_run = 0;
    bool ran_any = false;
    for (size_t i = 0; i < log.ops.size(); ++i) {
        const auto& op = log.ops[i];
        switch (op.kind) {
            case ScheduleLog::Op::Record: last_record[op.event] = {op.stream, i}; break;
            case ScheduleLog::Op::Wait: {
                auto it = last_record.find(op.event);
                EXPECT_NE(it, last_record.end()) << "op " << i << " waits for an event never recorded";
                if (it == last_record.end()) break;
                EXPECT_NE(it->second.first, op.stream) << "op " << i << " waits for its own stream";
                if (op.stream != 0) {
                    EXPECT_EQ(it->second.first, 0) << "op " << i << ": a side stream waits for another side stream";
                    knows_main[op.stream] = std::max(knows_main[op.stream], it->second.second);
                    if (!forked[op.stream]) forked[op.stream] = true;
                } else {
                    main_knows[it->second.first] = std::max(main_knows[it->second.first], it->second.second);
                }
                break;
            }
            case ScheduleLog::Op::Copy: {
                EXPECT_TRUE(forked[op.stream]) << "side stream " << op.stream << " copies before joining the step";
                copy_at[op.node] = {op.stream, i};
                if (!ran_any) ++copies_before_first_run;
                const uint32_t slot = g.nodes[op.node].bus_copy.slot;
                // Every node that read this slot before must have run, as far as this stream knows.
                for (const auto& [node, at] : run_at) {
                    if (g.nodes[node].bus_copy.slot == slot) {
                        EXPECT_LT(at, knows_main[op.stream]) << "the copy for node " << op.node << " may overwrite slot "
                                                             << slot << " before node " << node << " read it";
                    }
                }
                break;
            }
            case ScheduleLog::Op::Run: {
                ran_any = true;
                run_at[op.node] = i;
                auto c = copy_at.find(op.node);
                EXPECT_NE(c, copy_at.end()) << "node " << op.node << " ran before its copy was enqueued";
                if (c != copy_at.end()) {
                    EXPECT_LT(c->second.second, main_knows[c->second.first])
                        << "node " << op.node << " may run before its copy is done";
                }
                break;
            }
        }
    }
    std::set<int> used;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (g.nodes[i].bus_copy.bytes == 0) continue;
        const bool runs = want_logits || g.nodes[i].phase != graph::Phase::LogitsOnly;
        EXPECT_EQ(copy_at.count(i), runs ? 1u : 0u) << "node " << i;
        EXPECT_EQ(run_at.count(i), runs ? 1u : 0u) << "node " << i;
        if (copy_at.count(i)) used.insert(copy_at[i].first);
    }
    EXPECT_EQ(static_cast<int>(used.size()), side_streams) << "the copies did not take turns on every side stream";
    // The step's stream first records the fork the side streams join.
    EXPECT_TRUE(!log.ops.empty() && log.ops[0].kind == ScheduleLog::Op::Record && log.ops[0].stream == 0);
    return copies_before_first_run;
}

void drive(exec::BusCopies& bus, const graph::Graph& g, ScheduleLog& log, bool want_logits) {
    bus.begin_step(want_logits);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!bus.is_staged(i) || (!want_logits && g.nodes[i].phase == graph::Phase::LogitsOnly)) continue;
        bus.before(i);
        log.ops.push_back({ScheduleLog::Op::Run, 0, nullptr, i});
        bus.after(i);
    }
}

TEST(BusCopies, EachCopyWaitsForItsSlotsLastReaderAndEachReaderForItsCopy) {
    for (const int streams : {1, 2}) {
        ::setenv("DENSE_BUS_STREAMS", std::to_string(streams).c_str(), 1);
        for (const uint32_t slots : {1u, 2u, 4u}) {
            for (const bool logits : {true, false}) {
                SCOPED_TRACE(std::to_string(streams) + " side streams, " + std::to_string(slots) + " slots" +
                             (logits ? ", with logits" : ", state only"));
                const graph::Graph g = staged_graph(9, slots);
                ScheduleLog log;
                exec::BusCopies bus(g, log);
                EXPECT_EQ(bus.bytes_per_step(), 9u * 1024);
                drive(bus, g, log, logits);
                // The copies run ahead of their readers by as many slots as there are.
                EXPECT_EQ(check_schedule(g, log, logits, streams), slots);
                // A second step on the same events checks the same way.
                log.ops.clear();
                drive(bus, g, log, logits);
                EXPECT_EQ(check_schedule(g, log, logits, streams), slots);
            }
        }
    }
    ::unsetenv("DENSE_BUS_STREAMS");
}

TEST(BusCopies, ANodeOutOfOrderIsAnInternalError) {
    const graph::Graph g = staged_graph(4, 2);
    ScheduleLog log;
    exec::BusCopies bus(g, log);
    bus.begin_step(true);
    EXPECT_THROW(bus.before(3), Error);  // node 1 (the first staged one) has not run
}

// On the CPU the whole machinery runs too (copies are memcpys into host "staging"): a split with
// half and then all of its host rows "copied over the bus" gives the logits of no split, bit for
// bit, also with state-only steps between (the LM head's chunks skipped), and the session's staging
// is the plan's bill line.
TEST(BusRows, CpuSessionWithBusRowsIsBitIdenticalToNoSplit) {
    const auto run = [](exec::Session& s, bool alternate) {
        const int32_t prompt[] = {11, 1900, 7, 42, 1023, 5};
        std::vector<std::vector<float>> logits;
        for (size_t i = 0; i < std::size(prompt); ++i) {
            const bool want = !alternate || i % 2 == 1;
            s.step(prompt[i], want);
            logits.push_back(want ? std::vector<float>(s.logits().begin(), s.logits().end()) : std::vector<float>{});
        }
        return logits;
    };
    const auto session = [](std::optional<plan::Placement> split, double share) {
        exec::SessionOptions o;
        o.n_ctx = 32;
        o.kv_type = DENSE_TYPE_F16;
        o.threads = 3;
        o.row_split = std::move(split);
        o.bus_read_share = share;
        return std::make_unique<exec::Session>(tiny().bound, qwen35_spec(), cpu_ref_packs(), o);
    };
    auto plain = session(std::nullopt, 0.5);
    EXPECT_EQ(plain->bus_weight_bytes(), 0u);
    EXPECT_EQ(plain->bill().bytes_by_label().count(plan::kBusStagingLabel), 0u) << "staging without a split";
    const auto reference = run(*plain, false);
    const plan::Placement half = split_all_at(tiny(), [](int64_t rows) { return rows / 2 / 8 * 8; });
    for (const double share : {0.5, 1.0}) {
        SCOPED_TRACE("share " + std::to_string(share));
        auto s = session(half, share);
        EXPECT_GT(s->bus_weight_bytes(), 0u);
        EXPECT_EQ(s->bill().bytes_by_label().at(plan::kBusStagingLabel), plan::bus_staging_slots() * plan::bus_staging_slot_bytes());
        EXPECT_EQ(s->host_split_stats().jobs, 0u);
        for (const bool alternate : {false, true}) {
            s->reset();
            const auto got = run(*s, alternate);
            for (size_t i = 0; i < got.size(); ++i) {
                if (got[i].empty()) continue;
                EXPECT_EQ(std::memcmp(got[i].data(), reference[i].data(), got[i].size() * sizeof(float)), 0)
                    << "logits differ at step " << i << (alternate ? " (state-only steps between)" : "");
            }
        }
        EXPECT_EQ(s->host_split_stats().jobs > 0, share < 1) << "the CPU rows ran as host jobs";
    }
    // bus_read_share auto on the CPU: there is no bus, so share 0 (no staging, nothing measured),
    // and the split computes what the unsplit session does, bit for bit.
    auto automatic = session(half, plan::kAutoBusShare);
    EXPECT_EQ(automatic->bus_read_share(), 0.0);
    EXPECT_NE(automatic->bus_share_note().find("no bus"), std::string::npos) << automatic->bus_share_note();
    EXPECT_EQ(automatic->bus_weight_bytes(), 0u);
    EXPECT_EQ(automatic->bill().bytes_by_label().count(plan::kBusStagingLabel), 0u);
    const auto got = run(*automatic, false);
    for (size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(std::memcmp(got[i].data(), reference[i].data(), got[i].size() * sizeof(float)), 0) << "step " << i;
    EXPECT_GT(automatic->host_split_stats().jobs, 0u);
}

}  // namespace
}  // namespace dense::test
