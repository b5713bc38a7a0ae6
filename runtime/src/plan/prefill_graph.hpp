// Batched prefill: whether a session runs a prompt T tokens per step (graph::GraphOptions::tokens)
// and what that costs in memory. Decided here, once, so that a plan made before the session and the
// session itself agree on the graph and on its bill.
//
// A batched step reads every GEMV weight once for T tokens (GEMM_Q, dense_abi.h) instead of T
// times, which is what makes a prompt faster than generating the same number of tokens. Its own
// buffers (T columns of every activation, T token / position / n_kv words) sit in one extra
// allocation, "prefill buffers"; its KV caches and recurrent state banks are the token step's own.
#pragma once

#include "graph/graph_builder.hpp"
#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "packs/pack_manager.hpp"
#include "plan/buffer_arena.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace dense::plan {

inline constexpr const char* kPrefillBuffersLabel = "prefill buffers";

// Tokens per batched step when the run config does not say (`prefill_chunk: auto`): 512 on a GPU;
// 1 (token by token) on the CPU, whose fast pack has no GEMM_Q, so a batched step would run
// cpu-ref's reference loop instead. Why 512 (docs/perf-notes.md, sessions 32-33, H100, 27B, GEMM_Q in
// free order): pp512 1,215 / 1,496 / 1,669 tok/s at 64 / 128 / 256 for +0 / +131 / +394 MiB of peak
// VRAM (session 32); with the fast terms of session 33, 2,113 at 256 against 2,286 at 512 (pp2048:
// 1,971 against 2,121), the rest of a step (norms, conv, attention launches) paid once per 512
// tokens, for +524 MiB of peak VRAM against 256 on the 27B at context 33,410 then, most of it the
// attention's partition workspace (sized for the longest history at every token of the step); since
// session 34 the CUDA packs run a long step's attention in token groups sharing at most 128 MiB of
// partials, so 512 costs about the prompt step's own activations more than 256 (~137 MiB). (With the
// exact GEMM, session 15, the gain past 64 was a few percent: 759 / 790 / 798.) A
// plan over budget halves it first (plan_and_judge), so a small card keeps its weights on the GPU.
int64_t default_prefill_chunk(dense_device_kind kind) noexcept;
// The default where the weights are split onto the CPU: 64 on a GPU. There the batched step's scratch
// comes out of the VRAM the weights would use, so a longer step moves rows to the CPU and slows every
// token: at --vram-budget 7880MiB (share 0.5, H200, session 17) 256 gave pp512 939 tok/s against
// 336-372 at 64, and tg16 9.35 against 10.1-10.3. `prefill_chunk: 256` (or 512) asks for it.
int64_t default_split_prefill_chunk(dense_device_kind kind) noexcept;
// With `auto`, a plan over budget halves the default chunk down to this before anything else gives
// way (plan_and_judge): a smaller batched step's scratch may be what keeps every weight on the GPU.
int64_t smallest_auto_prefill_chunk(dense_device_kind kind) noexcept;

// The chunk a session uses: `requested` (< 0: the default for `kind`, and for a split), or 1 where the session
// cannot batch — a row split without bus staging (plan/bus_staging.hpp: only where the device cannot
// copy beside the step): a batched step streams the host rows through the staging
// (graph/step_lowering.cpp), and the CPU would read them once per token — with the reason in *why.
int64_t prefill_chunk_for(int64_t requested, dense_device_kind kind, bool split, bool bus_staging, std::string* why);

// The batched graph of `tokens` tokens built with `go` (its tokens set here), or nullopt (reason in
// *why) when a pack of `device` lacks one of its ops (GEMM_Q for some weight format, say): then the
// session prefills token by token. Without `packs` (a device that is not here) the graph is assumed
// to run, as dense-rt's CUDA packs run it.
std::optional<graph::Graph> batched_graph(const model::BoundModel& model, const model::ModelSpec& spec,
                                          graph::GraphOptions go, int64_t tokens, const packs::PackManager* packs,
                                          std::optional<size_t> device, std::string* why);

// Whether a buffer of a batched graph is the token step's (KV cache, state bank): the session points
// it at the token step's buffer of the same name instead of allocating it again.
bool shared_with_token_step(graph::BufferKind kind) noexcept;

// The layout of the buffers a batched graph owns (shared ones take no bytes).
BufferArena prefill_arena(const graph::Graph& batched, const model::BoundModel& model);

}  // namespace dense::plan
