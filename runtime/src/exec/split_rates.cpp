#include "exec/split_rates.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "exec/cpu_relax.hpp"
#include "exec/host_nodes.hpp"
#include "exec/settled_timing.hpp"
#include "plan/row_split.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

namespace dense::exec {

namespace {

constexpr uint64_t kBusProbeBytes = uint64_t{32} << 20;
constexpr uint64_t kCpuProbeBytes = uint64_t{64} << 20;
constexpr int kRepeats = 3;  // timed runs per round of a device probe
constexpr double kWarmUpMs = 200;
constexpr int kMaxWarmUpPasses = 100000;  // bounds the warm-up where a device's work takes no time

dense_tensor_view view(void* data, dense_type_id type, dense_device_kind kind, int64_t ne0, int64_t ne1) {
    const TypeInfo* t = global_type_table().find(type);
    if (t == nullptr) throw Error(ErrorKind::Internal, "split rates: unknown type " + std::to_string(type));
    dense_tensor_view v{};
    v.data = data;
    v.type = type;
    v.device_kind = kind;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.ne[2] = v.ne[3] = 1;
    v.nb[0] = t->block_bytes;
    v.nb[1] = static_cast<int64_t>(TypeTable::row_bytes(*t, ne0).value_or(0));
    v.nb[2] = v.nb[3] = v.nb[1] * ne1;
    return v;
}

uint64_t view_bytes(const dense_tensor_view& v) { return static_cast<uint64_t>(v.nb[1]) * static_cast<uint64_t>(v.ne[1]); }

// One GEMV call: src = {w, x}, dst = y; the views must outlive it.
dense_op_call gemv_call(const dense_tensor_view* src, const dense_tensor_view& dst) {
    dense_op_call c{};
    c.hdr = {static_cast<uint16_t>(DENSE_ABI_MAJOR), static_cast<uint16_t>(DENSE_ABI_MINOR),
             static_cast<uint32_t>(sizeof(dense_op_call))};
    c.op_kind = DENSE_OP_GEMV_Q;
    c.n_src = 2;
    c.src = src;
    c.n_dst = 1;
    c.dst = &dst;
    return c;
}

// The pack's GEMV for `call` on devices()[device] (nullptr where none has it).
const packs::OpCandidate* find_gemv(const packs::PackManager& packs, size_t device, dense_device_kind kind,
                                    const dense_op_call& call) {
    return packs.select_op({DENSE_OP_GEMV_Q, call.src[0].type, call.src[1].type, kind}, call, device);
}

void check(dense_status s, const std::string& what) {
    if (s != DENSE_OK) throw Error(ErrorKind::Device, "bus_read_share auto: " + what + " failed (status " + std::to_string(s) + ")");
}

// The CPU probe's chunks, claimed by the workers; the last one to finish counts `done` up.
struct CpuProbe {
    std::vector<dense_op_call> chunks;
    std::vector<std::array<dense_tensor_view, 2>> src;
    std::vector<dense_tensor_view> dst;
    dense_op_impl impl{};
    std::atomic<size_t> finished{0};
    std::atomic<int> failed{DENSE_OK};

