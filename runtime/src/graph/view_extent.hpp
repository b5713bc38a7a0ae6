// The bytes a graph view may touch, for the passes that reorder or merge nodes (cpu_part_hoist,
// gemv_lists) and for the profile's weight bytes: from the view's offset to its farthest stride reach.
#pragma once

#include "graph/graph.hpp"

#include <algorithm>
#include <cstdint>

namespace dense::graph {

// max over the dimensions of ne[d] * nb[d]: the bytes from the view's start it may read or write.
inline uint64_t view_reach(const dense_tensor_view& v) {
    uint64_t reach = 0;
    for (int d = 0; d < 4; ++d) reach = std::max(reach, static_cast<uint64_t>(v.ne[d]) * static_cast<uint64_t>(v.nb[d]));
    return reach;
}

// [begin, end) of a graph buffer (meaningless for external views: weights, never written).
struct Extent {
    BufferId buffer;
    uint64_t begin, end;
};

inline Extent extent_of(const ViewRef& v) {
    return {v.buffer, v.offset, v.offset + view_reach(v.view)};
}

inline bool overlap(const Extent& a, const Extent& b) {
    return a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
}

}  // namespace dense::graph
