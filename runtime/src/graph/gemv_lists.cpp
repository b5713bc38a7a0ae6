#include "graph/gemv_lists.hpp"

#include "graph/fusion_runs.hpp"
#include "graph/view_extent.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace dense::graph {
namespace {

constexpr size_t kMaxList = 16;  // GEMV_Q_MULTI's limit (dense_abi.h)

// A GEMV_Q that could join a list: it reads an activation buffer (src[1]) and writes one output.
bool candidate(const Node& n) {
    return n.key.op == DENSE_OP_GEMV_Q && n.params.empty() && !n.split_cpu_part && n.bus_copy.bytes == 0 &&
           n.src.size() == 2 && n.dst.size() == 1 && n.src[0].external && !n.src[1].external && !n.dst[0].external &&
           n.src_views.size() == 2 && n.dst_views.size() == 1;
}

// Whether `next` may join the list that starts with nodes[first .. last].
bool joins(const std::vector<Node>& nodes, size_t first, size_t last, const Node& next) {
    const Node& head = nodes[first];
    if (!candidate(next) || next.layer != head.layer || next.phase != head.phase || next.key.act != head.key.act ||
        next.key.device != head.key.device || next.op.pack != head.op.pack)
        return false;
    const ViewRef& x = head.src[1];
    const ViewRef& nx = next.src[1];
    if (nx.buffer != x.buffer || nx.offset != x.offset || std::memcmp(nx.view.ne, x.view.ne, sizeof x.view.ne) != 0 ||
        nx.view.type != x.view.type)
        return false;
    const Extent y = extent_of(next.dst[0]);
    if (overlap(y, extent_of(x))) return false;
    for (size_t i = first; i <= last; ++i)
        if (overlap(y, extent_of(nodes[i].dst[0]))) return false;
    return true;
}

// The label of a merged node: the first GEMV's label, then the others' without their layer prefix
// ("blk.3.attn_qkv gemv + attn_gate gemv + ..."), so per-role profiles still group across layers.
std::string list_label(const std::vector<Node>& nodes, size_t first, size_t end) {
    std::string label = nodes[first].label;
    const std::string prefix = nodes[first].layer >= 0 ? "blk." + std::to_string(nodes[first].layer) + "." : "";
    for (size_t i = first + 1; i < end; ++i) {
        std::string part = nodes[i].label;
        if (!prefix.empty() && part.rfind(prefix, 0) == 0) part = part.substr(prefix.size());
        label += " + " + part;
    }
    return label;
}

Node merged(const std::vector<Node>& nodes, size_t first, size_t end) {
    const Node& head = nodes[first];
    Node m;
    m.label = list_label(nodes, first, end);
    m.layer = head.layer;
    m.phase = head.phase;
    m.key = {DENSE_OP_GEMV_Q_MULTI, DENSE_TYPE_NONE, head.key.act, head.key.device};
    for (size_t i = first; i < end; ++i) {
        m.src.push_back(nodes[i].src[0]);
        m.src_views.push_back(nodes[i].src_views[0]);
        m.dst.push_back(nodes[i].dst[0]);
        m.dst_views.push_back(nodes[i].dst_views[0]);
    }
    m.src.push_back(head.src[1]);
    m.src_views.push_back(head.src_views[1]);
    bind_call(m);
    return m;
}

}  // namespace

size_t merge_gemv_lists(Graph& graph, const packs::PackManager& packs, size_t device) {
    // The longest run of up to kMaxList GEMVs from node i that join the first: a list when it has two.
    const auto list_at = [](const std::vector<Node>& nodes, size_t i, size_t& length) -> Node {
        if (!candidate(nodes[i])) return {};
        size_t end = i + 1;
        while (end < nodes.size() && end - i < kMaxList && joins(nodes, i, end - 1, nodes[end])) ++end;
        if (end - i < 2) return {};
        length = end - i;
        return merged(nodes, i, end);
    };
    return fuse_runs(graph, packs, device, fusion_scope("DENSE_GEMV_LISTS"), list_at);
}

}  // namespace dense::graph
