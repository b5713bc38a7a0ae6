// Small copies between device memory and mapped page-locked host memory done by a kernel of the
// device's pack (its F32 DEQUANTIZE: a plain element copy), not by a copy engine.
//
// Why: while a row split's bus rows stream over PCIe (exec/bus_copies.hpp), the copy engines are
// busy with 8 MiB copies, and a row split's small per-GEMV copies (the activation out, the CPU's
// rows back: a few KiB each, ~190 a token for the 27B at 8 GiB) may queue behind one of them, on
// the step's critical path. A kernel reading or writing mapped host memory goes straight over the
// bus. DENSE_ROW_SPLIT_COPY=engine measures the old way.
#pragma once

#include "exec/device_memory.hpp"
#include "packs/pack_manager.hpp"

#include <cstdint>
#include <memory>

namespace dense::exec {

class KernelCopy {
public:
    // The copier for `device`, or null when its packs have no F32 DEQUANTIZE, the memory cannot map
    // host memory (a pack before ABI 1.5), or DENSE_ROW_SPLIT_COPY=engine.
    static std::unique_ptr<KernelCopy> make(const packs::PackManager& packs, size_t device, DeviceMemory& memory);
    // The op a copier on `device` runs (the packs' F32 DEQUANTIZE for a CUDA device), or null.
    static const packs::OpCandidate* find_op(const packs::PackManager& packs, size_t device);

    // Enqueues on memory.stream(): `bytes` (a multiple of 4) from src to dst, either of them device
    // memory or the device side of mapped host memory. Throws dense::Error(Pack) when the op fails.
    void copy(void* dst, const void* src, uint64_t bytes) const;

private:
    KernelCopy(const packs::OpCandidate& op, DeviceMemory& memory, uint32_t device_index)
        : op_(op), memory_(memory), device_index_(device_index) {}
    packs::OpCandidate op_;
    DeviceMemory& memory_;
    uint32_t device_index_;
};

}  // namespace dense::exec
