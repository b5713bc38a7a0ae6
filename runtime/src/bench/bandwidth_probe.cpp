#include "bench/bandwidth_probe.hpp"

#include "bench/op_call.hpp"
#include "bench/timing.hpp"

#include <dense/sdk/pack.hpp>

namespace dense::bench {

namespace {
constexpr int kOpsPerTiming = 10;  // ops per timed graph: amortises the host's launch and sync
}

BandwidthCeiling measure_bandwidth(const packs::PackManager& packs, size_t device, const MemoryFactory& memory,
                                   uint64_t buffer_bytes, int reps) {
    BandwidthCeiling out;
    buffer_bytes = buffer_bytes / 256 * 256;
    out.buffer_bytes = buffer_bytes;
    auto mem = memory();
    auto* a = static_cast<std::byte*>(mem->alloc(buffer_bytes, "bandwidth probe source"));
    auto* b = static_cast<std::byte*>(mem->alloc(buffer_bytes, "bandwidth probe destination"));
    auto* status = mem->alloc(16, "bandwidth probe status word");

    const Timing copy = time_device_work(
        *mem, [&] { for (int i = 0; i < kOpsPerTiming; ++i) mem->copy(i % 2 ? a : b, i % 2 ? b : a, buffer_bytes); }, reps);
    out.copy_gbs = 2.0 * static_cast<double>(buffer_bytes) * kOpsPerTiming / copy.best() / 1e9;

    const auto& dev = packs.devices().at(device);
    const int64_t n = static_cast<int64_t>(buffer_bytes / 4);
    // Two halves, alternated, so consecutive reads never hit what the previous one left in L2.
    OpCall first(packs, device, {DENSE_OP_CHECK_FINITE, DENSE_TYPE_NONE, DENSE_TYPE_NONE, dev.kind()},
                 {contiguous_view(a, DENSE_TYPE_F32, dev, {n, 1, 1, 1})},
                 {contiguous_view(status, DENSE_TYPE_I32, dev, {1, 1, 1, 1})}, nullptr, mem->stream());
    OpCall second(packs, device, {DENSE_OP_CHECK_FINITE, DENSE_TYPE_NONE, DENSE_TYPE_NONE, dev.kind()},
                  {contiguous_view(b, DENSE_TYPE_F32, dev, {n, 1, 1, 1})},
                  {contiguous_view(status, DENSE_TYPE_I32, dev, {1, 1, 1, 1})}, nullptr, mem->stream());
    out.read_impl = first.impl_name();
    const Timing read = time_device_work(
        *mem, [&] { for (int i = 0; i < kOpsPerTiming; ++i) (i % 2 ? second : first).run(); }, reps);
    out.read_gbs = static_cast<double>(buffer_bytes) * kOpsPerTiming / read.best() / 1e9;
    return out;
}

}  // namespace dense::bench
