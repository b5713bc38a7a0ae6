// The flags of `dense-rt bench` (parsed in main.cpp, run by cmd_bench.cpp).
#pragma once

#include <string>
#include <vector>

namespace dense::cli {

struct BenchFlags {
    int prompt_tokens = 512;          // -p
    int gen_tokens = 128;             // -n
    std::string depths = "0";         // -d 0,8192,32768
    int reps = 3;                     // -r
    std::string json_out;             // --json FILE
    std::string plot_out;             // --plot FILE.svg
    bool gemv = false;                // --gemv: the per-format GEMV micro-bench too
    bool gemv_only = false;           // --gemv-only: no model needed
    std::vector<std::string> gemv_formats;  // --gemv-formats q4_k,iq4_xs (default: all 12)
    std::vector<int> gemm_cols;       // --gemm-cols 16,32,64: time GEMM_Q of T columns instead of GEMV_Q
    double ceiling_gib = 1.0;         // --ceiling-buffer GiB per buffer of the bandwidth probe
    bool cpu = false;                 // --cpu: bench the CPU reference instead of the main device
    int profile_steps = 0;            // --profile N: per-op time of N decode steps at the first depth
    bool cpu_rows = false;            // --cpu-rows: only the row split's CPU side (bench/cpu_rows_bench.hpp)
    std::vector<unsigned> cpu_threads;  // --cpu-threads 1,4,15 (default: 1, 2, 4, 8, all but one, all)
    double cpu_rows_gib = 1.0;        // --cpu-rows-gib: weight bytes per pass
    std::vector<std::string> repeat_nodes;  // --repeat-nodes rms_norm,swiglu: run those nodes twice (timing only)
};

}  // namespace dense::cli
