#include "exec/split_rates.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "exec/cpu_relax.hpp"
#include "exec/host_nodes.hpp"
#include "plan/row_split.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <vector>

namespace dense::exec {

namespace {

constexpr uint64_t kBusProbeBytes = uint64_t{32} << 20;
constexpr uint64_t kCpuProbeBytes = uint64_t{64} << 20;
constexpr int kRepeats = 3;

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

    double best_ms = 0;
    for (int r = 0; r < 2; ++r) {
        probe.finished.store(0);
        const auto from = std::chrono::steady_clock::now();
        workers.submit(&CpuProbe::run, &probe, probe.chunks.size());
        while (probe.finished.load(std::memory_order_acquire) < probe.chunks.size()) cpu_relax();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
        if (probe.failed.load() != DENSE_OK) check(static_cast<dense_status>(probe.failed.load()), "the CPU GEMV probe");
        best_ms = r == 0 ? ms : std::min(best_ms, ms);
    }
    return best_ms > 0 ? static_cast<double>(row) * static_cast<double>(rows) / (best_ms * 1e6) : 0;
}

// Best of kRepeats of `enqueue` on the device's stream (after one untimed run), in ms.
template <class F>
double best_device_ms(DeviceMemory& memory, F&& enqueue) {
    void* marks = memory.create_marks(2 * kRepeats);
    double best = 0;
    try {
        enqueue();
        for (int r = 0; r < kRepeats; ++r) {
            memory.record_mark(marks, static_cast<uint32_t>(2 * r));
            enqueue();
            memory.record_mark(marks, static_cast<uint32_t>(2 * r + 1));
        }
        memory.sync();
        for (int r = 0; r < kRepeats; ++r) {
            const double ms = memory.elapsed_ms(marks, static_cast<uint32_t>(2 * r), static_cast<uint32_t>(2 * r + 1));
            best = r == 0 ? ms : std::min(best, ms);
        }
    } catch (...) {
        memory.destroy_marks(marks);
        throw;
    }
    memory.destroy_marks(marks);
    return best;
}

// GB/s of the device's GEMV over w's VRAM rows (0 when it cannot be measured: no device pack has the
// GEMV, or the scratch is too small).
double gpu_rate(DeviceMemory& memory, const packs::PackManager& packs, size_t device, const ProbeWeight& w,
                void* scratch, uint64_t scratch_bytes) {
    if (w.tensor == nullptr || w.n_device_rows <= 0) return 0;
    const gguf::TensorInfo& t = *w.tensor;
    auto* at = static_cast<std::byte*>(scratch);
    dense_tensor_view src[2] = {view(const_cast<void*>(w.device_rows), t.type, memory.kind(), t.ne[0], w.n_device_rows),
                                view(at, w.act, memory.kind(), t.ne[0], 1)};
    const uint64_t x_bytes = (view_bytes(src[1]) + 255) / 256 * 256;
    const dense_tensor_view dst = view(at + x_bytes, DENSE_TYPE_F32, memory.kind(), w.n_device_rows, 1);
    const uint64_t y_bytes = (static_cast<uint64_t>(w.n_device_rows) * 4 + 255) / 256 * 256;
    dense_op_call call = gemv_call(src, dst);
    call.stream = memory.stream();
    // A format no device pack multiplies (a weight the step never reads as a GEMV) is left out.
    const packs::OpCandidate* candidate = find_gemv(packs, device, memory.kind(), call);
    if (candidate == nullptr) return 0;
    const dense_op_impl impl = candidate->impl;
    const uint64_t ws = impl.workspace_bytes != nullptr ? impl.workspace_bytes(impl.user, &call) : 0;
    if (x_bytes + y_bytes + ws > scratch_bytes) return 0;
    memory.zero(scratch, x_bytes);
    call.workspace = ws > 0 ? at + x_bytes + y_bytes : nullptr;
    call.workspace_bytes = ws;
    const double ms = best_device_ms(memory, [&] { check(impl.run(impl.user, &call), "the GPU GEMV probe"); });
    return ms > 0 ? static_cast<double>(view_bytes(src[0])) / (ms * 1e6) : 0;
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

    // The bus: a page-locked buffer (kept by `memory` until the session ends) into the ring.
    const uint64_t bus_bytes = std::min(kBusProbeBytes, scratch_bytes);
    void* pinned = memory.alloc_host_locked(bus_bytes);
    std::memset(pinned, 0, static_cast<size_t>(bus_bytes));
    const double bus_ms = best_device_ms(memory, [&] { memory.to_device(scratch, pinned, bus_bytes); });
    if (bus_ms > 0) rates.bus_gbs = static_cast<double>(bus_bytes) / (bus_ms * 1e6);

    // The GPU: each format's GEMV over its weight's VRAM rows; activation, output and workspace in
    // the ring.
    double bytes = 0, ms_total = 0;
    for (const ProbeWeight& w : vram) {
        const double gbs = gpu_rate(memory, packs, device, w, scratch, scratch_bytes);
        if (gbs <= 0 || w.format_bytes == 0) continue;
        bytes += static_cast<double>(w.format_bytes);
        ms_total += static_cast<double>(w.format_bytes) / (gbs * 1e6);
    }
    if (ms_total > 0) rates.gpu_gbs = bytes / (ms_total * 1e6);
    return rates;
}

}  // namespace dense::exec
