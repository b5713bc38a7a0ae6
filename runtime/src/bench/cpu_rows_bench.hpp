// The CPU side of a row split, alone: the CPU pack's GEMV over weight rows at the 27B's ffn shape,
// with the GPU's activation format (Q8_32), cut into row chunks and run on the split's worker pool
// (exec/cpu_workers.hpp) exactly as exec/host_nodes.cpp does, one GEMV after another. For each
// thread count: GB/s of weight rows read, per thread, and the page faults a pass took, from two
// sources of the same bytes:
//   anon: ordinary process memory (transparent huge pages where the kernel grants them);
//   file: a read-only private mapping of a file holding them (how the split reads the model: 4 KiB
//         page-cache pages, faulted into the process on first touch).
// Beside them, "read": the same pool summing the anonymous bytes (the host's read bandwidth at that
// thread count, the ceiling the GEMV rows are judged against).
#pragma once

#include "packs/pack_manager.hpp"

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dense::bench {

struct CpuRowsOptions {
    std::vector<dense_type_id> formats;     // weight formats (each needs a CPU GEMV against Q8_32)
    std::vector<unsigned> threads;          // worker counts to measure
    uint64_t bytes = uint64_t{1} << 30;     // weight bytes per pass (several 5120 x 17408 matrices)
    int reps = 3;                           // passes per case; the best counts (after one warm-up)
    std::filesystem::path file_dir;         // where the "file" source's temporary file goes
};

struct CpuRowsResult {
    std::string format;   // "iq4_xs", or "read" for the bandwidth row
    std::string source;   // "anon" or "file"
    std::string impl;     // the GEMV implementation the CPU pack chose
    unsigned threads = 0;
    uint64_t bytes = 0;   // weight bytes per pass
    double seconds = 0;   // best pass
    double gbs = 0;
    double minor_faults = 0;  // page faults of the best pass (minor: no disk read)
    double major_faults = 0;
};

// Throws dense::Error(Pack) when no CPU pack implements a format's GEMV against Q8_32, and
// dense::Error(Io) naming the file when the temporary file cannot be written or mapped.
std::vector<CpuRowsResult> bench_cpu_rows(const packs::PackManager& packs, const CpuRowsOptions& options);

std::string cpu_rows_markdown(const std::vector<CpuRowsResult>& results);

}  // namespace dense::bench
