// Placement of the weights' OUTPUT ROWS when they do not all fit on the GPU: every GEMV weight keeps
// a prefix of its rows [0, gpu_rows) in the GPU arena and leaves the suffix [gpu_rows, rows) to the
// CPU, which reads it straight from the file mapping. Only activations then cross PCIe per token.
//
// Which rows move (choose_row_split), in tiers, until enough bytes are off the GPU. By role:
//   ffn_gate and ffn_up   (the largest matrices; their CPU rows feed SwiGLU element-wise)
//   ffn_down
//   every other GEMV weight (attention / delta-net projections, the LM head)
// and by what a byte of the tensor's format costs the CPU (packs/cpu_gemv_speed.hpp: a tuned kernel
// that keeps up with the host's reads, a tuned one bound by its decoding, the scalar reference only):
//   1. ffn_gate / ffn_up, read-bound      4. ffn_down, arithmetic-bound
//   2. ffn_down, read-bound               5. the others, read-bound
//   3. ffn_gate / ffn_up, arithmetic-bound 6. the others, arithmetic-bound
//   7-9. the three roles in formats only the reference runs.
// Measured on the H200's host (15 threads): the reference reads 0.07-0.3 GB/s per thread, a tuned
// kernel 3-5, so a few percent of the CPU bytes in a reference-only format would take most of the
// CPU's time; and an IQ2_XS / IQ2_S / IQ3_XXS / Q3_K byte took the tuned kernels 1.6-3x an IQ4_XS /
// Q4_K byte (22-42 against 65-68 GB/s), so at 8 GiB the seed-iq4 27B's ~0.5 GB of such ffn rows stay
// on the GPU while read-bound ffn rows go instead (the same bytes, less CPU time).
// Within a tier every tensor gives up the SAME FRACTION of its rows (evenly over the layers, not
// from the last layer backwards): the CPU suffix of a split GEMV runs overlapped with the GPU
// prefix, so a step costs max(GPU part, CPU part) per GEMV. An even fraction keeps that balance the
// same in every layer; emptying the last layers first would make their GEMVs wholly CPU-bound (no
// overlap at all) for the same bytes moved. Except for small moves: where that fraction would be
// under kMinSplitFraction, only the tensors of evenly spaced layers give rows, about that fraction
// each, since every split layer pays its hand-overs to the CPU whatever its rows (+5-9 % decode at
// 16 GiB and context 32768 on the H200).
//
// Split points are multiples of kSplitRowTile rows: the CUDA GEMV gives each warp 8 consecutive
// output rows (kRowsPerWarp, plugins/cuda-common/src/kernels/gemv_common.cuh), so no warp straddles
// the boundary. A row is always whole quant blocks (GGUF rows are), so row boundaries are
// quant-block aligned. Tensors that are not GEMV weights (norms, conv taps, token_embd — read by row,
// so also a head tied to token_embd) are never split.
//
// Before any row moves, the tables the step reads ONE ROW of per token (token_embd: 546 MB of Q3_K
// for the 27B, of which a token reads one 2.2 KB row) leave VRAM whole when the device can read
// page-locked host memory in place (choose_row_split's `tables_to_host`): the GPU's embedding lookup
// then reads its row over PCIe (a few microseconds per token), and every byte of VRAM it frees keeps
// a byte of matrix rows off the host side, which all of them cross every token. llama.cpp keeps
// token_embd in host memory for the same reason.
#pragma once

#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "packs/cpu_gemv_speed.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dense::plan {

// The CUDA GEMV's row tile (kRowsPerWarp): split points are multiples of it.
inline constexpr int64_t kSplitRowTile = 8;
// The least fraction of its rows a split tensor gives up when a tier moves only a little: below it,
// fewer layers split instead (choose_row_split).
inline constexpr double kMinSplitFraction = 0.5;

// Gpu: in the device's weight arena. Cpu: read by the CPU from the file mapping (matrix rows).
// HostTable: the whole tensor in page-locked host memory that the device reads by row in place.
enum class Side { Gpu, Cpu, HostTable };

// Rows [first, end) of one tensor (by its GGUF name), on one side.
struct RowRange {
    std::string tensor;
    int64_t first = 0;
    int64_t end = 0;
    Side side = Side::Gpu;
};

// A complete placement lists ranges covering every row of every used weight exactly once
// (verify_exact_cover proves it). The executor's shape: per tensor a GPU prefix and/or a CPU suffix.
struct Placement {
    std::vector<RowRange> ranges;

