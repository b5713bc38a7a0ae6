#include "device_api.hpp"

#include "cuda_status.hpp"
#include "kernels/launch_chain_break.hpp"
#include "pack_state.hpp"

#include <cuda.h>  // the driver API's types only: its functions come through cudaGetDriverEntryPointByVersion
#include <cuda_runtime_api.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace dense::cuda {
namespace {

const PackState& state_of(void* user) noexcept {
    return *static_cast<const PackState*>(user);
}

// A malformed device-api call: one log line (when there is a pack to log through).
dense_status invalid(void* user, const char* message) noexcept {
    if (user != nullptr) {
        const PackState& st = state_of(user);
        (void)dense::sdk::guarded(st.host, "device api", [&] {
            st.host.error(st.name + ": " + message);
            return DENSE_OK;
        });
    }
    return DENSE_E_INVALID_ARGUMENT;
}

// Runs body() with the device made current; exceptions become DENSE_E_INTERNAL with a log line.
template <class F>
dense_status on_device(void* user, uint32_t device_index, const char* what, F&& body) noexcept {
    if (user == nullptr) return DENSE_E_INVALID_ARGUMENT;
    const PackState& st = state_of(user);
    return dense::sdk::guarded(st.host, what, [&]() -> dense_status {
        const dense_status s = use_device(st.host, st.name, device_index);
        if (s != DENSE_OK) return s;
        return body(st);
    });
}

// Every block this pack allocates for the runtime (device, page-locked, mapped) has kReadSlack bytes
// past its end that nothing is placed in: the GEMV units of the 2-byte-aligned formats (Q8_0, Q6_K,
// Q3_K, IQ4_NL, ...) read their fields from global memory as whole aligned 32-bit words joined by
// funnel shifts (gemv_common.cuh, ld_words), so the last field of a matrix that ends a buffer loads
// up to 4 bytes past it. Found by review in session 25 with a guard page after the matrix on the
// CPU (the streamed kernels have read that way since session 24). 256 keeps the next block aligned
// the way cudaMalloc would. Not billed by the runtime's plan: 256 bytes per allocation, inside its
// safety reserve.
constexpr uint64_t kReadSlack = 256;

bool slack_fits(uint64_t bytes) noexcept { return bytes <= std::numeric_limits<size_t>::max() - kReadSlack; }

dense_status alloc_cb(void* user, uint32_t device_index, uint64_t bytes, void** out_ptr) noexcept {
    if (out_ptr == nullptr) return invalid(user, "alloc: out_ptr is NULL");
    *out_ptr = nullptr;
    if (!slack_fits(bytes)) return invalid(user, "alloc: more bytes than any device holds");
    return on_device(user, device_index, "alloc", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaMalloc(" + std::to_string(bytes) + " bytes)",
                           cudaMalloc(out_ptr, static_cast<size_t>(bytes + kReadSlack)));
    });
}

void free_cb(void* user, uint32_t device_index, void* ptr) noexcept {
    if (ptr == nullptr) return;
    (void)on_device(user, device_index, "free",
                    [&](const PackState& st) { return report_cuda(st.host, st.name, "cudaFree", cudaFree(ptr)); });
}

dense_status copy(void* user, uint32_t device_index, void* dst, const void* src, uint64_t bytes, void* stream,
                  cudaMemcpyKind kind, const char* what) noexcept {
    if (bytes == 0) return DENSE_OK;
    if (dst == nullptr || src == nullptr) return invalid(user, "copy: dst or src is NULL");
    return on_device(user, device_index, what, [&](const PackState& st) {
        const size_t n = static_cast<size_t>(bytes);
        const cudaError_t err = stream == nullptr
                                    ? cudaMemcpy(dst, src, n, kind)
                                    : cudaMemcpyAsync(dst, src, n, kind, static_cast<cudaStream_t>(stream));
        if (stream != nullptr) break_launch_chain(stream);
        return report_cuda(st.host, st.name, std::string(what) + " of " + std::to_string(bytes) + " bytes", err);
    });
}

dense_status copy_to_device_cb(void* user, uint32_t device_index, void* dst, const void* src, uint64_t bytes,
                               void* stream) noexcept {
    return copy(user, device_index, dst, src, bytes, stream, cudaMemcpyHostToDevice, "copy to device");
}

