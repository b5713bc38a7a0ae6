// Host-side half of the chained-launch contract (launch_chain.cuh), usable from plain C++ files.
//
// A kernel launched with the programmatic attribute may start as soon as the previous KERNEL on its
// stream lets it, and its griddepcontrol.wait orders it only against that kernel. Work of another
// kind in between — a copy, a memset, a host function (the CPU rows of a row split: a copy of the
// activation out, a host function, a copy of the result back) — must not be overtaken, so the
// device API marks the stream after enqueueing such work and the next kernel on it is launched
// without the attribute: it waits for everything before it, as an ordinary launch does.
#pragma once

namespace dense::cuda {

// The last work enqueued on `stream` is not a kernel of this pack.
void break_launch_chain(void* stream) noexcept;
// Whether `stream` was marked since its last kernel launch; clears the mark.
bool take_launch_chain_break(void* stream) noexcept;

}  // namespace dense::cuda
