// The CPU side of a row split on a device (exec/host_nodes.hpp), without a GPU: a stand-in device
// memory whose "stream" runs everything at once and in order (copies are memcpy, a host function is
// called on the spot), and a graph of one split GEMV's CPU part. What it checks: the job computes
// exactly what the op computes when called directly on the whole suffix (plain and accumulating);
// its result reaches the device buffer only at the join, and the join comes right before a node that
// reads that buffer, not before an unrelated one; nothing is left pending at the end of a step.
#include "core/error.hpp"
#include "core/half.hpp"
#include "exec/host_nodes.hpp"
#include "exec/session_fixture.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <random>

namespace dense::test {
namespace {

// "Device" memory that is host memory, with an eager stream.
class EagerDevice final : public exec::DeviceMemory {
public:
    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CUDA; }
    std::string label() const override { return "eager test device"; }
    void* alloc(uint64_t bytes, const std::string& what) override {
        blocks_.emplace_back(bytes, std::byte{0});
        account(what, bytes);
        total_ += bytes;
        return blocks_.back().data();
    }
    void zero(void* dst, uint64_t bytes) override { std::memset(dst, 0, bytes); }
    void to_device(void* dst, const void* src, uint64_t bytes) override {
        ++to_device_copies;
        std::memcpy(dst, src, bytes);
    }
    void to_host(void* dst, const void* src, uint64_t bytes) override {
        ++to_host_copies;
        std::memcpy(dst, src, bytes);
    }
    void sync() override {}
    void copy(void* dst, const void* src, uint64_t bytes) override { std::memmove(dst, src, bytes); }
    void* stream() const noexcept override { return nullptr; }
    uint64_t allocated_bytes() const noexcept override { return total_; }
    bool can_call_host() const noexcept override { return true; }
    void call_host(void (*fn)(void*), void* arg) override { fn(arg); }

    int to_device_copies = 0, to_host_copies = 0;

private:
    std::vector<std::vector<std::byte>> blocks_;
    uint64_t total_ = 0;
};

constexpr int64_t kIn = 512, kRows = 96, kKeep = 40;  // rows [40, 96) on the CPU

struct Fixture {
    std::vector<uint8_t> weights;  // Q8_0 {kIn, kRows}
    std::vector<uint8_t> act;      // Q8_32 {kIn}
    EagerDevice device;
    graph::Graph g;
    std::vector<void*> base;
    const packs::OpCandidate* op = nullptr;

    explicit Fixture(bool accumulate) {
        std::mt19937 rng(11);
        weights.resize(static_cast<size_t>(kRows * kIn / 32 * 34));
        for (size_t b = 0; b < weights.size(); b += 34) {
            const uint16_t d = fp32_to_fp16(0.01f + 0.001f * static_cast<float>(rng() % 7));
            std::memcpy(&weights[b], &d, 2);
            for (int i = 0; i < 32; ++i) weights[b + 2 + i] = static_cast<uint8_t>(static_cast<int8_t>(rng() % 255 - 127));
        }
        act.resize(static_cast<size_t>(kIn / 32 * 40));
        for (int64_t blk = 0; blk < kIn / 32; ++blk) {
            int32_t sum = 0;
            for (int i = 0; i < 32; ++i) {
                const auto q = static_cast<int8_t>(rng() % 255 - 127);
                act[static_cast<size_t>(32 * blk + i)] = static_cast<uint8_t>(q);
                sum += q;
            }
            const float d = 0.02f, s = d * static_cast<float>(sum);
            std::memcpy(&act[static_cast<size_t>(kIn + 4 * blk)], &d, 4);
            std::memcpy(&act[static_cast<size_t>(kIn + kIn / 8 + 4 * blk)], &s, 4);
        }

        // Buffers: 0 = the quantized activation, 1 = y, 2 = something else.
        g.buffers = {{"xq", graph::BufferKind::Activation, act.size(), -1},
                     {"y", graph::BufferKind::Activation, kRows * 4, -1},
                     {"other", graph::BufferKind::Activation, 64, -1}};
        graph::Node n;
        n.label = "w gemv rows [40, 96) on the cpu";
        n.split_cpu_part = true;
        n.key = {DENSE_OP_GEMV_Q, DENSE_TYPE_Q8_0, DENSE_TYPE_Q8_32, DENSE_DEVICE_CPU};
        graph::ViewRef w;
        w.external = true;
        w.external_ptr = weights.data() + kKeep * (kIn / 32 * 34);
        w.view = view(DENSE_TYPE_Q8_0, kIn, kRows - kKeep, 34, kIn / 32 * 34);
        graph::ViewRef x;
        x.buffer = 0;
        x.view = view(DENSE_TYPE_Q8_32, kIn, 1, 40, static_cast<int64_t>(act.size()));
        graph::ViewRef y;
        y.buffer = 1;
        y.offset = kKeep * 4;
        y.view = view(DENSE_TYPE_F32, kRows - kKeep, 1, 4, (kRows - kKeep) * 4);
        n.src = {w, x};
        n.dst = {y};
        if (accumulate) {
            auto p = dense::sdk::make_struct<dense_gemv_params>();
            p.accumulate = 1;
            n.params.resize(sizeof p);
            std::memcpy(n.params.data(), &p, sizeof p);
        }
        g.nodes.push_back(n);
        for (const auto& b : g.buffers) base.push_back(device.alloc(b.bytes, b.name));
        std::memcpy(base[0], act.data(), act.size());
        for (int64_t r = 0; r < kRows; ++r) static_cast<float*>(base[1])[r] = 1000.0f + static_cast<float>(r);
        g.resolve(base);
        op = cpu_ref_packs().select_op(g.nodes[0].key, g.nodes[0].call, 0);
        if (op != nullptr) g.nodes[0].op = *op;
    }