dense_status copy_to_host_cb(void* user, uint32_t device_index, void* dst, const void* src, uint64_t bytes,
                             void* stream) noexcept {
    return copy(user, device_index, dst, src, bytes, stream, cudaMemcpyDeviceToHost, "copy to host");
}

dense_status stream_create_cb(void* user, uint32_t device_index, void** out_stream) noexcept {
    if (out_stream == nullptr) return invalid(user, "stream_create: out_stream is NULL");
    *out_stream = nullptr;
    return on_device(user, device_index, "stream_create", [&](const PackState& st) {
        cudaStream_t s = nullptr;
        const dense_status status = report_cuda(st.host, st.name, "cudaStreamCreateWithFlags",
                                                cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        if (status == DENSE_OK) *out_stream = s;
        return status;
    });
}

void stream_destroy_cb(void* user, uint32_t device_index, void* stream) noexcept {
    if (stream == nullptr) return;
    (void)on_device(user, device_index, "stream_destroy", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaStreamDestroy", cudaStreamDestroy(static_cast<cudaStream_t>(stream)));
    });
}

dense_status stream_sync_cb(void* user, uint32_t device_index, void* stream) noexcept {
    return on_device(user, device_index, "stream_sync", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaStreamSynchronize",
                           cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
    });
}

dense_status mem_info_cb(void* user, uint32_t device_index, uint64_t* free_bytes, uint64_t* total_bytes) noexcept {
    if (free_bytes == nullptr || total_bytes == nullptr) return invalid(user, "mem_info: output pointer is NULL");
    *free_bytes = 0;
    *total_bytes = 0;
    return on_device(user, device_index, "mem_info", [&](const PackState& st) {
        size_t f = 0;
        size_t t = 0;
        const dense_status status = report_cuda(st.host, st.name, "cudaMemGetInfo", cudaMemGetInfo(&f, &t));
        if (status == DENSE_OK) {
            *free_bytes = f;
            *total_bytes = t;
        }
        return status;
    });
}

dense_status copy_on_device_cb(void* user, uint32_t device_index, void* dst, const void* src, uint64_t bytes,
                               void* stream) noexcept {
    return copy(user, device_index, dst, src, bytes, stream, cudaMemcpyDeviceToDevice, "copy on device");
}

dense_status memset_async_cb(void* user, uint32_t device_index, void* dst, uint32_t value, uint64_t bytes,
                             void* stream) noexcept {
    if (bytes == 0) return DENSE_OK;
    if (dst == nullptr) return invalid(user, "memset: dst is NULL");
    if (value > 0xFFu) return invalid(user, "memset: value is not a byte");
    return on_device(user, device_index, "memset", [&](const PackState& st) {
        break_launch_chain(stream);
        return report_cuda(st.host, st.name, "cudaMemsetAsync(" + std::to_string(bytes) + " bytes)",
                           cudaMemsetAsync(dst, static_cast<int>(value), static_cast<size_t>(bytes),
                                           static_cast<cudaStream_t>(stream)));
    });
}

// Capture in thread-local mode: other threads of the process (a loader, a logger) may keep making
// CUDA calls while this thread records its stream.
dense_status capture_begin_cb(void* user, uint32_t device_index, void* stream) noexcept {
    if (stream == nullptr) return invalid(user, "capture_begin: the legacy default stream cannot be captured");
    return on_device(user, device_index, "capture_begin", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaStreamBeginCapture",
                           cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal));
    });
}

dense_status capture_end_cb(void* user, uint32_t device_index, void* stream, void** out_graph) noexcept {
    if (out_graph == nullptr) return invalid(user, "capture_end: out_graph is NULL");
    *out_graph = nullptr;
    return on_device(user, device_index, "capture_end", [&](const PackState& st) {
        cudaGraph_t graph = nullptr;
        dense_status s = report_cuda(st.host, st.name, "cudaStreamEndCapture",
                                     cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph));
        if (s != DENSE_OK) return s;
        cudaGraphExec_t exec = nullptr;
        s = report_cuda(st.host, st.name, "cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
        (void)cudaGraphDestroy(graph);  // the executable graph keeps what it needs
        if (s == DENSE_OK) *out_graph = exec;
        return s;
    });
}

