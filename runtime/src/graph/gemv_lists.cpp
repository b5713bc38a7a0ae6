#include "graph/gemv_lists.hpp"

#include "core/error.hpp"
#include "graph/view_extent.hpp"


#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace dense::graph {
namespace {

constexpr size_t kMaxList = 16;  // GEMV_Q_MULTI's limit (dense_abi.h)

enum class Scope { Off, Devices, All };

Scope scope() {
    const char* v = std::getenv("DENSE_GEMV_LISTS");
    if (v == nullptr || std::strcmp(v, "1") == 0) return Scope::Devices;
    if (std::strcmp(v, "0") == 0) return Scope::Off;
    if (std::strcmp(v, "all") == 0) return Scope::All;
    throw Error(ErrorKind::Usage, "DENSE_GEMV_LISTS='" + std::string(v) + "': expected 0, 1 or all");
}

// A GEMV_Q that could join a list: it reads an activation buffer (src[1]) and writes one output.
bool candidate(const Node& n, Scope s) {
    if (s != Scope::All && n.key.device == DENSE_DEVICE_CPU) return false;
    return n.key.op == DENSE_OP_GEMV_Q && n.params.empty() && !n.split_cpu_part && n.bus_copy.bytes == 0 &&
           n.src.size() == 2 && n.dst.size() == 1 && n.src[0].external && !n.src[1].external && !n.dst[0].external &&
           n.src_views.size() == 2 && n.dst_views.size() == 1;
}

// Whether `next` may join the list that starts with nodes[first .. last].
bool joins(const std::vector<Node>& nodes, size_t first, size_t last, const Node& next, Scope s) {
    const Node& head = nodes[first];
    if (!candidate(next, s) || next.layer != head.layer || next.phase != head.phase || next.key.act != head.key.act ||
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
    const Scope s = scope();
    if (s == Scope::Off) return 0;
    std::vector<Node>& nodes = graph.nodes;
    std::vector<Node> out;
    std::vector<size_t> new_index(nodes.size());  // old node index -> index in `out`
    out.reserve(nodes.size());
    size_t lists = 0;
    for (size_t i = 0; i < nodes.size();) {
        size_t end = i + 1;
        if (candidate(nodes[i], s))
            while (end < nodes.size() && end - i < kMaxList && joins(nodes, i, end - 1, nodes[end], s)) ++end;
        if (end - i >= 2) {
            Node m = merged(nodes, i, end);
            const packs::OpCandidate* c = packs.select_op(m.key, m.call, device);
            if (c != nullptr && c->pack == nodes[i].op.pack) {
                m.op = *c;
                for (size_t k = i; k < end; ++k) new_index[k] = out.size();
                out.push_back(std::move(m));
                ++lists;
                i = end;
                continue;
            }
            end = i + 1;  // the pack has no list GEMV for these: keep them one by one
        }
        new_index[i] = out.size();
        out.push_back(std::move(nodes[i]));
        i = end;
    }
    if (lists == 0) {
        nodes = std::move(out);
        return 0;
    }
    // layer_end holds node indices: the last node of each layer maps to the node now holding it.
    for (size_t& e : graph.layer_end) e = new_index.at(e);
    nodes = std::move(out);
    // Moving nodes moved their view vectors with them (the calls point into those), but rebinding
    // keeps that an invariant rather than a property of std::vector's move.
    for (Node& n : nodes) bind_call(n);
    return lists;
}

}  // namespace dense::graph