    // Rows of `tensor` on the GPU: the end of its GPU prefix (0 when it has none). For a verified
    // placement the rest [gpu_rows, rows) is on the CPU.
    int64_t gpu_rows(const std::string& tensor) const;
    // Whether any row of any tensor is on the CPU.
    bool splits_any() const;
    // Whether `tensor` lives in page-locked host memory read by row (Side::HostTable).
    bool in_host_table(const std::string& tensor) const;
    // Whether anything is off the GPU arena at all: CPU rows or host tables.
    bool moves_any() const;
};

// Every used weight (weight_arena's tensors) wholly on the GPU: the placement of a run that fits.
Placement whole_on_gpu(const model::BoundModel& model);

// Bytes of one output row of a 2-D tensor.
uint64_t row_bytes(const gguf::TensorInfo& t);

// The tensors (by name) that only GEMV steps of the spec's recipes read: the ones that may split.
std::vector<std::string> splittable_tensors(const model::BoundModel& model, const model::ModelSpec& spec);

// What a split moves, per tensor role ("ffn_gate", "attn_qkv", "output", ...).
struct SplitKind {
    std::string role;
    int64_t tensors_split = 0;  // tensors with at least one row on the CPU
    int64_t tensors = 0;        // tensors of this role
    uint64_t cpu_bytes = 0;     // bytes of their CPU rows
};

// The tensors the step reads only by row, never as a GEMV matrix (token_embd unless it is the tied
// LM head): the ones that may become host tables.
std::vector<std::string> row_read_tables(const model::BoundModel& model, const model::ModelSpec& spec);

struct RowSplit {
    Placement placement;
    uint64_t cpu_bytes = 0;  // bytes of all CPU rows: what the CPU reads per token
    uint64_t host_table_bytes = 0;  // bytes of the host tables (moved off the GPU, read one row per token)
    std::vector<std::string> host_tables;  // their names
    bool enough = false;     // cpu_bytes >= the bytes asked for (false: even every splittable row is short)
    std::vector<SplitKind> kinds;  // in tier order, then by role
};

// What a byte of a weight format costs the CPU (packs/cpu_gemv_speed.hpp); empty = every format is
// read-bound.
using CpuGemvCostOf = std::function<packs::CpuGemvCost(dense_type_id weight)>;

// Moves weights off the GPU until at least `bytes_to_move` bytes are off it: first, when
// `tables_to_host`, the row-read tables whole (Side::HostTable), then matrix rows to the CPU (tiers
// above). bytes_to_move = 0 gives whole_on_gpu.
RowSplit choose_row_split(const model::BoundModel& model, const model::ModelSpec& spec, uint64_t bytes_to_move,
                          const CpuGemvCostOf& cpu_cost = {}, bool tables_to_host = false);

// How many CPU parts a token step of a split runs: the executor hands adjacent split GEMVs that read
// the same activation to the CPU as one job (exec/host_nodes.hpp: a layer's ffn_gate and ffn_up, an
// attention or Gated DeltaNet list), so per layer, and for the head, the distinct inputs of the GEMV
// steps whose weight has CPU rows (`has_cpu_rows`). bus_read_share auto's hand-over term
// (plan/bus_share.hpp). An estimate of HostNodes' grouping, which also needs the same activation
// format, no accumulation and adjacency: equal to the jobs that ran in 16 qwen35 placements checked
// in review (session 25); it counts too few where a float weight (F32 activation) shares an input
// with quantized ones and both have CPU rows, or with DENSE_ROW_SPLIT_MERGE=0. Each missed job moves
// the share by 0.1 ms / (C + B): ~0.003 at 16 GiB, ~0.0004 at 8 GiB.
int64_t cpu_jobs_per_step(const model::BoundModel& model, const model::ModelSpec& spec,
                          const std::function<bool(const gguf::TensorInfo*)>& has_cpu_rows);

// Per-role summary of any placement (as RowSplit::kinds).
std::vector<SplitKind> summarize(const model::BoundModel& model, const Placement& placement);

// Proves `placement` places every row of every used weight exactly once, in the shape the executor
// runs: no gap, no overlap, no range past the tensor's rows or empty/reversed, no tensor the model
// does not use, GPU rows a prefix and CPU rows a suffix split at a multiple of kSplitRowTile, no
// split of a tensor that is not a GEMV weight, and host tables only whole and only of row-read
// tables. Throws dense::Error(Internal) naming the tensor
// and the row range otherwise (a placement is the planner's output: a bad one is a bug).
void verify_exact_cover(const model::BoundModel& model, const model::ModelSpec& spec, const Placement& placement);

}  // namespace dense::plan