dense_status graph_launch_cb(void* user, uint32_t device_index, void* graph, void* stream) noexcept {
    if (graph == nullptr) return invalid(user, "graph_launch: graph is NULL");
    return on_device(user, device_index, "graph_launch", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaGraphLaunch",
                           cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), static_cast<cudaStream_t>(stream)));
    });
}

void graph_destroy_cb(void* user, uint32_t device_index, void* graph) noexcept {
    if (graph == nullptr) return;
    (void)on_device(user, device_index, "graph_destroy", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaGraphExecDestroy",
                           cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph)));
    });
}

dense_status host_alloc_cb(void* user, uint32_t device_index, uint64_t bytes, void** out_ptr) noexcept {
    if (out_ptr == nullptr) return invalid(user, "host_alloc: out_ptr is NULL");
    *out_ptr = nullptr;
    if (!slack_fits(bytes)) return invalid(user, "host_alloc: more bytes than any host holds");
    return on_device(user, device_index, "host_alloc", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaMallocHost(" + std::to_string(bytes) + " bytes)",
                           cudaMallocHost(out_ptr, static_cast<size_t>(bytes + kReadSlack)));
    });
}

void host_free_cb(void* user, uint32_t device_index, void* ptr) noexcept {
    if (ptr == nullptr) return;
    (void)on_device(user, device_index, "host_free",
                    [&](const PackState& st) { return report_cuda(st.host, st.name, "cudaFreeHost", cudaFreeHost(ptr)); });
}

// A set of timing marks: CUDA events with timing on (they are the profile's only job).
struct Marks {
    std::vector<cudaEvent_t> events;
};

void destroy_events(Marks& m) noexcept {
    for (cudaEvent_t e : m.events)
        if (e != nullptr) (void)cudaEventDestroy(e);
    m.events.clear();
}

dense_status marks_create_cb(void* user, uint32_t device_index, uint32_t count, void** out_marks) noexcept {
    if (out_marks == nullptr) return invalid(user, "marks_create: out_marks is NULL");
    *out_marks = nullptr;
    if (count == 0) return invalid(user, "marks_create: count is 0");
    return on_device(user, device_index, "marks_create", [&](const PackState& st) -> dense_status {
        auto marks = std::make_unique<Marks>();
        marks->events.resize(count, nullptr);
        for (auto& e : marks->events) {
            const dense_status s = report_cuda(st.host, st.name, "cudaEventCreate", cudaEventCreate(&e));
            if (s != DENSE_OK) {
                destroy_events(*marks);
                return s;
            }
        }
        *out_marks = marks.release();
        return DENSE_OK;
    });
}

dense_status mark_record_cb(void* user, uint32_t device_index, void* marks, uint32_t index, void* stream) noexcept {
    auto* m = static_cast<Marks*>(marks);
    if (m == nullptr || index >= m->events.size()) return invalid(user, "mark_record: no such mark");
    return on_device(user, device_index, "mark_record", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaEventRecord",
                           cudaEventRecord(m->events[index], static_cast<cudaStream_t>(stream)));
    });
}

dense_status marks_elapsed_ms_cb(void* user, uint32_t device_index, void* marks, uint32_t from, uint32_t to,
                                 float* out_ms) noexcept {
    auto* m = static_cast<Marks*>(marks);
    if (m == nullptr || out_ms == nullptr || from >= m->events.size() || to >= m->events.size())
        return invalid(user, "marks_elapsed_ms: no such mark or out_ms is NULL");
    *out_ms = 0.0f;
    return on_device(user, device_index, "marks_elapsed_ms", [&](const PackState& st) {
        dense_status s = report_cuda(st.host, st.name, "cudaEventSynchronize", cudaEventSynchronize(m->events[to]));
        if (s != DENSE_OK) return s;
        return report_cuda(st.host, st.name, "cudaEventElapsedTime",
                           cudaEventElapsedTime(out_ms, m->events[from], m->events[to]));
    });
}

