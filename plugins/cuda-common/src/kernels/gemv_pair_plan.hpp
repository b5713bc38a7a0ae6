// Whether a GEMV_Q_MULTI list can go out as ONE pair launch (gemv_pair.cuh), and how that launch's
// grid is shared. Plain C++ (no CUDA): the pack's launchers call it, and the host tests check it on
// any machine.
//
// A list's matrices share the activation. Per format and summation order (gemv_kernel.cuh,
// sum_order) the pack used to launch once, so a list of two formats cost two dependent launches:
// the 27B's Gated DeltaNet list (qkv and gate in Q5_K, streamed; beta and alpha, 48 rows each, in
// Q8_0) and its attention list (q in Q5_K, streamed; k and v, 1024 rows, in Q8_0), 64 extra kernels
// per token. A pair launch runs both groups in one grid: some blocks run the streamed group with the
// streamed kernel's code, the others the small group with the direct kernel's code (its K split,
// contiguous slices: gemv_q_kernel's order, read straight from global memory). Each matrix
// keeps the summation order sum_order gives it, so every output is bit for bit its own GEMV_Q's.
#pragma once

#include <algorithm>
#include <cstdint>

namespace dense::cuda {

// One matrix of a list as a pair launch sees it.
struct ListMatrixOrder {
    uint32_t type = 0;       // dense_type_id
    int64_t rows = 0;        // 0: the matrix launches nothing (left out)
    int ks = 1;              // its sum_order: warps per row tile along K
    bool strided = false;    // its sum_order: a streamed matrix
    bool direct_ok = false;  // 16-byte aligned and whole 256-element steps: readable in place by the direct code
    double bytes = 0;        // rows x row bytes
};

// The two groups of a pair launch, as indices into the list (each at most `max_per_part` matrices).
struct PairPlan {
    bool ok = false;
    int streamed[16] = {};
    int n_streamed = 0;
    int direct[16] = {};
    int n_direct = 0;
};

// The list fits one launch of the pair (streamed_type, direct_type) when every matrix with rows is
// either of streamed_type and streamed, or of direct_type, not streamed, readable in place, with the
// K split of the group's first; and both groups have 1 .. max_per_part matrices. The two types may
// be the same (a large streamed matrix beside small ones of its own format).
inline PairPlan plan_pair(const ListMatrixOrder* m, int n, uint32_t streamed_type, uint32_t direct_type, int max_per_part) {
    PairPlan plan;
    const int cap = std::min(max_per_part, 16);
    for (int i = 0; i < n; ++i) {
        const ListMatrixOrder& o = m[i];
        if (o.rows <= 0) continue;
        if (o.type == streamed_type && o.strided) {
            if (plan.n_streamed == cap) return {};
            plan.streamed[plan.n_streamed++] = i;
        } else if (o.type == direct_type && !o.strided && o.direct_ok &&
                   (plan.n_direct == 0 || o.ks == m[plan.direct[0]].ks)) {
            if (plan.n_direct == cap) return {};
            plan.direct[plan.n_direct++] = i;
        } else {
            return {};
        }
    }
    plan.ok = plan.n_streamed > 0 && plan.n_direct > 0;
    return plan;
}

// Blocks of each part. The grid is one wave of `max_blocks` resident blocks, shared by bytes (each
// part then ends at about the same time), every part at least one block and at most one per unit
// of its work (the direct part's block tiles; the streamed part's blocks of 8 warp tasks). At most
// one wave, so both parts start at once whatever their order in the grid.
struct PairGrid {
    unsigned direct_blocks = 0;
    unsigned streamed_blocks = 0;
};

inline PairGrid pair_grid(int64_t max_blocks, double streamed_bytes, int64_t streamed_units, double direct_bytes,
                          int64_t direct_units) {
    PairGrid g;
    max_blocks = std::max<int64_t>(max_blocks, 2);
    const double total = streamed_bytes + direct_bytes;
    const double share = total > 0 ? direct_bytes / total : 0.5;
    int64_t d = static_cast<int64_t>(static_cast<double>(max_blocks) * share + 0.999999);
    d = std::clamp<int64_t>(d, 1, std::max<int64_t>(direct_units, 1));
    d = std::min(d, max_blocks - 1);
    const int64_t s = std::clamp<int64_t>(max_blocks - d, 1, std::max<int64_t>(streamed_units, 1));
    g.direct_blocks = static_cast<unsigned>(d);
    g.streamed_blocks = static_cast<unsigned>(s);
    return g;
}

}  // namespace dense::cuda
