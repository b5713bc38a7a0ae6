#include "graph/cpu_part_hoist.hpp"

#include "graph/view_extent.hpp"

#include <algorithm>
#include <vector>

namespace dense::graph {

namespace {

// The extents of a node's graph-buffer views (weights, which live outside the graph's buffers and
// are never written, are left out).
std::vector<Extent> extents(const std::vector<ViewRef>& views) {
    std::vector<Extent> out;
    for (const auto& v : views)
        if (!v.external) out.push_back(extent_of(v));
    return out;
}

bool any_overlap(const std::vector<Extent>& a, const std::vector<Extent>& b) {
    for (const auto& x : a)
        for (const auto& y : b)
            if (overlap(x, y)) return true;
    return false;
}

bool independent(const Node& earlier, const Node& cpu) {
    const auto er = extents(earlier.src), ew = extents(earlier.dst);
    const auto cr = extents(cpu.src), cw = extents(cpu.dst);
    return !any_overlap(ew, cr) && !any_overlap(ew, cw) && !any_overlap(er, cw);
}

}  // namespace

void hoist_cpu_parts(Graph& g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!g.nodes[i].split_cpu_part) continue;
        size_t to = i;
        while (to > 0) {
            const Node& prev = g.nodes[to - 1];
            if (prev.split_cpu_part || prev.layer != g.nodes[i].layer || prev.phase != g.nodes[i].phase ||
                !independent(prev, g.nodes[i]))
                break;
            --to;
        }
        if (to < i) std::rotate(g.nodes.begin() + static_cast<std::ptrdiff_t>(to), g.nodes.begin() + static_cast<std::ptrdiff_t>(i),
                                g.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
}

}  // namespace dense::graph
