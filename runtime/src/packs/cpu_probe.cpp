// The CPU description packs are scored against: name, ISA features the OS lets us use, cores, memory.
#include "packs/device_probe.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define DENSE_PROBE_X86 1
#endif

namespace dense::packs {
namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

// First "model name" line of /proc/cpuinfo (x86); "" where there is none.
std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
    return {};
}

#ifdef DENSE_PROBE_X86
constexpr bool has_bit(unsigned reg, unsigned bit) {
    return ((reg >> bit) & 1u) != 0;
}

// XCR0: which register states the OS saves on context switch. A CPU may support AVX/AVX-512 while
// the OS (or hypervisor) has them disabled; using them then faults, so both must agree.
uint64_t read_xcr0() {
    uint32_t eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<uint64_t>(edx) << 32) | eax;
}

uint64_t cpu_feature_bits() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0) return 0;
    uint64_t f = 0;
    if (has_bit(c, 20)) f |= DENSE_CPU_SSE42;
    const uint64_t xcr0 = has_bit(c, 27) ? read_xcr0() : 0;    // OSXSAVE
    const bool os_avx = (xcr0 & 0x6u) == 0x6u;                 // XMM + YMM state
    const bool os_avx512 = os_avx && (xcr0 & 0xE0u) == 0xE0u;  // opmask + ZMM state
    if (os_avx) {
        if (has_bit(c, 28)) f |= DENSE_CPU_AVX;
        if (has_bit(c, 12)) f |= DENSE_CPU_FMA;
        if (has_bit(c, 29)) f |= DENSE_CPU_F16C;
    }
    if (__get_cpuid_max(0, nullptr) < 7) return f;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return f;
    const unsigned max_subleaf = a;
    if (os_avx && has_bit(b, 5)) f |= DENSE_CPU_AVX2;
    if (os_avx512) {
        if (has_bit(b, 16)) f |= DENSE_CPU_AVX512F;
        if (has_bit(b, 30)) f |= DENSE_CPU_AVX512BW;
        if (has_bit(b, 31)) f |= DENSE_CPU_AVX512VL;
        if (has_bit(c, 11)) f |= DENSE_CPU_AVX512VNNI;
    }
    if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0) {
        if (os_avx && has_bit(a, 4)) f |= DENSE_CPU_AVXVNNI;
        if (os_avx512 && has_bit(a, 5)) f |= DENSE_CPU_AVX512BF16;
    }
    return f;
}
#else
uint64_t cpu_feature_bits() {
    return 0;
}  // no x86 ISA bits are defined for other architectures
#endif

// Cores this process may run on (the affinity mask, which containers and taskset narrow), not the
// machine's total: that is what a thread pool can actually use.
uint32_t usable_logical_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<uint32_t>(n);
    }
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<uint32_t>(n) : 1u;
}

uint64_t physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// MemAvailable (what can be allocated without swapping), not MemFree (which ignores the page cache).
uint64_t available_memory_bytes() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib) {
        std::getline(in, unit);
        if (key == "MemAvailable:") return kib * 1024u;
    }
    const long pages = sysconf(_SC_AVPHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

}  // namespace

DeviceInfo probe_cpu() {
    DeviceInfo d;
    d.hw = make_hw_desc(DENSE_DEVICE_CPU, 0);
    std::string name = cpu_model_name();
    if (name.empty()) name = "cpu";
    std::strncpy(d.hw.name, name.c_str(), sizeof d.hw.name - 1);
    d.hw.cpu_features = cpu_feature_bits();
    d.hw.cpu_logical_cores = usable_logical_cores();
    d.hw.total_memory_bytes = physical_memory_bytes();
    d.hw.free_memory_bytes = std::min(available_memory_bytes(), d.hw.total_memory_bytes);
    return d;
}

}  // namespace dense::packs
