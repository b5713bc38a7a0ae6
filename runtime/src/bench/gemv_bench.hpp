// Per-format GEMV micro-benchmark at the real 27B shapes: y = W x for one matrix of a format, timed
// alone (no fusion, no neighbours), with the weights rotated over enough copies that the working set
// is several times the L2 cache (each call reads its matrix from DRAM, as in a real token step).
// Reported: time per call, weight bytes read per call / time = achieved GB/s, and that as a fraction
// of the pure-read ceiling measured in the same run (bandwidth_probe.hpp).
// With gemm_cols = T > 1 the same cases time GEMM_Q (batched prefill: T activations against the
// matrix, dst {out, T}) instead, and report T-int8-MAC/s besides (in x out x T / time).
#pragma once

#include "bench/bandwidth_probe.hpp"

#include <dense/abi/dense_abi.h>

#include <string>
#include <vector>

namespace dense::bench {

struct GemvShape {
    std::string label;  // "ffn_up", "ffn_down", ...
    int64_t in = 0, out = 0;
};

// The matrix shapes of the 27B token step (n_embd 5120, n_ff 17408, vocab 248320).
std::vector<GemvShape> qwen35_27b_gemv_shapes();

struct GemvResult {
    std::string format, shape, impl, act;
    int64_t in = 0, out = 0;
    uint64_t weight_bytes = 0;  // bytes of W read per call
    double seconds = 0;         // per call, best repetition
    double gbs = 0;             // weight_bytes / seconds / 1e9
    double fraction = 0;        // gbs / read ceiling
    int64_t cols = 1;           // T: 1 for a GEMV, the GEMM_Q's columns otherwise
    double tmacs = 0;           // in * out * cols / seconds / 1e12 (int8 multiply-adds)
};

struct GemvBenchOptions {
    std::vector<dense_type_id> formats;
    std::vector<GemvShape> shapes;
    uint64_t rotate_bytes = uint64_t{1} << 30;  // working set per case (>> L2)
    int reps = 5;
    double read_ceiling_gbs = 0;
    int64_t gemm_cols = 0;  // > 1: time GEMM_Q of this many columns instead of GEMV_Q
};

std::vector<GemvResult> bench_gemv(const packs::PackManager& packs, size_t device, const MemoryFactory& memory,
                                   const GemvBenchOptions& options);

// The GEMM cases as a markdown table (T, us per call, GB/s of weight, T-int8-MAC/s).
std::string gemm_markdown(const std::vector<GemvResult>& results);

}  // namespace dense::bench
