// The GPU's share of a row split's host rows (exec/bus_rows.hpp), on the CPU: how many rows go over
// the bus at a share, that the copy in device-readable host memory holds exactly each tensor's bus
// rows and where the device reads them, and the lowering's three nodes per split weight (device
// prefix, bus rows, CPU rows) covering every output row once.
// That the GPU computes the same logits with bus rows is tested on the GPU
// (GpuSession.BusRows*, tests/exec/gpu_session_test.cpp).
#include "common/page_residency.hpp"
#include "exec/bus_rows.hpp"
#include "graph/graph_builder.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/row_split.hpp"
#include "session_fixture.hpp"
#include "synth/synth_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <map>
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

// A device whose "mapped" host memory is plain host memory, which it reads at host address + kOffset.
class RecordingMemory final : public exec::DeviceMemory {
public:
    static constexpr uintptr_t kOffset = uintptr_t{1} << 44;
    bool readable = true;
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
    bool can_read_host() const noexcept override { return readable; }
    std::pair<void*, const void*> alloc_host_mapped(uint64_t bytes) override {
        blocks.push_back(std::make_unique<std::byte[]>(static_cast<size_t>(bytes) + 4096));
        const auto at = (reinterpret_cast<uintptr_t>(blocks.back().get()) + 4095) / 4096 * 4096;  // page-aligned, as the driver's
        void* host = reinterpret_cast<void*>(at);
        return {host, reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(host) + kOffset)};
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

TEST(BusRows, CopiesEachTensorsBusRowsWhereTheDeviceReadsThem) {
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
        EXPECT_EQ(reinterpret_cast<uintptr_t>(rows.device_rows(t)), reinterpret_cast<uintptr_t>(host) + RecordingMemory::kOffset)
            << t->name;
    }
    EXPECT_EQ(rows.bus_bytes(), bus_bytes);
    EXPECT_GE(rows.pinned_bytes(), bus_bytes);
    EXPECT_LT(rows.pinned_bytes(), bus_bytes + 256 * l.bus.size());
    // A tensor without bus rows is refused, not guessed.
    const gguf::TensorInfo* other = tiny().file.find_tensor("token_embd.weight");
    ASSERT_NE(other, nullptr);
    EXPECT_THROW((void)rows.device_rows(other), Error);
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

TEST(BusRows, ADeviceThatCannotReadHostMemoryIsRefusedWithTheFix) {
    const BusLayout l = layout(0.5);
    std::vector<const gguf::TensorInfo*> tensors;
    for (const auto& [t, n] : l.bus) tensors.push_back(t);
    RecordingMemory memory;
    memory.readable = false;
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

// The lowering of a split weight with bus rows: the CPU node, the bus node and the device prefix
// write disjoint slices of the output that together are every row, and the bus node reads the
// weight at the device address of its first row in the mapping.
TEST(BusRows, LoweringCoversEveryOutputRowOnceWithThreeNodes) {
    const BusLayout l = layout(0.5);
    graph::GraphOptions o;
    o.n_ctx = 64;
    o.kv_type = DENSE_TYPE_F16;
    o.device_kind = DENSE_DEVICE_CUDA;
    o.activation_for = [](dense_type_id) { return DENSE_TYPE_Q8_32; };
    o.device_rows = [&](const gguf::TensorInfo* t) { return l.keep.count(t) ? l.keep.at(t) : t->ne[1]; };
    o.bus_rows = [&](const gguf::TensorInfo* t) { return l.bus.count(t) ? l.bus.at(t) : int64_t{0}; };
    o.bus_weight = [&](const gguf::TensorInfo* t) {  // a fake device address: nothing runs
        return reinterpret_cast<const void*>(RecordingMemory::kOffset + static_cast<uintptr_t>(l.keep.at(t)));
    };
    const graph::Graph g = graph::build_graph(tiny().bound, qwen35_spec(), o);
    size_t checked = 0;
    for (const auto& [t, n] : l.bus) {
        const std::string name(t->name);
        const uint64_t rb = plan::row_bytes(*t);
        // rows covered per output buffer slice: (first element, count, kind)
        std::vector<std::tuple<int64_t, int64_t, std::string>> parts;
        for (const auto& node : g.nodes) {
            if (node.key.op != DENSE_OP_GEMV_Q || node.label.rfind(name + " ", 0) != 0) continue;
            const auto& w = node.src.at(0);
            const auto& y = node.dst.at(0);
            const int64_t first = static_cast<int64_t>(y.offset / 4), count = y.view.ne[0];
            EXPECT_EQ(w.view.ne[1], count) << node.label;
            if (node.split_cpu_part) {
                parts.emplace_back(first, count, "cpu");
                EXPECT_EQ(w.external_ptr, t->data.data() + rb * static_cast<uint64_t>(first)) << node.label;
            } else if (node.label.find("over the bus") != std::string::npos) {
                parts.emplace_back(first, count, "bus");
                EXPECT_EQ(first, l.keep.at(t)) << node.label;
                EXPECT_EQ(count, n) << node.label;
                EXPECT_EQ(reinterpret_cast<uintptr_t>(w.external_ptr), RecordingMemory::kOffset + static_cast<uintptr_t>(first))
                    << node.label;
                EXPECT_EQ(node.key.device, DENSE_DEVICE_CUDA) << node.label;
            } else {
                parts.emplace_back(first, count, "device");
            }
        }
        std::sort(parts.begin(), parts.end());
        int64_t next = 0;
        std::string kinds;
        for (const auto& [first, count, kind] : parts) {
            EXPECT_EQ(first, next) << name << ": gap or overlap at row " << next;
            next = first + count;
            kinds += kind + " ";
        }
        EXPECT_EQ(next, t->ne[1]) << name;
        EXPECT_EQ(kinds, l.keep.at(t) > 0 ? (n < t->ne[1] - l.keep.at(t) ? "device bus cpu " : "device bus ")
                                          : (n < t->ne[1] ? "bus cpu " : "bus "))
            << name;
        ++checked;
    }
    EXPECT_GT(checked, 0u);
}

}  // namespace
}  // namespace dense::test
