#include "cuda/cuda_pack_support.hpp"

#include "common/test_paths.hpp"

#include <dense/sdk/pack.hpp>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

namespace dense::test::cuda {
namespace {

CudaPackLib open_pack(const std::string& name, const std::filesystem::path& path) {
    CudaPackLib lib;
    lib.name = name;
    lib.path = path;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* err = ::dlerror();
        lib.load_error = "dlopen(" + path.string() + ") failed: " + (err != nullptr ? err : "unknown error");
        return lib;
    }
    lib.score = reinterpret_cast<dense_pack_score_fn>(::dlsym(handle, "dense_pack_score"));
    lib.init = reinterpret_cast<dense_pack_init_fn>(::dlsym(handle, "dense_pack_init"));
    lib.release = reinterpret_cast<dense_pack_release_fn>(::dlsym(handle, "dense_pack_release"));
    if (lib.score == nullptr || lib.init == nullptr || lib.release == nullptr)
        lib.load_error = path.string() + " lacks one of the three dense_pack_* exports";
    return lib;  // the handle stays open for the life of the process
}

}  // namespace

const std::vector<CudaPackLib>& built_cuda_packs() {
    static const std::vector<CudaPackLib> packs = [] {
        std::vector<CudaPackLib> out;
        for (const std::string& name : cuda_pack_names()) {
            const auto path = build_pack_dir() / ("libdense-" + name + ".so");
            if (std::filesystem::exists(path)) out.push_back(open_pack(name, path));
        }
        return out;
    }();
    return packs;
}

std::string no_cuda_packs_reason() {
    return "no CUDA pack was built (neither libdense-cuda-sm90.so nor libdense-cuda-sm120.so in " +
           build_pack_dir().string() + "; configure with nvcc available and DENSE_WITH_CUDA=ON)";
}

dense_hw_desc cuda_hw_desc(uint32_t cc_major, uint32_t cc_minor, uint32_t driver_version) {
    auto hw = dense::sdk::make_struct<dense_hw_desc>();
    hw.device_kind = DENSE_DEVICE_CUDA;
    hw.device_index = 0;
    std::snprintf(hw.name, sizeof hw.name, "simulated cc %u.%u", cc_major, cc_minor);
    hw.cuda_cc_major = cc_major;
    hw.cuda_cc_minor = cc_minor;
    hw.cuda_driver_version = driver_version;
    hw.cuda_sm_count = 0;
    hw.total_memory_bytes = hw.free_memory_bytes = uint64_t{16} << 30;
    return hw;
}

// ---- RecordingHost ---------------------------------------------------------------------------

RecordingHost::RecordingHost() {
    api_ = dense::sdk::make_struct<dense_host_api>();
    api_.host = this;
    api_.log = log_cb;
    api_.register_type = register_type_cb;
    api_.register_op = register_op_cb;
    api_.find_type = find_type_cb;
}

void RecordingHost::log_cb(void* host, dense_log_level level, const char* message) noexcept {
    try {
        static_cast<RecordingHost*>(host)->logs_.push_back({level, message != nullptr ? message : "(null)"});
    } catch (...) {
    }
}

dense_status RecordingHost::register_type_cb(void*, const dense_type_traits*, dense_type_id*) noexcept {
    return DENSE_E_UNSUPPORTED;  // the CUDA packs register no formats of their own
}

dense_status RecordingHost::register_op_cb(void* host, const dense_op_impl* impl) noexcept {
    if (impl == nullptr || impl->hdr.abi_major != DENSE_ABI_MAJOR) return DENSE_E_ABI;
    try {
        const dense_op_impl copy = dense::sdk::read_struct(impl);
        static_cast<RecordingHost*>(host)->ops_.push_back({copy, copy.name != nullptr ? copy.name : ""});
        return DENSE_OK;
    } catch (...) {
        return DENSE_E_INTERNAL;
    }
}

dense_status RecordingHost::find_type_cb(void*, const char*, dense_type_id*) noexcept {
    return DENSE_E_UNSUPPORTED;
}