    static void run(void* p, size_t i) {
        auto& probe = *static_cast<CpuProbe*>(p);
        const dense_status s = probe.impl.run(probe.impl.user, &probe.chunks[i]);
        if (s != DENSE_OK) probe.failed.store(s);
        probe.finished.fetch_add(1, std::memory_order_release);
    }
};

double cpu_rate(CpuWorkers& workers, const packs::PackManager& packs, const ProbeWeight& w) {
    const gguf::TensorInfo& t = *w.tensor;
    const uint64_t row = plan::row_bytes(t);
    const int64_t host_rows = t.ne[1] - w.n_device_rows;
    const int64_t rows = std::clamp<int64_t>(static_cast<int64_t>(kCpuProbeBytes / row), 1, host_rows);
    // The last `rows` rows (host rows), and an output for them, cut into chunks as the CPU parts are.
    const auto* first = t.data.data() + row * static_cast<uint64_t>(t.ne[1] - rows);
    const dense_tensor_view weight = view(const_cast<std::byte*>(first), t.type, DENSE_DEVICE_CPU, t.ne[0], rows);
    std::vector<std::byte> x(view_bytes(view(nullptr, w.act, DENSE_DEVICE_CPU, t.ne[0], 1)));
    std::vector<std::byte> y(static_cast<size_t>(rows) * 4);
    const dense_tensor_view xv = view(x.data(), w.act, DENSE_DEVICE_CPU, t.ne[0], 1);
    const dense_tensor_view yv = view(y.data(), DENSE_TYPE_F32, DENSE_DEVICE_CPU, rows, 1);
    CpuProbe probe;
    const int64_t count = row_chunk_count(workers.size(), rows);
    for (int64_t c = 0; c < count; ++c) {
        const int64_t a = rows * c / count, b = rows * (c + 1) / count;
        probe.src.push_back({weight_row_chunk(weight, a, b), xv});
        probe.dst.push_back(output_chunk(yv, a, b));
    }
    for (size_t k = 0; k < probe.src.size(); ++k) {
        probe.chunks.push_back(gemv_call(probe.src[k].data(), probe.dst[k]));
        probe.chunks.back().n_threads = 1;
    }
    const packs::OpCandidate* gemv = find_gemv(packs, 0, DENSE_DEVICE_CPU, probe.chunks.front());
    if (gemv == nullptr)
        throw Error(ErrorKind::Pack, "bus_read_share auto: no CPU pack has the GEMV of '" + std::string(t.name) + "'");
    probe.impl = gemv->impl;

    // One run a round, until a round no longer beats the best before it (settled_timing.hpp).
    const double best_ms = settled_best_ms([&] {
        probe.finished.store(0);
        const auto from = std::chrono::steady_clock::now();
        workers.submit(&CpuProbe::run, &probe, probe.chunks.size());
        while (probe.finished.load(std::memory_order_acquire) < probe.chunks.size()) cpu_relax();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
        if (probe.failed.load() != DENSE_OK) check(static_cast<dense_status>(probe.failed.load()), "the CPU GEMV probe");
        return ms;
    });
    return best_ms > 0 ? static_cast<double>(row) * static_cast<double>(rows) / (best_ms * 1e6) : 0;
}

// Rounds of kRepeats timed runs of `enqueue` on the device's stream, until a round's best no longer
// beats the best before it (settled_timing.hpp); the best run, in ms.
template <class F>
double best_device_ms(DeviceMemory& memory, F&& enqueue) {
    void* marks = memory.create_marks(2 * kRepeats);
    double best = 0;
    try {
        best = settled_best_ms([&] {
            for (int r = 0; r < kRepeats; ++r) {
                memory.record_mark(marks, static_cast<uint32_t>(2 * r));
                enqueue();
                memory.record_mark(marks, static_cast<uint32_t>(2 * r + 1));
            }
            memory.sync();
            double round = 0;
            for (int r = 0; r < kRepeats; ++r) {
                const double ms = memory.elapsed_ms(marks, static_cast<uint32_t>(2 * r), static_cast<uint32_t>(2 * r + 1));
                round = r == 0 ? ms : std::min(round, ms);
            }
            return round;
        });
    } catch (...) {
        memory.destroy_marks(marks);
        throw;
    }
    memory.destroy_marks(marks);
    return best;
}

// Keeps the device busy with every probe, back to back, for at least kWarmUpMs of wall time, so
// that the timed rounds do not start on an idle GPU's clocks and PCIe link (settled_timing.hpp says
// what that cost). The probes' own settling is the second guard.
void warm_up(DeviceMemory& memory, const std::vector<std::function<void()>>& probes) {
    const auto from = std::chrono::steady_clock::now();
    for (int pass = 0; pass < kMaxWarmUpPasses; ++pass) {
        for (const auto& enqueue : probes) enqueue();
        memory.sync();
        if (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count() >= kWarmUpMs) return;
    }
}

// One format's GEMV over its weight's VRAM rows, ready to enqueue on the device's stream.
struct GpuProbe {
    dense_tensor_view src[2];
    dense_tensor_view dst;
    dense_op_call call;
    dense_op_impl impl;
    uint64_t weight_bytes = 0;
    uint64_t format_bytes = 0;  // ProbeWeight::format_bytes: the rate's weight in the average
    // The call points at this probe's own views (a copied probe must not point at the original's).
    void run() const {
        dense_op_call c = call;
        c.src = src;
        c.dst = &dst;
        check(impl.run(impl.user, &c), "the GPU GEMV probe");
    }
};

// The probe of w (nullopt when it cannot be measured: no device pack has the GEMV, or the scratch
// is too small). Activation, output and workspace live in the scratch; the activation is zeroed.
std::optional<GpuProbe> gpu_probe(DeviceMemory& memory, const packs::PackManager& packs, size_t device,
                                  const ProbeWeight& w, void* scratch, uint64_t scratch_bytes) {
    if (w.tensor == nullptr || w.n_device_rows <= 0 || w.format_bytes == 0) return std::nullopt;
    const gguf::TensorInfo& t = *w.tensor;
    auto* at = static_cast<std::byte*>(scratch);
    GpuProbe p;
    p.src[0] = view(const_cast<void*>(w.device_rows), t.type, memory.kind(), t.ne[0], w.n_device_rows);
    p.src[1] = view(at, w.act, memory.kind(), t.ne[0], 1);
    const uint64_t x_bytes = (view_bytes(p.src[1]) + 255) / 256 * 256;
    p.dst = view(at + x_bytes, DENSE_TYPE_F32, memory.kind(), w.n_device_rows, 1);
    const uint64_t y_bytes = (static_cast<uint64_t>(w.n_device_rows) * 4 + 255) / 256 * 256;
    p.call = gemv_call(p.src, p.dst);
    p.call.stream = memory.stream();
    // A format no device pack multiplies (a weight the step never reads as a GEMV) is left out.
    const packs::OpCandidate* candidate = find_gemv(packs, device, memory.kind(), p.call);
    if (candidate == nullptr) return std::nullopt;
    p.impl = candidate->impl;
    const uint64_t ws = p.impl.workspace_bytes != nullptr ? p.impl.workspace_bytes(p.impl.user, &p.call) : 0;
    if (x_bytes + y_bytes + ws > scratch_bytes) return std::nullopt;
    memory.zero(scratch, x_bytes);
    p.call.workspace = ws > 0 ? at + x_bytes + y_bytes : nullptr;
    p.call.workspace_bytes = ws;
    p.weight_bytes = view_bytes(p.src[0]);
    p.format_bytes = w.format_bytes;
    return p;
}

}  // namespace

SplitRates measure_split_rates(DeviceMemory& memory, CpuWorkers& workers, const packs::PackManager& packs,
                               size_t device, const ProbeWeight& host, const std::vector<ProbeWeight>& vram,
                               void* scratch, uint64_t scratch_bytes) {
    if (host.tensor == nullptr || host.n_device_rows >= host.tensor->ne[1])
        throw Error(ErrorKind::Internal, "bus_read_share auto: the probe weight has no host rows");
    SplitRates rates;
    rates.cpu_gbs = cpu_rate(workers, packs, host);
    if (!memory.can_time() || memory.kind() == DENSE_DEVICE_CPU) return rates;

    // The bus: a page-locked buffer (kept by `memory` until the session ends) into the ring. The
    // GPU: each format's GEMV over its weight's VRAM rows; activation, output and workspace in the
    // ring, which the bus copy also writes: the probes run one after another on one stream, and the
    // copied bytes are zeros like the activation.
    const uint64_t bus_bytes = std::min(kBusProbeBytes, scratch_bytes);
    void* pinned = memory.alloc_host_locked(bus_bytes);
    std::memset(pinned, 0, static_cast<size_t>(bus_bytes));
    std::vector<GpuProbe> gemvs;
    for (const ProbeWeight& w : vram)
        if (auto p = gpu_probe(memory, packs, device, w, scratch, scratch_bytes)) gemvs.push_back(*p);
    const auto bus_copy = [&] { memory.to_device(scratch, pinned, bus_bytes); };
    std::vector<std::function<void()>> all{bus_copy};
    for (const GpuProbe& p : gemvs) all.emplace_back([&p] { p.run(); });
    warm_up(memory, all);

    const double bus_ms = best_device_ms(memory, bus_copy);
    if (bus_ms > 0) rates.bus_gbs = static_cast<double>(bus_bytes) / (bus_ms * 1e6);
    double bytes = 0, ms_total = 0;
    for (const GpuProbe& p : gemvs) {
        const double ms = best_device_ms(memory, [&p] { p.run(); });
        if (ms <= 0) continue;
        const double gbs = static_cast<double>(p.weight_bytes) / (ms * 1e6);
        bytes += static_cast<double>(p.format_bytes);
        ms_total += static_cast<double>(p.format_bytes) / (gbs * 1e6);
    }
    if (ms_total > 0) rates.gpu_gbs = bytes / (ms_total * 1e6);
    return rates;
}

}  // namespace dense::exec