    static dense_tensor_view view(dense_type_id type, int64_t ne0, int64_t ne1, int64_t block_bytes, int64_t row_bytes) {
        dense_tensor_view v{};
        v.type = type;
        v.device_kind = DENSE_DEVICE_CPU;
        v.ne[0] = ne0;
        v.ne[1] = ne1;
        v.ne[2] = v.ne[3] = 1;
        v.nb[0] = block_bytes;
        v.nb[1] = row_bytes;
        v.nb[2] = v.nb[3] = row_bytes * ne1;
        return v;
    }

    // The op called directly on the same views (host memory here): what the job must produce.
    std::vector<float> direct() {
        std::vector<float> y(static_cast<float*>(base[1]), static_cast<float*>(base[1]) + kRows);
        dense_tensor_view src[2] = {g.nodes[0].src_views[0], g.nodes[0].src_views[1]};
        src[1].data = act.data();
        dense_tensor_view dst = g.nodes[0].dst_views[0];
        dst.data = y.data() + kKeep;
        dense_op_call call = g.nodes[0].call;
        call.src = src;
        call.dst = &dst;
        EXPECT_EQ(op->impl.run(op->impl.user, &call), DENSE_OK);
        return y;
    }

    std::vector<float> device_y() const {
        return {static_cast<const float*>(base[1]), static_cast<const float*>(base[1]) + kRows};
    }
};

graph::Node reader_of(graph::BufferId buffer, uint64_t offset, int64_t n) {
    graph::Node r;
    graph::ViewRef v;
    v.buffer = buffer;
    v.offset = offset;
    v.view = Fixture::view(DENSE_TYPE_F32, n, 1, 4, n * 4);
    r.src = {v};
    return r;
}

void check(bool accumulate) {
    Fixture f(accumulate);
    ASSERT_NE(f.op, nullptr) << "cpu-ref has no GEMV_Q(q8_0, q8_32)";
    const std::vector<float> want = f.direct();
    const std::vector<float> before = f.device_y();
    exec::CpuWorkers workers(3);
    exec::HostNodes host(f.g, f.device, workers);
    ASSERT_TRUE(host.is_host(0));

    host.begin_step();
    host.start(0);
    // The result goes to the device only at the join: an unrelated node (another buffer, or y's
    // rows below the split) does not join; a reader of the CPU's rows does.
    host.join_before(reader_of(2, 0, 16));
    host.join_before(reader_of(1, 0, kKeep));
    EXPECT_EQ(f.device_y(), before);
    host.join_before(reader_of(1, (kRows - 1) * 4, 1));
    const std::vector<float> got = f.device_y();
    ASSERT_EQ(got.size(), want.size());
    for (size_t r = 0; r < got.size(); ++r)
        EXPECT_EQ(std::memcmp(&got[r], &want[r], 4), 0) << "row " << r << ": " << got[r] << " vs " << want[r];
    EXPECT_NE(got, before);
    host.join_all();
    host.throw_if_failed(0);

    const auto stats = host.stats();
    EXPECT_EQ(stats.jobs, 1u);
    EXPECT_EQ(stats.bytes_to_host, f.act.size() + (accumulate ? (kRows - kKeep) * 4 : 0));
    EXPECT_EQ(stats.bytes_to_device, static_cast<uint64_t>((kRows - kKeep) * 4));
    EXPECT_EQ(f.device.to_device_copies, 1);
    EXPECT_EQ(f.device.to_host_copies, accumulate ? 2 : 1);
}

TEST(HostNodes, SplitGemvMatchesTheDirectCallAndLandsAtTheJoin) { check(false); }

TEST(HostNodes, AccumulatingSplitGemvAddsToTheDeviceRows) { check(true); }

TEST(HostNodes, NodesOtherThanGemvAreRefused) {
    Fixture f(false);
    f.g.nodes[0].key.op = DENSE_OP_RMS_NORM;
    exec::CpuWorkers workers(1);
    EXPECT_THROW(exec::HostNodes(f.g, f.device, workers), Error);
}

// The hand-over switch is read once per session: a value other than "words" or "hostfn" is a usage
// error that names the variable, not a silent fallback.
TEST(HostNodes, UnknownHandOverSettingIsAUsageError) {
    Fixture f(false);
    exec::CpuWorkers workers(1);
    const char* before = std::getenv("DENSE_ROW_SPLIT_SYNC");
    const std::string saved = before != nullptr ? before : "";
    ::setenv("DENSE_ROW_SPLIT_SYNC", "polling", 1);
    try {
        exec::HostNodes host(f.g, f.device, workers);
        ADD_FAILURE() << "DENSE_ROW_SPLIT_SYNC=polling was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("DENSE_ROW_SPLIT_SYNC"), std::string::npos) << e.what();
    }
    ::setenv("DENSE_ROW_SPLIT_SYNC", "hostfn", 1);
    EXPECT_NO_THROW(exec::HostNodes(f.g, f.device, workers));
    if (before != nullptr)
        ::setenv("DENSE_ROW_SPLIT_SYNC", saved.c_str(), 1);
    else
        ::unsetenv("DENSE_ROW_SPLIT_SYNC");
}

}  // namespace
}  // namespace dense::test
