// The shared part of the passes that merge a run of consecutive nodes into one call of a pack
// (graph/gemv_lists.hpp's GEMV_Q_MULTI lists, and the fused ops of graph/gdn_step_fusion.hpp and
// graph/attn_prep_fusion.hpp): the A/B switch, the run replacement, and the view comparisons and node
// building their patterns need.
#pragma once

#include "graph/graph.hpp"
#include "packs/pack_manager.hpp"

#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace dense::graph {

// Where a pass merges: nowhere, device nodes (the default: on the CPU a call has no launch to save),
// or CPU nodes too (tests put the passes on cpu-ref that way).
enum class FusionScope { Off, Devices, All };

// The scope the environment variable `name` asks for: unset or "1" Devices, "0" Off, "all" All;
// anything else is a Usage error naming the variable.
FusionScope fusion_scope(const char* name);

// The node made from the run of nodes starting at index i, with the run's length in `length` (>= 2), or
// a node with key.op == 0 when no run starts there. Only called where node i is on a device the scope
// merges.
using FusionMatch = std::function<Node(const std::vector<Node>& nodes, size_t i, size_t& length)>;

// Replaces every run that `match` merges, when the pack that runs the run's first node runs the merged
// call too (select_op; otherwise the run's nodes stay as they are), by the merged node; keeps
// layer_end pointing at each layer's last node and rebinds every call. `graph` must be resolved with
// ops selected. Returns the number of merged nodes.
size_t fuse_runs(Graph& graph, const packs::PackManager& packs, size_t device, FusionScope scope,
                 const FusionMatch& match);

// A contiguous F32 view of one token: ne[2] = ne[3] = 1 and rows back to back.
bool one_token_contiguous(const ViewRef& v);

// `v` is the contiguous F32 part {ne0, ne1} of buffer `b` starting `first` floats after byte `offset`.
bool is_part(const ViewRef& v, BufferId b, uint64_t offset, int64_t first, int64_t ne0, int64_t ne1);

// The same tensor: buffer (or external pointer), offset, type, shape and strides.
bool same_view(const ViewRef& a, const ViewRef& b);

// Every node of `run` is in the first one's layer and phase, on its device, run by its pack.
bool one_place(std::initializer_list<const Node*> run);

// Source or destination `index` of a node of the run.
struct ViewOf {
    const Node* node;
    size_t index;
};

// The merged node: in `head`'s layer, phase and device, keyed `op` (no weight or activation type),
// its sources the run's sources and its destinations the run's destinations named in order (views and
// resolved views), `params` (made with sdk::make_struct) as its params, the call bound.
template <class P>
Node fused_node(const Node& head, dense_op_kind op, std::string label, std::initializer_list<ViewOf> src,
                std::initializer_list<ViewOf> dst, const P& params) {
    Node m;
    m.label = std::move(label);
    m.layer = head.layer;
    m.phase = head.phase;
    m.key = {op, DENSE_TYPE_NONE, DENSE_TYPE_NONE, head.key.device};
    for (const ViewOf& v : src) {
        m.src.push_back(v.node->src[v.index]);
        m.src_views.push_back(v.node->src_views[v.index]);
    }
    for (const ViewOf& v : dst) {
        m.dst.push_back(v.node->dst[v.index]);
        m.dst_views.push_back(v.node->dst_views[v.index]);
    }
    m.params.resize(sizeof(P));
    std::memcpy(m.params.data(), &params, sizeof(P));
    bind_call(m);
    return m;
}

// The prefix of a node's label up to its first space ("blk.3"), for the merged node's label.
inline std::string label_prefix(const Node& n) { return n.label.substr(0, n.label.find(' ')); }

// The node's params as P when it has at least sizeof(P) bytes of them.
template <class P>
bool params_as(const Node& n, P& out) {
    if (n.params.size() < sizeof(P)) return false;
    std::memcpy(&out, n.params.data(), sizeof(P));
    return true;
}

}  // namespace dense::graph