const dense_op_impl* RecordingHost::find_op(dense_op_kind kind, dense_type_id weight_type) const noexcept {
    for (const RegisteredOp& op : ops_)
        if (op.impl.op_kind == kind && op.impl.weight_type == weight_type && op.impl.device_kind == DENSE_DEVICE_CUDA)
            return &op.impl;
    return nullptr;
}

const dense_op_impl* RecordingHost::find_op(dense_op_kind kind, dense_type_id weight_type,
                                            dense_type_id act_type) const noexcept {
    for (const RegisteredOp& op : ops_)
        if (op.impl.op_kind == kind && op.impl.weight_type == weight_type && op.impl.act_type == act_type &&
            op.impl.device_kind == DENSE_DEVICE_CUDA)
            return &op.impl;
    return nullptr;
}

std::string RecordingHost::log_text() const {
    std::string out;
    for (const LogLine& l : logs_) out += "[" + std::to_string(l.level) + "] " + l.message + "\n";
    return out;
}

// ---- the driver probe -------------------------------------------------------------------------

namespace {

// Driver API signatures (CUresult = int, CUdevice = int), declared here so no CUDA header is needed.
using CuInit = int (*)(unsigned int);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceTotalMem = int (*)(size_t*, int);

constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

template <class Fn>
Fn symbol(void* lib, const char* name) {
    return reinterpret_cast<Fn>(::dlsym(lib, name));
}

GpuProbe run_probe() {
    GpuProbe p;
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char* err = ::dlerror();
        p.reason = std::string("no CUDA device: the NVIDIA driver library is not installed (dlopen libcuda.so.1: ") +
                   (err != nullptr ? err : "unknown error") + ")";
        return p;
    }
    const auto cu_init = symbol<CuInit>(lib, "cuInit");
    const auto cu_driver_version = symbol<CuDriverGetVersion>(lib, "cuDriverGetVersion");
    const auto cu_count = symbol<CuDeviceGetCount>(lib, "cuDeviceGetCount");
    const auto cu_get = symbol<CuDeviceGet>(lib, "cuDeviceGet");
    const auto cu_attr = symbol<CuDeviceGetAttribute>(lib, "cuDeviceGetAttribute");
    const auto cu_name = symbol<CuDeviceGetName>(lib, "cuDeviceGetName");
    const auto cu_total = symbol<CuDeviceTotalMem>(lib, "cuDeviceTotalMem_v2");
    if (!cu_init || !cu_driver_version || !cu_count || !cu_get || !cu_attr || !cu_name || !cu_total) {
        p.reason = "no CUDA device: libcuda.so.1 lacks a driver API entry point";
        return p;
    }
    if (const int rc = cu_init(0); rc != 0) {
        p.reason = "no CUDA device: cuInit failed with CUresult " + std::to_string(rc);
        return p;
    }
    if (cu_count(&p.device_count) != 0 || p.device_count < 1) {
        p.reason = "no CUDA device: the driver reports " + std::to_string(p.device_count) + " devices";
        return p;
    }
    int dev = 0;
    int major = 0, minor = 0, sms = 0, driver = 0;
    size_t total = 0;
    if (cu_get(&dev, 0) != 0 || cu_attr(&major, kAttrComputeCapabilityMajor, dev) != 0 ||
        cu_attr(&minor, kAttrComputeCapabilityMinor, dev) != 0 || cu_attr(&sms, kAttrMultiprocessorCount, dev) != 0 ||
        cu_driver_version(&driver) != 0 || cu_total(&total, dev) != 0) {
        p.reason = "no CUDA device: querying device 0 through the driver API failed";
        return p;
    }
    p.device0 = cuda_hw_desc(static_cast<uint32_t>(major), static_cast<uint32_t>(minor), static_cast<uint32_t>(driver));
    p.device0.cuda_sm_count = static_cast<uint32_t>(sms);
    p.device0.total_memory_bytes = p.device0.free_memory_bytes = total;
    if (cu_name(p.device0.name, static_cast<int>(sizeof p.device0.name) - 1, dev) != 0)
        std::strcpy(p.device0.name, "?");
    p.found = true;
    return p;
}

}  // namespace

const GpuProbe& probe_gpu() {
    static const GpuProbe probe = run_probe();
    return probe;
}

}  // namespace dense::test::cuda
