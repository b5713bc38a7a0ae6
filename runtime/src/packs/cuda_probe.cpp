// CUDA devices through the driver API, loaded at run time.
//
// WHY dlopen and hand-written prototypes: the core must build without the CUDA toolkit and run on a
// machine without an NVIDIA driver. Linking libcuda (or cudart) would make the dense-rt binary fail
// to start there; including cuda.h would make the build need the toolkit. The few entry points used
// here have been stable in the driver API for many years (the _v2 names are the 64-bit-size ones).
#include "packs/device_probe.hpp"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <mutex>
#include <string>

namespace dense::packs {
namespace {

using CUresult = int;
using CUdevice = int;
struct CUctx_st;
using CUcontext = CUctx_st*;

constexpr CUresult kCudaSuccess = 0;
// CUdevice_attribute values from the driver API.
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

// The driver entry points dense-rt uses, resolved once per process. The library stays loaded for
// the process lifetime (unloading the driver after cuInit is not supported by it).
struct Driver {
    bool ok = false;
    std::string problem;  // why there are no CUDA devices, when !ok
    CUresult (*cuInit)(unsigned) = nullptr;
    CUresult (*cuDriverGetVersion)(int*) = nullptr;
    CUresult (*cuDeviceGetCount)(int*) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
    CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
    CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
    CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
    CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
    CUresult (*cuMemGetInfo)(size_t*, size_t*) = nullptr;
    CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;  // optional

