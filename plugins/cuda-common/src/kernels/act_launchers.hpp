// Host entry points of the activation-op kernels (every non-GEMV op of the qwen35 token step), plus
// the launch plan of ATTN_DECODE, which the host needs for workspace_bytes(). Plain C++: the op layer
// (*.cpp, compiled by g++) validates a call completely, fills one of these argument structs and calls
// the launcher; the kernels live in ops_*.cu.
//
// Contract of every launcher: the arguments describe a call the op layer accepted (sizes >= 1, row
// strides >= row lengths, device pointers of the current device valid for the described extents,
// outputs overlapping inputs only where the op allows it, and then as the very same view). The
// kernels are enqueued on `stream` with no host synchronisation and no allocation; the return value
// is cudaGetLastError() after the last launch.
//
// Scalars that change per token (ROPE's position, KV_STORE's slot, ATTN_DECODE's n_kv) are device
// pointers read BY THE KERNELS, so a captured CUDA graph stays valid from token to token. The host
// cannot refuse a bad value there, so the kernels treat it like this (never out of bounds):
//   ROPE          position < 0            -> the rotated dims of dst are set to NaN (a finite-check
//                                            downstream turns the step into a numeric error)
//   KV_STORE      slot outside [0, n_ctx) -> nothing is written
//   ATTN_DECODE   n_kv outside [1, n_ctx] -> dst is set to NaN, the workspace is not touched
// All element strides are in elements (floats), not bytes.
#pragma once

#include "kernels/q8_32_out.hpp"
#include "target_tuning.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

// Functions both the host (plan, workspace size) and the kernels (the split of a history) evaluate.
#if defined(__CUDACC__)
#define DENSE_ACT_HOST_DEVICE __host__ __device__
#else
#define DENSE_ACT_HOST_DEVICE
#endif

