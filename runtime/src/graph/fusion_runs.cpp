#include "graph/fusion_runs.hpp"

#include "core/error.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace dense::graph {

FusionScope fusion_scope(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || std::strcmp(v, "1") == 0) return FusionScope::Devices;
    if (std::strcmp(v, "0") == 0) return FusionScope::Off;
    if (std::strcmp(v, "all") == 0) return FusionScope::All;
    throw Error(ErrorKind::Usage, std::string(name) + "='" + v + "': expected 0, 1 or all");
}

size_t fuse_runs(Graph& graph, const packs::PackManager& packs, size_t device, FusionScope scope,
                 const FusionMatch& match) {
    if (scope == FusionScope::Off) return 0;
    std::vector<Node>& nodes = graph.nodes;
    std::vector<Node> out;
    std::vector<size_t> new_index(nodes.size());  // old node index -> index in `out`
    out.reserve(nodes.size());
    size_t fused = 0;
    for (size_t i = 0; i < nodes.size();) {
        if (scope == FusionScope::All || nodes[i].key.device != DENSE_DEVICE_CPU) {
            size_t length = 0;
            Node m = match(nodes, i, length);
            if (m.key.op != 0) {
                const packs::OpCandidate* c = packs.select_op(m.key, m.call, device);
                if (c != nullptr && c->pack == nodes[i].op.pack) {
                    m.op = *c;
                    for (size_t k = i; k < i + length; ++k) new_index[k] = out.size();
                    out.push_back(std::move(m));
                    ++fused;
                    i += length;
                    continue;
                }
            }
        }
        new_index[i] = out.size();  // not merged (or the pack has no such call): the node stays
        out.push_back(std::move(nodes[i]));
        ++i;
    }
    nodes = std::move(out);
    if (fused > 0) {
        // layer_end holds node indices: the last node of each layer maps to the node now holding it.
        for (size_t& e : graph.layer_end) e = new_index.at(e);
        // Moving nodes moved their view vectors with them (the calls point into those), but rebinding
        // keeps that an invariant rather than a property of std::vector's move.
        for (Node& n : nodes) bind_call(n);
    }
    return fused;
}

bool one_token_contiguous(const ViewRef& v) {
    const dense_tensor_view& t = v.view;
    return !v.external && t.type == DENSE_TYPE_F32 && t.ne[2] == 1 && t.ne[3] == 1 && t.nb[0] == 4 &&
           t.nb[1] == 4 * t.ne[0];
}

bool is_part(const ViewRef& v, BufferId b, uint64_t offset, int64_t first, int64_t ne0, int64_t ne1) {
    return one_token_contiguous(v) && v.buffer == b && v.offset == offset + 4 * static_cast<uint64_t>(first) &&
           v.view.ne[0] == ne0 && v.view.ne[1] == ne1;
}

bool same_view(const ViewRef& a, const ViewRef& b) {
    return a.external == b.external && a.buffer == b.buffer && a.offset == b.offset &&
           a.external_ptr == b.external_ptr && std::memcmp(&a.view.ne, &b.view.ne, sizeof a.view.ne) == 0 &&
           std::memcmp(&a.view.nb, &b.view.nb, sizeof a.view.nb) == 0 && a.view.type == b.view.type;
}

bool one_place(std::initializer_list<const Node*> run) {
    const Node& head = **run.begin();
    for (const Node* n : run)
        if (n->layer != head.layer || n->phase != head.phase || n->key.device != head.key.device ||
            n->op.pack != head.op.pack)
            return false;
    return true;
}

}  // namespace dense::graph
