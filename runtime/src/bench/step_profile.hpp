// Where a step's time goes: `dense-rt bench --profile N` runs N generated tokens node by node
// with a timing mark after every node (exec::Session::profile_step) and sums the time per role
// ("ffn_down gemv_q(iq4_xs, q8_32, cuda)": one row for the same op on the same tensor role of every
// layer) and per op kind. The GEMV rows also get their achieved weight bandwidth.
//
// The profiled step runs uncaptured and with a mark between kernels, so it is slower than the
// captured, chained step the tg rows measure; the table says how much (its step total vs the tg
// step time), which is itself the cost of launch gaps the graph and chaining hide. With prompt rows
// and batched prefill it also profiles prompt steps of prefill_chunk() tokens the same way.
#pragma once

#include "exec/session.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dense::bench {

struct ProfileGroup {
    std::string name;        // role and op, or op kind
    int nodes_per_step = 0;
    double ms_per_step = 0;  // mean over the profiled steps
    uint64_t weight_bytes_per_step = 0;
};

struct StepProfile {
    int steps = 0;
    int64_t tokens_per_step = 1;  // > 1: batched prompt steps (profile_prefill)
    int64_t depth = 0;
    double ms_per_step = 0;  // sum of every node's time (mean over steps)
    int nodes_per_step = 0;
    std::vector<ProfileGroup> by_role;  // largest first
    std::vector<ProfileGroup> by_kind;  // largest first
};

// Resets the session, moves it to `depth` (as the model bench does), decodes one untimed token, then
// profiles `steps` generated tokens (greedy on the host, as the tg rows).
StepProfile profile_decode(exec::Session& session, int steps, int64_t depth);

// Resets the session, moves it to `depth`, then profiles `steps` batched prompt steps of
// session.prefill_chunk() tokens each (the bench's prompt ids). Needs prefill_chunk() > 1.
StepProfile profile_prefill(exec::Session& session, int steps, int64_t depth);

// A markdown section; `tg_ms_per_token` (0 = unknown; for a prompt profile: the pp rows' ms per
// prompt token) and the read ceiling (GB/s, 0 = unknown) put the numbers in context.
std::string to_markdown(const StepProfile& profile, double tg_ms_per_token, double read_ceiling_gbs);

// The role of a node label: "blk.12.ffn_down gemv_q(...)" -> "ffn_down gemv_q(...)".
std::string role_of(const std::string& label);

}  // namespace dense::bench
