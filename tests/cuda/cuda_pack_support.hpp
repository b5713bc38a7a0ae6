// Test-side access to the CUDA packs through their C ABI only (dlopen + the three exports), so the
// tests compile with a plain C++ compiler and run in CI without the CUDA toolkit:
//   - the packs built in this tree (libdense-cuda-sm90.so / -sm120.so under build_pack_dir()),
//   - a recording dense_host_api (log lines and registered op impls),
//   - a probe of the real GPU through the driver API (dlopen("libcuda.so.1"), no link dependency),
//   - hand-made dense_hw_desc values for scoring.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dense::test::cuda {

// One pack library, opened with RTLD_NOW | RTLD_LOCAL and never closed (packs are not unloaded).
struct CudaPackLib {
    std::string name;  // "cuda-sm90"
    std::filesystem::path path;
    std::string load_error;  // non-empty: the file exists but could not be opened or lacks an export
    dense_pack_score_fn score = nullptr;
    dense_pack_init_fn init = nullptr;
    dense_pack_release_fn release = nullptr;

    bool usable() const noexcept { return load_error.empty(); }
};

// The CUDA pack names this tree can build.
inline const std::vector<std::string>& cuda_pack_names() {
    static const std::vector<std::string> names = {"cuda-sm90", "cuda-sm120"};
    return names;
}

// The packs that exist under build_pack_dir(), opened once per process (empty when the tree was
// built without CUDA).
const std::vector<CudaPackLib>& built_cuda_packs();

// Why built_cuda_packs() is empty (for GTEST_SKIP).
std::string no_cuda_packs_reason();

// A CUDA device description as the host would probe it.
dense_hw_desc cuda_hw_desc(uint32_t cc_major, uint32_t cc_minor, uint32_t driver_version = 13000);

// The host side of the ABI for tests: collects log lines and registered ops.
class RecordingHost {
public:
    struct LogLine {
        dense_log_level level;
        std::string message;
    };
    struct RegisteredOp {
        dense_op_impl impl;
        std::string name;  // copied: impl.name is pack-owned
    };

    RecordingHost();
    RecordingHost(const RecordingHost&) = delete;
    RecordingHost& operator=(const RecordingHost&) = delete;

    const dense_host_api* api() const noexcept { return &api_; }
    const std::vector<LogLine>& logs() const noexcept { return logs_; }
    const std::vector<RegisteredOp>& ops() const noexcept { return ops_; }
    // The registered impl for (kind, weight type) on CUDA, or nullptr.
    const dense_op_impl* find_op(dense_op_kind kind, dense_type_id weight_type) const noexcept;
    // The registered impl for (kind, weight type, activation type) on CUDA, or nullptr (ops keyed by
    // their activation too: GEMV_Q, QUANTIZE_ACT).
    const dense_op_impl* find_op(dense_op_kind kind, dense_type_id weight_type, dense_type_id act_type) const noexcept;
    void clear_logs() { logs_.clear(); }
    // All log lines joined, for failure messages.
    std::string log_text() const;

private:
    static void log_cb(void* host, dense_log_level level, const char* message) noexcept;
    static dense_status register_type_cb(void* host, const dense_type_traits* traits, dense_type_id* out_id) noexcept;
    static dense_status register_op_cb(void* host, const dense_op_impl* impl) noexcept;
    static dense_status find_type_cb(void* host, const char* name, dense_type_id* out_id) noexcept;

    dense_host_api api_{};
    std::vector<LogLine> logs_;
    std::vector<RegisteredOp> ops_;
};

// What the CUDA driver reports about this machine, asked once per process.
struct GpuProbe {
    bool found = false;
    std::string reason;  // why not found: "no CUDA device: ..."
    int device_count = 0;
    dense_hw_desc device0{};  // filled like the runtime's probe: cc, driver version, SMs, memory, name
};
const GpuProbe& probe_gpu();

}  // namespace dense::test::cuda
