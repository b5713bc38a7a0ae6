// The CPU side of bus_read_share auto's probe (exec/split_rates.hpp) on the CPU: it runs the CPU
// pack's GEMV over a weight's host rows on the workers and reports a rate; a CPU "device" has no
// bus to measure. (The bus and GPU probes run in GpuSession.AutoBusShareIsMeasuredAndMatchesTheUnsplitStep.)
#include "exec/session_fixture.hpp"
#include "exec/split_rates.hpp"
#include "plan/plan_fixture.hpp"
#include "plan/row_split.hpp"
#include "plan/weight_arena.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"

#include <gtest/gtest.h>

namespace dense::test {
namespace {

TEST(SplitRates, CpuProbeMeasuresTheHostRowsOnTheWorkers) {
    const auto m = synth_tiny();
    const gguf::TensorInfo* biggest = nullptr;
    for (const auto* t : plan::weight_arena(m->bound).tensors)
        if (t->n_dims == 2 && (biggest == nullptr || t->n_bytes > biggest->n_bytes)) biggest = t;
    ASSERT_NE(biggest, nullptr);
    auto memory = exec::make_host_memory();
    exec::CpuWorkers workers(2);
    exec::ProbeWeight w;
    w.tensor = biggest;
    w.n_device_rows = biggest->ne[1] / 2;
    w.act = global_type_table().find(biggest->type)->act_type;
    const exec::SplitRates r = exec::measure_split_rates(*memory, workers, cpu_ref_packs(), 0, w, {w}, nullptr, 0);
    EXPECT_GT(r.cpu_gbs, 0.0) << biggest->name;
    EXPECT_EQ(r.bus_gbs, 0.0);
    EXPECT_EQ(r.gpu_gbs, 0.0);

    w.n_device_rows = biggest->ne[1];  // no host rows: nothing to measure on
    EXPECT_THROW(exec::measure_split_rates(*memory, workers, cpu_ref_packs(), 0, w, {w}, nullptr, 0), Error);
}

}  // namespace
}  // namespace dense::test