void marks_destroy_cb(void* user, uint32_t device_index, void* marks) noexcept {
    auto* m = static_cast<Marks*>(marks);
    if (m == nullptr) return;
    (void)on_device(user, device_index, "marks_destroy", [&](const PackState&) -> dense_status {
        destroy_events(*m);
        return DENSE_OK;
    });
    delete m;
}

dense_status launch_host_fn_cb(void* user, uint32_t device_index, void (*fn)(void*), void* arg, void* stream) noexcept {
    if (fn == nullptr) return invalid(user, "launch_host_fn: fn is NULL");
    return on_device(user, device_index, "launch_host_fn", [&](const PackState& st) {
        const cudaError_t err = cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), fn, arg);
        break_launch_chain(stream);
        return report_cuda(st.host, st.name, "cudaLaunchHostFunc", err);
    });
}

dense_status host_alloc_mapped_cb(void* user, uint32_t device_index, uint64_t bytes, void** out_host_ptr,
                                  const void** out_device_ptr) noexcept {
    if (out_host_ptr == nullptr || out_device_ptr == nullptr) return invalid(user, "host_alloc_mapped: NULL out pointer");
    *out_host_ptr = nullptr;
    *out_device_ptr = nullptr;
    if (!slack_fits(bytes)) return invalid(user, "host_alloc_mapped: more bytes than any host holds");
    return on_device(user, device_index, "host_alloc_mapped", [&](const PackState& st) -> dense_status {
        void* host = nullptr;
        dense_status s = report_cuda(st.host, st.name, "cudaHostAlloc(" + std::to_string(bytes) + " bytes, mapped)",
                                     cudaHostAlloc(&host, static_cast<size_t>(bytes + kReadSlack), cudaHostAllocMapped | cudaHostAllocPortable));
        if (s != DENSE_OK) return s;
        void* device = nullptr;
        s = report_cuda(st.host, st.name, "cudaHostGetDevicePointer", cudaHostGetDevicePointer(&device, host, 0));
        if (s != DENSE_OK) {
            (void)cudaFreeHost(host);
            return s;
        }
        *out_host_ptr = host;
        *out_device_ptr = device;
        return DENSE_OK;
    });
}

dense_status event_create_cb(void* user, uint32_t device_index, void** out_event) noexcept {
    if (out_event == nullptr) return invalid(user, "event_create: out_event is NULL");
    *out_event = nullptr;
    return on_device(user, device_index, "event_create", [&](const PackState& st) {
        cudaEvent_t e = nullptr;
        const dense_status s = report_cuda(st.host, st.name, "cudaEventCreateWithFlags",
                                           cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        if (s == DENSE_OK) *out_event = e;
        return s;
    });
}

void event_destroy_cb(void* user, uint32_t device_index, void* event) noexcept {
    if (event == nullptr) return;
    (void)on_device(user, device_index, "event_destroy", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaEventDestroy", cudaEventDestroy(static_cast<cudaEvent_t>(event)));
    });
}

dense_status event_record_cb(void* user, uint32_t device_index, void* event, void* stream) noexcept {
    if (event == nullptr) return invalid(user, "event_record: event is NULL");
    return on_device(user, device_index, "event_record", [&](const PackState& st) {
        return report_cuda(st.host, st.name, "cudaEventRecord",
                           cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
    });
}

// The next kernel on `stream` must wait for the event's work too, not only for the kernel before
// it: so the wait breaks the launch chain (launch_chain_break.hpp).
dense_status stream_wait_event_cb(void* user, uint32_t device_index, void* stream, void* event) noexcept {
    if (event == nullptr) return invalid(user, "stream_wait_event: event is NULL");
    return on_device(user, device_index, "stream_wait_event", [&](const PackState& st) {
        const cudaError_t err =
            cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0);
        break_launch_chain(stream);
        return report_cuda(st.host, st.name, "cudaStreamWaitEvent", err);
    });
}

// The driver's stream memory operations (not in the runtime API), looked up once; null where the
// driver lacks them. Through the runtime's entry-point query, so the pack links no libcuda.
using WriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
struct StreamMemOps {
    WriteValue32 write = nullptr;
    WaitValue32 wait = nullptr;
};
const StreamMemOps& stream_mem_ops() {
    static const StreamMemOps ops = [] {
        StreamMemOps o;
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
            found == cudaDriverEntryPointSuccess)
            o.write = reinterpret_cast<WriteValue32>(fn);
        if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &found) == cudaSuccess &&
            found == cudaDriverEntryPointSuccess)
            o.wait = reinterpret_cast<WaitValue32>(fn);
        return o;
    }();
    return ops;
}

