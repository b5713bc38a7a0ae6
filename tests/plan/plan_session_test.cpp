// The plan is what a session allocates: a cpu-ref session's DeviceMemory, label by label, against
// the plan made before it existed; and the GPU weight arena as exec::WeightStore really allocates
// it, on a host-backed memory that calls itself a GPU.
#include "core/error.hpp"
#include "exec/weight_store.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/allocation_size.hpp"
#include "plan/session_bill.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace dense::test {
namespace {

plan::PlanRequest cpu_request(int64_t n_ctx, dense_type_id kv, int32_t device_top_k) {
    plan::PlanRequest r;
    r.n_ctx = n_ctx;
    r.kv_type = kv;
    r.device_top_k = device_top_k;
    r.target = plan::target_for_device(cpu_ref_packs(), 0);
    return r;
}

// device_top_k: the session keeps the k best logits on the device (two more step outputs, TOP_K's node).
void expect_session_matches_plan(const Model& m, int64_t n_ctx, dense_type_id kv, int32_t device_top_k = 0) {
    const auto bill = plan::make_plan(m.bound, qwen35_spec(), &cpu_ref_packs(), cpu_request(n_ctx, kv, device_top_k));
    auto session = make_session(m, n_ctx, kv, device_top_k);
    EXPECT_EQ(session->memory_bytes(), bill.allocated());
    EXPECT_EQ(session->allocated_by_label(), bill.bytes_by_label());
    // The session's own bill (made from its built graph) has the same lines.
    const auto& own = session->bill();
    ASSERT_EQ(own.lines.size(), bill.lines.size());
    for (size_t i = 0; i < bill.lines.size(); ++i) {
        EXPECT_EQ(own.lines[i].item, bill.lines[i].item) << i;
        EXPECT_EQ(own.lines[i].layer_kind, bill.lines[i].layer_kind) << i;
        EXPECT_EQ(own.lines[i].bytes, bill.lines[i].bytes) << plan::title(bill.lines[i].item);
    }
    // And it runs from the arena the plan laid out.
    session->step(1, true);
    for (float v : session->logits()) ASSERT_TRUE(std::isfinite(v));
}

TEST(PlanSession, CpuRefSessionAllocatesExactlyThePlan) {
    const auto m = synth_tiny();
    expect_session_matches_plan(*m, 300, DENSE_TYPE_F16);
    expect_session_matches_plan(*m, 1, DENSE_TYPE_F32);
    expect_session_matches_plan(*m, 300, DENSE_TYPE_F16, 40);
}

TEST(PlanSession, GoldenModelSessionAllocatesExactlyThePlan) {
    const auto m = bind_file(gguf::GgufFile::open(data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"));
    expect_session_matches_plan(*m, 64, DENSE_TYPE_F32);
}

// Host memory that says it is a GPU, so exec::WeightStore uploads into an arena as on a real one.
class HostBackedGpuMemory final : public exec::DeviceMemory {
public:
    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CUDA; }
    std::string label() const override { return "host-backed test GPU"; }
    void* alloc(uint64_t bytes, const std::string& what) override {
        const uint64_t n = plan::allocation_size(bytes);
        blocks_.emplace_back(n);
        total_ += n;
        account(what, n);
        return blocks_.back().data();
    }
    void zero(void* dst, uint64_t bytes) override { std::memset(dst, 0, bytes); }
    void to_device(void* dst, const void* src, uint64_t bytes) override { std::memcpy(dst, src, bytes); }
    void to_host(void* dst, const void* src, uint64_t bytes) override { std::memcpy(dst, src, bytes); }
    void sync() override {}
    void* stream() const noexcept override { return nullptr; }
    uint64_t allocated_bytes() const noexcept override { return total_; }
    void copy(void* dst, const void* src, uint64_t bytes) override { std::memmove(dst, src, bytes); }

private:
    std::vector<std::vector<std::byte>> blocks_;
    uint64_t total_ = 0;
};

void expect_weight_store_matches_plan(const Model& m) {
    const auto bill = plan::make_plan(m.bound, qwen35_spec(), nullptr, absent_gpu(16));
    HostBackedGpuMemory memory;
    exec::WeightStore store(m.bound, memory);
    const std::map<std::string, uint64_t> planned = {{plan::kWeightsLabel, bill.weight_bytes}};
    EXPECT_EQ(memory.allocated_by_label(), planned);
    EXPECT_EQ(store.uploaded_bytes(), bill.weight_bytes);
    // Every tensor landed in the arena with its bytes.
    for (const auto& [role, t] : m.bound.globals)
        if (t != nullptr) {
            EXPECT_EQ(std::memcmp(store.pointer(t), t->data.data(), t->n_bytes), 0) << role;
        }
}

TEST(PlanSession, GpuWeightArenaIsWhatTheWeightStoreAllocates) {
    expect_weight_store_matches_plan(*synth_tiny());
    SynthOptions mtp;
    mtp.mtp = true;
    expect_weight_store_matches_plan(*synth_tiny(mtp));
    SynthOptions tied;
    tied.tied = true;
    expect_weight_store_matches_plan(*synth_tiny(tied));
}

}  // namespace
}  // namespace dense::test