namespace dense::cuda::act {

// ---- norms (ops_norm.cu) -------------------------------------------------------------------------

struct NormArgs {
    const float* x = nullptr;  // {n, rows}, row stride x_stride
    int64_t x_stride = 0;
    const float* z = nullptr;  // GATED_RMS_NORM only: {n, rows}, row stride z_stride
    int64_t z_stride = 0;
    const float* w = nullptr;  // RMS_NORM, GATED_RMS_NORM: weight {n}
    float* y = nullptr;        // {n, rows}, row stride y_stride; may be x itself (same stride)
    int64_t y_stride = 0;
    int64_t n = 0, rows = 0;
    float eps = 0;
    Q8_32Out quantized;  // optional: y (then contiguous, n * rows % 32 == 0) quantized to Q8_32 as well
    // L2_NORM's token axis (ABI 1.10): `tokens` groups of `rows` rows, token t's at t * x_tstride /
    // t * y_tstride elements (never with `quantized`).
    int64_t tokens = 1, x_tstride = 0, y_tstride = 0;
};

// Rows of this many elements or more are normalized by several blocks each, with another order of the
// sum of squares (ops_norm.cu); shorter rows by one block of norm_threads_for_row(n) threads.
inline constexpr int64_t kNormSpreadMinRow = 2048;
// Threads of a norm's block for rows shorter than kNormSpreadMinRow: 8 consecutive elements each (the
// last ones fewer), a multiple of 32 (ATTN_PREP's kernel takes the same, for the same sums).
int norm_threads_for_row(int64_t n);
// y = x / sqrt(mean(x^2) + eps) * w
cudaError_t launch_rms_norm(const NormArgs& a, cudaStream_t stream);
// y = x / sqrt(sum(x^2) + eps)
cudaError_t launch_l2_norm(const NormArgs& a, cudaStream_t stream);
// y = x / sqrt(mean(x^2) + eps) * w * silu(z)
cudaError_t launch_gated_rms_norm(const NormArgs& a, cudaStream_t stream);

// ---- elementwise (ops_elementwise.cu) --------------------------------------------------------------

// y = silu(gate) * up over n contiguous elements (y disjoint from the inputs); with quantized.base,
// y quantized to Q8_32 as well (n % 32 == 0).
cudaError_t launch_swiglu(const float* gate, const float* up, float* y, int64_t n, Q8_32Out quantized,
                          cudaStream_t stream);

// *status = 1 if any of x[0..n) is NaN or +-Inf; otherwise *status is not written.
cudaError_t launch_check_finite(const float* x, int64_t n, int32_t* status, cudaStream_t stream);

// ---- greedy choice (ops_argmax.cu) -----------------------------------------------------------------

// ARGMAX's workspace (ops_argmax.cu): the best value and index of each of up to kArgmaxParts shares
// of x, the indices first (8-byte aligned). The same for every n.
inline constexpr int kArgmaxParts = 128;
constexpr uint64_t argmax_workspace_bytes() { return (8u + 4u) * static_cast<uint64_t>(kArgmaxParts); }

// *out = the lowest index of the largest of x[0..n), as std::max_element gives it (NaN never chosen
// unless it is x[0]); n >= 1; `workspace` holds argmax_workspace_bytes(), 8-byte aligned.
cudaError_t launch_argmax(const float* x, int64_t n, int32_t* out, void* workspace, cudaStream_t stream);

// ---- the k best (ops_top_k.cu) -------------------------------------------------------------------

// TOP_K's workspace (ops_top_k.cu): kTopKGroups group maxima (8-byte keys), the list's length at
// kTopKCountOffset, and a list of up to kTopKListCapacity keys at kTopKListOffset. The same for every
// n and k: where more keys pass the filter than the list holds, the last kernel reads x instead.
inline constexpr int64_t kTopKGroups = 64;
inline constexpr int64_t kTopKListCapacity = 4096;
inline constexpr uint64_t kTopKCountOffset = 8 * kTopKGroups;
inline constexpr uint64_t kTopKListOffset = 1024;
static_assert(kTopKCountOffset + 8 <= kTopKListOffset, "the count lies between the maxima and the list");

// The workspace launch_top_k needs (8-byte aligned).
constexpr uint64_t top_k_workspace_bytes(int64_t /*n*/, int64_t /*k*/) {
    return kTopKListOffset + 8u * static_cast<uint64_t>(kTopKListCapacity);
}

// ids[i], values[i] = the i-th best of x[0..n) that is neither NaN nor -inf (value descending, equal
// values by the lower index, -0.0 == +0.0), values bit for bit as x stores them; -1, -inf past the
// last one (DENSE_OP_TOP_K). 1 <= n < 2^31, 1 <= k <= DENSE_TOP_K_MAX; `workspace` holds
// top_k_workspace_bytes(n, k), 8-byte aligned.
cudaError_t launch_top_k(const float* x, int64_t n, int64_t k, int32_t* ids, float* values, void* workspace,
                         cudaStream_t stream);

// GDN gates per head: beta = sigmoid(b); decay = exp(softplus(a + dt_bias) * A).
struct GdnGatesArgs {
    const float *b = nullptr, *a = nullptr, *dt_bias = nullptr, *A = nullptr;  // b, a {heads, tokens}
    float *beta = nullptr, *decay = nullptr;                                     // {heads, tokens}
    int64_t heads = 0, tokens = 1;
};
cudaError_t launch_gdn_gates(const GdnGatesArgs& a, cudaStream_t stream);

// ---- rotary embedding (ops_rope.cu) ----------------------------------------------------------------

struct RopeArgs {
    const float* x = nullptr;  // {head_dim, heads}, row stride x_stride
    int64_t x_stride = 0;
    float* y = nullptr;  // same shape, row stride y_stride; may be x itself
    int64_t y_stride = 0;
    int64_t head_dim = 0, heads = 0, n_rot = 0;  // n_rot even, 2 <= n_rot <= head_dim
    const int32_t* position = nullptr;           // device I32 {tokens}: token t's position
    float freq_base = 0, freq_scale = 0;
    // The token axis (ABI 1.10): token t's heads at t * x_tstride / t * y_tstride elements.
    int64_t tokens = 1, x_tstride = 0, y_tstride = 0;
};
cudaError_t launch_rope_neox(const RopeArgs& a, cudaStream_t stream);

// ---- KV cache and attention (ops_attention.cu) ------------------------------------------------------

struct KvStoreArgs {
    bool f16 = true;           // cache element type: F16 (round to nearest even) or F32
    const float* k = nullptr;  // {d, hkv} contiguous
    const float* v = nullptr;
    int64_t d = 0, hkv = 0, n_ctx = 0;
    const int32_t* position = nullptr;  // device I32 {tokens}: the slot token t writes
    void* k_cache = nullptr;            // contiguous {d, hkv, n_ctx}
    void* v_cache = nullptr;
    // The token axis (ABI 1.10): token t's k and v at t * d * hkv elements (contiguous tokens).
    int64_t tokens = 1;
};
cudaError_t launch_kv_store(const KvStoreArgs& a, cudaStream_t stream);

// ATTN_PREP (ABI 1.11, ops_attn_prep.cu): one token's RMS_NORM of the q and k heads, ROPE (NeoX) of both
// and KV_STORE, in one kernel: one block per head (q heads first), the norm's thread layout.
struct AttnPrepArgs {
    const float* q = nullptr;  // {d, hq}, row stride q_stride
    int64_t q_stride = 0;
    const float* k = nullptr;  // {d, hkv} contiguous
    const float* v = nullptr;  // {d, hkv} contiguous
    const float* q_norm = nullptr;
    const float* k_norm = nullptr;
    const int32_t* position = nullptr;  // device I32 {1}
    float* q_out = nullptr;             // {d, hq} contiguous
    float* k_out = nullptr;             // {d, hkv} contiguous
    void* k_cache = nullptr;            // {d, hkv, n_ctx}, F16 or F32
    void* v_cache = nullptr;
    bool f16 = true;
    int64_t d = 0, hq = 0, hkv = 0, n_ctx = 0, n_rot = 0;
    float eps = 0, freq_base = 0, freq_scale = 0;
};
// Whether the one kernel takes these shapes (d < kNormSpreadMinRow: the norm's one-block rows, whose
// sums the kernel repeats bit for bit); otherwise the pack runs the five ops' own launches.
bool attn_prep_fits(const AttnPrepArgs& a) noexcept;
cudaError_t launch_attn_prep(const AttnPrepArgs& a, cudaStream_t stream);

// ATTN_DECODE's launch plan, a function of the shapes only (never of n_kv, which lives on the device):
//   - one thread block per (partition of the history, KV head, group of up to 8 query heads of that
//     KV head); the block streams its positions in tiles of 32 with an online softmax;
//   - n_kv <= kAttnSinglePassMaxKv: ONE partition covers the whole history and writes dst directly
//     (single pass, no workspace traffic, the merge kernel returns at once);
//   - longer histories: up to `partitions` partitions of >= kAttnMinChunk positions each write fp32
//     partials (unnormalised o, running max m, denominator l) to the workspace, and a second kernel
//     merges them per query head with fp64 weights and denominators.
// Why the single pass stops at 64 positions: one block per KV head streams its positions one tile
// after another, and on an H200 (27B shape) a single pass over 1024 positions (4 blocks busy) took
// 223 us per call where 16 partitions of 64 plus the merge take 19 us (call overhead included):
// beyond a couple of tiles, splitting is always faster.
// The grid offers about tuning::kAttnTargetBlocks blocks (one wave of two resident blocks per SM on
// an H200: 264 measured 12 % faster per call than two waves at 32K, target_tuning.hpp), so long
// histories fill the GPU, while the blocks of unused partitions (short histories) only read n_kv and
// return. A per-arch constant, not the device's SM count: the split (and so the merge's sums) is a
// function of the shapes and the pack only.
// The device derives the split actually used from n_kv with attn_split() below, the same function
// in both kernels.
inline constexpr int kAttnThreads = 256;  // 8 warps
inline constexpr int kAttnTile = 32;      // positions per tile: one per lane in the softmax
inline constexpr int64_t kAttnSinglePassMaxKv = 64;
inline constexpr int64_t kAttnMinChunk = 64;    // positions per partition at least (split path)
inline constexpr int kAttnMaxPartitions = 256;  // = kAttnThreads: the merge gives each a thread
inline constexpr int kAttnMaxHeadsPerBlock = 8;  // query heads sharing one block's K/V reads
inline constexpr std::size_t kAttnMaxSharedBytes = 48 * 1024;  // no opt-in attribute needed

struct AttnPlan {
    int partitions = 1;       // grid.x: partitions the grid provides (1 when n_ctx <= single-pass max)
    int heads_per_block = 1;  // query heads per block (<= kAttnMaxHeadsPerBlock)
    int head_blocks = 1;      // grid.z: ceil(group / heads_per_block)
    std::size_t shared_bytes = 0;
    uint64_t workspace_bytes = 0;  // partials: partitions * hq * (d + 2) floats (0 when partitions == 1)
    bool fits = false;  // false: more shared memory than one block has, or a grid dimension too large
};

// Shared memory of one block, in floats: probabilities [hb][tile], then m, l and the correction
// [hb] each (padded to a multiple of 4, so what follows stays 16-byte aligned), then q and the output
// accumulators [hb][d] each.
DENSE_ACT_HOST_DEVICE inline int64_t attn_shared_header_floats(int heads_per_block) noexcept {
    return static_cast<int64_t>(heads_per_block) * kAttnTile + (3 * static_cast<int64_t>(heads_per_block) + 3) / 4 * 4;
}
inline std::size_t attn_shared_bytes(int64_t d, int heads_per_block) noexcept {
    return static_cast<std::size_t>(attn_shared_header_floats(heads_per_block) + 2 * heads_per_block * d) *
           sizeof(float);
}

inline AttnPlan plan_attention(int64_t d, int64_t hq, int64_t hkv, int64_t n_ctx) noexcept {
    AttnPlan p;
    const int64_t group = hq / hkv;
    int hb = static_cast<int>(group < kAttnMaxHeadsPerBlock ? group : kAttnMaxHeadsPerBlock);
    while (hb > 1 && attn_shared_bytes(d, hb) > kAttnMaxSharedBytes) --hb;
    p.heads_per_block = hb;
    p.head_blocks = static_cast<int>((group + hb - 1) / hb);
    p.shared_bytes = attn_shared_bytes(d, hb);
    p.fits = p.shared_bytes <= kAttnMaxSharedBytes && hkv <= 65535 && p.head_blocks <= 65535 &&
             hq <= 0x7FFFFFFF;  // grid.y, grid.z, and the merge's grid.x
    if (n_ctx > kAttnSinglePassMaxKv) {
        int64_t parts = (n_ctx + kAttnMinChunk - 1) / kAttnMinChunk;
        const int64_t per_part = hkv * p.head_blocks;  // blocks per partition
        const int64_t fill = (tuning::kAttnTargetBlocks + per_part - 1) / per_part;
        if (parts > fill) parts = fill;
        if (parts > kAttnMaxPartitions) parts = kAttnMaxPartitions;
        if (parts < 1) parts = 1;
        p.partitions = static_cast<int>(parts);
        if (p.partitions > 1)
            p.workspace_bytes = static_cast<uint64_t>(p.partitions) * static_cast<uint64_t>(hq) *
                                static_cast<uint64_t>(d + 2) * sizeof(float);
    }
    return p;
}

// Tokens per launch of a T-token call (ABI 1.10's token axis). Every token of a launch keeps its
// partials (plan.workspace_bytes each) until the launch's merge, so one launch of a 512-token prompt
// step over the 27B's 33K context needed ~800 MiB of workspace (66 partitions x 24 heads x 258 floats
// a token), most of the step's extra peak VRAM over a 256-token step. Where the partials would pass
// kAttnMaxWorkspaceBytes the call runs as consecutive launches of as many tokens as fit, sharing that
// workspace: a token's blocks, reads and sums do not depend on the other tokens of its launch, so
// the bits are those of one launch (and of T one-token launches). A token step (T = 1) is one launch.
inline constexpr uint64_t kAttnMaxWorkspaceBytes = uint64_t{128} << 20;
inline int64_t attn_tokens_per_launch(const AttnPlan& plan, int64_t tokens) noexcept {
    if (plan.workspace_bytes == 0 || tokens <= 1) return tokens;
    const auto fit = static_cast<int64_t>(kAttnMaxWorkspaceBytes / plan.workspace_bytes);
    return fit < 1 ? 1 : (fit < tokens ? fit : tokens);
}

// How a history of n (1 <= n <= n_ctx) positions is split over a plan's `partitions`: partition p
// covers [p * chunk, min(n, (p + 1) * chunk)) for p < used, each non-empty; used == 1 is the single
// pass (chunk == n).
struct AttnSplit {
    int64_t chunk = 0;
    int used = 1;
};
DENSE_ACT_HOST_DEVICE inline AttnSplit attn_split(int64_t n, int partitions) noexcept {
    AttnSplit s;
    if (n <= kAttnSinglePassMaxKv || partitions <= 1) {
        s.chunk = n;
        s.used = 1;
        return s;
    }
    int64_t parts = (n + kAttnMinChunk - 1) / kAttnMinChunk;
    if (parts > partitions) parts = partitions;
    int64_t chunk = (n + parts - 1) / parts;
    chunk = (chunk + kAttnTile - 1) / kAttnTile * kAttnTile;  // whole tiles
    s.chunk = chunk;
    s.used = static_cast<int>((n + chunk - 1) / chunk);  // <= parts, every partition non-empty
    return s;
}

struct AttnArgs {
    const float* q = nullptr;  // {d, hq}, row stride q_stride
    int64_t q_stride = 0;
    const float* gate = nullptr;  // optional {d, hq}, row stride gate_stride
    int64_t gate_stride = 0;
    bool f16 = true;  // cache element type
    const void* k_cache = nullptr;  // contiguous {d, hkv, n_ctx}
    const void* v_cache = nullptr;
    int64_t d = 0, hq = 0, hkv = 0, n_ctx = 0;
    const int32_t* n_kv = nullptr;  // device I32 {1}
    float scale = 0;
    float* out = nullptr;      // {d, hq} contiguous
    float* workspace = nullptr;  // >= attn_tokens_per_launch(plan, tokens) * plan.workspace_bytes, 4-byte aligned
                                 // (unused when partitions == 1)
    // The token axis (ABI 1.10): token t's q, gate and out at t * *_tstride elements, its n_kv at
    // n_kv[t], its partials plan.workspace_bytes further into the workspace; grid.z covers the tokens.
    int64_t tokens = 1, q_tstride = 0, gate_tstride = 0, out_tstride = 0;
};
// plan must be plan_attention(d, hq, hkv, n_ctx) with plan.fits.
cudaError_t launch_attn_decode(const AttnArgs& a, const AttnPlan& plan, cudaStream_t stream);

// ---- Gated DeltaNet (ops_gdn.cu, ops_conv.cu) --------------------------------------------------------

struct ConvArgs {
    const float* x = nullptr;         // {channels, tokens}, token t at t * x_stride
    const float* taps = nullptr;      // {kernel, channels}: channel c's taps at c * kernel
    const float* state_in = nullptr;  // {kernel - 1, channels}
    float* y = nullptr;               // {channels, tokens}, token t at t * y_stride
    float* state_out = nullptr;       // {kernel - 1, channels}; may be state_in itself
    int64_t channels = 0, kernel = 0;  // kernel >= 2
    int64_t tokens = 1, x_stride = 0, y_stride = 0;
    bool silu = true;
};
cudaError_t launch_conv1d_causal(const ConvArgs& a, cudaStream_t stream);

struct GdnArgs {
    const float* q = nullptr;  // {dk, hk}, row stride q_stride
    int64_t q_stride = 0;
    const float* k = nullptr;  // {dk, hk}, row stride k_stride
    int64_t k_stride = 0;
    const float* v = nullptr;  // {dv, hv}, row stride v_stride
    int64_t v_stride = 0;
    const float* beta = nullptr;      // {hv}
    const float* decay = nullptr;     // {hv}
    const float* state_in = nullptr;  // {dk*dv, hv}: head h's S[i][j] at h*dk*dv + j*dk + i
    float* state_out = nullptr;       // same layout; may be state_in itself
    float* o = nullptr;               // {dv, hv} contiguous
    int64_t dk = 0, dv = 0, hk = 0, hv = 0;
    float scale = 0;
    // The token axis (ABI 1.10): token t's q, k, v and o at t * *_tstride elements, its beta and
    // decay at t * hv; the state runs through the tokens in order.
    int64_t tokens = 1, q_tstride = 0, k_tstride = 0, v_tstride = 0, o_tstride = 0;
};
cudaError_t launch_gdn_decode(const GdnArgs& a, cudaStream_t stream);

// GDN_STEP (ABI 1.11, ops_gdn_step.cu): one token's CONV1D_CAUSAL over x's C = 2 hk dk + hv dv channels,
// the L2_NORM of y's 2 hk rows of dk, GDN_GATES and GDN_DECODE in one kernel. Everything contiguous;
// the outputs disjoint from each other and from the inputs (pack-common's check_gdn_step).
struct GdnStepArgs {
    const float* x = nullptr;         // {C}
    const float* taps = nullptr;      // {kernel, C}
    const float* conv_in = nullptr;   // {kernel - 1, C}
    float* y = nullptr;               // {C}: conv output, q and k heads L2-normalised
    float* conv_out = nullptr;        // {kernel - 1, C}
    const float* b = nullptr;         // {hv}
    const float* a = nullptr;         // {hv}
    const float* dt_bias = nullptr;   // {hv}
    const float* A = nullptr;         // {hv}
    float* beta = nullptr;            // {hv}
    float* decay = nullptr;           // {hv}
    const float* state_in = nullptr;  // {dk*dv, hv}, GdnArgs's layout
    float* state_out = nullptr;       // same layout, apart from state_in
    float* o = nullptr;               // {dv, hv}
    int64_t kernel = 0, dk = 0, hk = 0, dv = 0, hv = 0;
    float scale = 0, eps = 0;
    bool silu = true;
};
// Whether the one kernel takes these shapes (dk <= 128, dv a multiple of 8); otherwise the pack runs
// the four ops' own launches.
bool gdn_step_fits(const GdnStepArgs& a) noexcept;
cudaError_t launch_gdn_step(const GdnStepArgs& a, cudaStream_t stream);

}  // namespace dense::cuda::act
