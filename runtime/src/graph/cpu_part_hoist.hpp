// Starts the CPU rows of a row split as early as their data allows.
//
// The lowering emits each split GEMV as [CPU rows, device prefix, bus chunks] in recipe order, so the
// CPU part of ffn_up would start only after ffn_gate's device nodes were enqueued, and those may wait
// for copies over the bus (exec/bus_copies.hpp): meanwhile the CPU workers, done with ffn_gate, idle.
// Measured on the H200 at 8 GiB with half the host rows over the bus (docs/perf-notes.md, session 9):
// workers busy 69 % of the step. Moving each CPU part up, past every node it does not depend on and
// that does not depend on it, queues ffn_up's rows behind ffn_gate's at once.
#pragma once

#include "graph/graph.hpp"

namespace dense::graph {

// Moves every split_cpu_part node up past earlier nodes of the same layer and phase that neither
// write what it reads nor read or write what it writes (byte ranges of graph buffers), stopping at
// another CPU part (the workers take jobs in order). Layer ends stay valid: nodes move only within
// their layer. Results are unchanged: only independent nodes swap.
void hoist_cpu_parts(Graph& g);

}  // namespace dense::graph