    std::string error_name(CUresult r) const {
        const char* s = nullptr;
        if (cuGetErrorName != nullptr && cuGetErrorName(r, &s) == kCudaSuccess && s != nullptr) return s;
        return "CUresult " + std::to_string(r);
    }
};

// dlsym's void* to a function pointer: memcpy, because a cast between object and function pointers
// is only conditionally supported in ISO C++.
template <class Fn>
bool resolve(void* lib, const char* name, Fn& out) {
    void* sym = dlsym(lib, name);
    if (sym == nullptr) return false;
    static_assert(sizeof(Fn) == sizeof(void*));
    std::memcpy(&out, &sym, sizeof out);
    return true;
}

Driver load_driver() {
    Driver d;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char* err = dlerror();
        d.problem = std::string("no CUDA driver (") + (err != nullptr ? err : "dlopen failed") + ")";
        return d;
    }
    const char* missing = nullptr;
    auto need = [&](const char* name, auto& fn) {
        if (missing == nullptr && !resolve(lib, name, fn)) missing = name;
    };
    need("cuInit", d.cuInit);
    need("cuDriverGetVersion", d.cuDriverGetVersion);
    need("cuDeviceGetCount", d.cuDeviceGetCount);
    need("cuDeviceGet", d.cuDeviceGet);
    need("cuDeviceGetName", d.cuDeviceGetName);
    need("cuDeviceGetAttribute", d.cuDeviceGetAttribute);
    need("cuDeviceTotalMem_v2", d.cuDeviceTotalMem);
    need("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain);
    if (!resolve(lib, "cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease))
        need("cuDevicePrimaryCtxRelease", d.cuDevicePrimaryCtxRelease);
    need("cuCtxPushCurrent_v2", d.cuCtxPushCurrent);
    need("cuCtxPopCurrent_v2", d.cuCtxPopCurrent);
    need("cuMemGetInfo_v2", d.cuMemGetInfo);
    resolve(lib, "cuGetErrorName", d.cuGetErrorName);
    if (missing != nullptr) {
        d.problem = std::string("libcuda.so.1 lacks ") + missing + " (driver too old)";
        return d;
    }
    if (const CUresult r = d.cuInit(0); r != kCudaSuccess) {
        d.problem = "CUDA driver present but cuInit failed: " + d.error_name(r);
        return d;
    }
    d.ok = true;
    return d;
}

const Driver& driver() {
    static const Driver d = load_driver();
    return d;
}

// Free memory needs a context. The primary context is the one the CUDA runtime (and so the packs)
// will use anyway; retaining and releasing it here leaves it as we found it.
bool read_free_memory(const Driver& drv, CUdevice dev, uint64_t& free_bytes, std::string& problem) {
    CUcontext ctx = nullptr;
    CUresult r = drv.cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r != kCudaSuccess) {
        problem = "cuDevicePrimaryCtxRetain: " + drv.error_name(r);
        return false;
    }
    bool ok = false;
    r = drv.cuCtxPushCurrent(ctx);
    if (r == kCudaSuccess) {
        size_t free_b = 0, total_b = 0;
        r = drv.cuMemGetInfo(&free_b, &total_b);
        if (r == kCudaSuccess) {
            free_bytes = free_b;
            ok = true;
        } else {
            problem = "cuMemGetInfo: " + drv.error_name(r);
        }
        CUcontext popped = nullptr;
        drv.cuCtxPopCurrent(&popped);
    } else {
        problem = "cuCtxPushCurrent: " + drv.error_name(r);
    }
    drv.cuDevicePrimaryCtxRelease(dev);
    return ok;
}

}  // namespace

std::vector<DeviceInfo> probe_cuda_devices() {
    std::vector<DeviceInfo> out;
    const Driver& drv = driver();
    if (!drv.ok) {
        // Both are normal on a CPU-only machine: not a warning.
        static std::once_flag logged;
        std::call_once(logged, [&] { spdlog::info("no CUDA devices: {}", drv.problem); });
        return out;
    }
    int driver_version = 0;
    drv.cuDriverGetVersion(&driver_version);
    int count = 0;
    if (const CUresult r = drv.cuDeviceGetCount(&count); r != kCudaSuccess) {
        spdlog::info("no CUDA devices: cuDeviceGetCount failed: {}", drv.error_name(r));
        return out;
    }
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        CUdevice dev = 0;
        if (const CUresult r = drv.cuDeviceGet(&dev, ordinal); r != kCudaSuccess) {
            spdlog::warn("cuda:{} skipped: cuDeviceGet failed: {}", ordinal, drv.error_name(r));
            continue;
        }
        DeviceInfo d;
        d.hw = make_hw_desc(DENSE_DEVICE_CUDA, static_cast<uint32_t>(ordinal));
        if (drv.cuDeviceGetName(d.hw.name, static_cast<int>(sizeof d.hw.name - 1), dev) != kCudaSuccess)
            std::strncpy(d.hw.name, "unknown CUDA device", sizeof d.hw.name - 1);
        d.hw.name[sizeof d.hw.name - 1] = '\0';
        int cc_major = 0, cc_minor = 0, sms = 0;
        if (drv.cuDeviceGetAttribute(&cc_major, kAttrComputeCapabilityMajor, dev) != kCudaSuccess ||
            drv.cuDeviceGetAttribute(&cc_minor, kAttrComputeCapabilityMinor, dev) != kCudaSuccess) {
            spdlog::warn("cuda:{} ({}) skipped: cannot read its compute capability", ordinal, d.name());
            continue;
        }
        drv.cuDeviceGetAttribute(&sms, kAttrMultiprocessorCount, dev);
        size_t total = 0;
        drv.cuDeviceTotalMem(&total, dev);
        d.hw.cuda_cc_major = static_cast<uint32_t>(cc_major);
        d.hw.cuda_cc_minor = static_cast<uint32_t>(cc_minor);
        d.hw.cuda_sm_count = static_cast<uint32_t>(sms > 0 ? sms : 0);
        d.hw.cuda_driver_version = static_cast<uint32_t>(driver_version > 0 ? driver_version : 0);
        d.hw.total_memory_bytes = total;
        uint64_t free_bytes = 0;
        std::string problem;
        if (read_free_memory(drv, dev, free_bytes, problem)) {
            d.hw.free_memory_bytes = free_bytes;
        } else {
            spdlog::warn("cuda:{} ({}): cannot read free memory ({}); reporting 0", ordinal, d.name(), problem);
        }
        spdlog::debug("found cuda:{}: {} cc {}.{}, {} SMs", ordinal, d.name(), cc_major, cc_minor, sms);
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace dense::packs
