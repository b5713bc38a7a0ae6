// What `dense-rt bench` prints and writes: a markdown table (stdout), JSON (--json FILE) and an SVG
// plot of tok/s against context depth (--plot FILE).
#pragma once

#include "bench/bandwidth_probe.hpp"
#include "bench/gemv_bench.hpp"
#include "bench/model_bench.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dense::bench {

struct BenchReport {
    std::string version;                  // dense-rt version
    std::string command;                  // the command line, for the record
    std::string model;                    // file name
    std::string device;                   // "cuda:0 (NVIDIA H200)"
    std::string pack;                     // the packs the token step runs ("cuda-sm90 + cpu-avx2" with a
                                          // split); the main device's pack with --gemv-only
    std::string kv_type;                  // "f16"
    int64_t prefill_chunk = 1;            // prompt tokens per batched step (1: token by token)
    bool prefill_free_order = false;      // their GEMMs in free order (ABI 1.13), not bit for bit
    uint64_t weight_bytes_per_token = 0;  // weights a generated token reads (LM head included)
    // The rest of what a generated token moves through device memory, so that a row at depth can be
    // set against the read ceiling too (bytes_moved_per_token): the K and V of one history position over
    // every full-attention layer (the attention reads all of them each token), and the recurrent state
    // a step reads from one bank and writes to the other (both banks' bytes).
    uint64_t kv_bytes_per_position = 0;
    uint64_t state_bytes_per_token = 0;
    uint64_t session_bytes = 0;           // device memory the session holds (weights, KV, state, buffers)
    double load_seconds = 0;
    double upload_seconds = 0;            // of load_seconds: copying the weights to the device (0 on the CPU)
    uint64_t rss_after_load = 0;          // the process's resident memory once the session stands; 0 = unknown
    std::vector<std::string> repeated_nodes;  // bench --repeat-nodes: a timing experiment, not the model's output
    // GPU sessions: the VRAM plan against what the device's free memory says was taken.
    struct VramCheck {
        std::string budget_source;    // "--vram-budget", "free memory of cuda:0"
        uint64_t budget = 0;
        int64_t context = 0;
        uint64_t planned = 0;         // the bill's allocations
        uint64_t plan_peak = 0;       // the bill's peak (allocations + reserve)
        uint64_t measured = 0;        // free memory before the session minus after it was made
        uint64_t measured_after = 0;  // the same after the whole benchmark (kernels loaded, graphs captured)
    };
    std::optional<VramCheck> vram;
    // A row split's CPU side, per token step over the whole benchmark.
    struct SplitUse {
        uint64_t cpu_bytes_per_token = 0;  // weight rows the CPU reads each step
        uint64_t gpu_bytes_per_token = 0;  // the rest of weight_bytes_per_token (VRAM and bus)
        uint64_t gpu_host_bytes_per_token = 0;  // of those, rows the GPU reads from host memory over PCIe
        uint64_t steps = 0;
        double cpu_ms_per_step = 0;        // the CPU parts, start to end, summed over a step's GEMVs
        double thread_ms_per_step = 0;     // the worker threads' busy time, summed over the threads
        unsigned threads = 0;
        double wait_ms_per_step = 0;       // how long the device stood waiting for them
        bool waits_timed = true;           // false: the device waited on words (not timed from the host)
        double bus_bytes_per_step = 0;     // activations to the host and results back
        double bus_read_share = 0;         // the share the session ran with
        std::string bus_share_auto;        // for bus_read_share auto: what it was chosen from (else empty)
    };
    std::optional<SplitUse> split;
    std::optional<BandwidthCeiling> ceiling;
    std::vector<ModelBenchRow> rows;
    std::vector<GemvResult> gemv;
};

// Bytes a token of `row` (a tg row) moves on average: weights + recurrent state + the KV history its
// attention reads, kv_bytes_per_position x (depth + (tokens + 1) / 2) (the token at position p reads
// p + 1 positions; the row's tokens sit at depth .. depth + tokens - 1). Activations, the logits and
// the KV written (one position) are left out: kilobytes against gigabytes.
double bytes_moved_per_token(const BenchReport& report, const ModelBenchRow& row);

std::string to_markdown(const BenchReport& report);
std::string to_json(const BenchReport& report);
// tok/s (y) against depth (x), one polyline per test; empty string when there are no model rows.
std::string to_svg(const BenchReport& report);

}  // namespace dense::bench
