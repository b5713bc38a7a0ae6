// The plan against what a real GPU session takes: free device memory (cuMemGetInfo, through the
// device probe) before and after creating a session on the GPU, at several contexts, within 2 % of
// the plan's allocations (or the driver's 2 MiB page per allocation, for this small model); and after the first step
// (kernel images, captured step graph) the memory taken stays within the plan's peak, reserve included. Skips (with the
// reason) without a GPU.
#include "common/pack_loading.hpp"
#include "exec/device_memory.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/plan_target.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace dense::test {
namespace {

packs::PackManager& build_packs() {
    // Never destroyed: packs stay loaded for the whole process (pack_manager.hpp).
    static packs::PackManager* pm = load_packs_from({build_pack_dir()}).release();
    return *pm;
}

std::optional<size_t> gpu_device(std::string& why) {
    const auto& pm = build_packs();
    for (size_t i = 0; i < pm.devices().size(); ++i) {
        const auto& d = pm.devices()[i];
        if (d.kind() != DENSE_DEVICE_CUDA || d.simulated) continue;
        if (pm.chosen_pack(i) != nullptr) return i;
        why = "no kernel pack scores above 0 on " + d.id();
        return std::nullopt;
    }
    why = "no CUDA device (no driver or no GPU on this machine)";
    return std::nullopt;
}

// Free memory of the device with CUDA ordinal `ordinal`, read now.
uint64_t free_now(uint32_t ordinal) {
    for (const auto& d : packs::probe_cuda_devices())
        if (d.hw.device_index == ordinal) return d.hw.free_memory_bytes;
    return 0;
}

TEST(GpuPlan, MeasuredAllocationsMatchThePlanWithinTwoPercent) {
    std::string why;
    const auto gpu = gpu_device(why);
    if (!gpu) GTEST_SKIP() << "GPU test: " << why;
    const uint32_t ordinal = build_packs().devices()[*gpu].hw.device_index;
    // The real vocabulary: a weight arena of a realistic proportion to the buffers.
    SynthOptions o;
    o.vocab_size = 0;
    const auto m = synth_tiny(o);
    // Holding a stream keeps the device's context alive, so only the session's memory is measured.
    const auto keep_context = exec::make_pack_memory(build_packs(), *gpu);

    for (int64_t n_ctx : {int64_t{4096}, int64_t{65536}, int64_t{262144}}) {
        plan::PlanRequest r;
        r.n_ctx = n_ctx;
        r.target = plan::target_for_device(build_packs(), *gpu);
        const auto bill = plan::make_plan(m->bound, qwen35_spec(), &build_packs(), r);

        const uint64_t before = free_now(ordinal);
        ASSERT_GT(before, 0u);
        exec::SessionOptions so;
        so.n_ctx = n_ctx;
        so.kv_type = DENSE_TYPE_F16;
        so.device = *gpu;
        auto session = std::make_unique<exec::Session>(m->bound, qwen35_spec(), build_packs(), so);
        const uint64_t after_create = free_now(ordinal);
        EXPECT_EQ(session->allocated_by_label(), bill.bytes_by_label()) << "context " << n_ctx;

        const double measured = static_cast<double>(before) - static_cast<double>(after_create);
        const double planned = static_cast<double>(bill.allocated());
        std::printf("context %lld: planned %.2f MiB allocated (+ %.0f MiB reserve), measured %.2f MiB (%+.2f %%)\n",
                    static_cast<long long>(n_ctx), planned / 1048576.0, static_cast<double>(bill.reserve) / 1048576.0,
                    measured / 1048576.0, 100.0 * (measured - planned) / planned);
        // The bar is 2 %. The driver hands out memory in 2 MiB pages, so each of the session's few
        // allocations (and the free-memory reading itself) may be off by up to one page: a bound
        // that only matters for a model this small; on a 27B the 2 % dominate.
        const double page_slack = static_cast<double>(bill.allocations.size() + 1) * 2.0 * 1048576.0;
        EXPECT_NEAR(measured, planned, std::max(0.02 * planned, page_slack)) << "context " << n_ctx;

        session->step(1, true);  // loads the kernels, captures the step graph
        const uint64_t after_step = free_now(ordinal);
        const double taken = static_cast<double>(before) - static_cast<double>(after_step);
        std::printf("context %lld: after the first step %.2f MiB taken, plan peak %.2f MiB\n",
                    static_cast<long long>(n_ctx), taken / 1048576.0, static_cast<double>(bill.peak()) / 1048576.0);
        EXPECT_LE(taken, static_cast<double>(bill.peak())) << "the safety reserve is too small, context " << n_ctx;
        session.reset();
    }
}

}  // namespace
}  // namespace dense::test