dense_status driver_result(const PackState& st, const char* what, CUresult r) {
    if (r == CUDA_SUCCESS) return DENSE_OK;
    st.host.error(st.name + ": " + what + " failed (CUresult " + std::to_string(static_cast<int>(r)) + ")");
    return DENSE_E_DEVICE;
}

// Neither op is a kernel: the next kernel on the stream must not start early under a chained
// launch, so both break the chain (launch_chain_break.hpp), as stream_wait_event does.
dense_status stream_write_u32_cb(void* user, uint32_t device_index, void* stream, const void* device_word,
                                 uint32_t value) noexcept {
    if (device_word == nullptr || reinterpret_cast<uintptr_t>(device_word) % 4 != 0)
        return invalid(user, "stream_write_u32: the word is NULL or not 4-byte aligned");
    return on_device(user, device_index, "stream_write_u32", [&](const PackState& st) {
        if (stream_mem_ops().write == nullptr) return driver_result(st, "cuStreamWriteValue32 (not in this driver)", CUDA_ERROR_NOT_SUPPORTED);
        const CUresult r = stream_mem_ops().write(static_cast<CUstream>(stream),
                                                  static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(device_word)), value,
                                                  CU_STREAM_WRITE_VALUE_DEFAULT);
        break_launch_chain(stream);
        return driver_result(st, "cuStreamWriteValue32", r);
    });
}

dense_status stream_wait_u32_cb(void* user, uint32_t device_index, void* stream, const void* device_word,
                                uint32_t value) noexcept {
    if (device_word == nullptr || reinterpret_cast<uintptr_t>(device_word) % 4 != 0)
        return invalid(user, "stream_wait_u32: the word is NULL or not 4-byte aligned");
    return on_device(user, device_index, "stream_wait_u32", [&](const PackState& st) {
        if (stream_mem_ops().wait == nullptr) return driver_result(st, "cuStreamWaitValue32 (not in this driver)", CUDA_ERROR_NOT_SUPPORTED);
        const CUresult r = stream_mem_ops().wait(static_cast<CUstream>(stream),
                                                 static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(device_word)), value,
                                                 CU_STREAM_WAIT_VALUE_EQ);
        break_launch_chain(stream);
        return driver_result(st, "cuStreamWaitValue32", r);
    });
}

}  // namespace

dense_device_api make_device_api() noexcept {
    auto api = dense::sdk::make_struct<dense_device_api>();
    api.alloc = alloc_cb;
    api.free = free_cb;
    api.copy_to_device = copy_to_device_cb;
    api.copy_to_host = copy_to_host_cb;
    api.stream_create = stream_create_cb;
    api.stream_destroy = stream_destroy_cb;
    api.stream_sync = stream_sync_cb;
    api.mem_info = mem_info_cb;
    api.copy_on_device = copy_on_device_cb;
    api.memset_async = memset_async_cb;
    api.capture_begin = capture_begin_cb;
    api.capture_end = capture_end_cb;
    api.graph_launch = graph_launch_cb;
    api.graph_destroy = graph_destroy_cb;
    api.host_alloc = host_alloc_cb;
    api.host_free = host_free_cb;
    api.marks_create = marks_create_cb;
    api.mark_record = mark_record_cb;
    api.marks_elapsed_ms = marks_elapsed_ms_cb;
    api.marks_destroy = marks_destroy_cb;
    api.launch_host_fn = launch_host_fn_cb;
    api.host_alloc_mapped = host_alloc_mapped_cb;
    api.event_create = event_create_cb;
    api.event_destroy = event_destroy_cb;
    api.event_record = event_record_cb;
    api.stream_wait_event = stream_wait_event_cb;
    api.stream_write_u32 = stream_write_u32_cb;
    api.stream_wait_u32 = stream_wait_u32_cb;
    return api;
}

}  // namespace dense::cuda
