#include "graph/gdn_step_fusion.hpp"

#include "core/error.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace dense::graph {
namespace {

enum class Scope { Off, Devices, All };

Scope scope() {
    const char* v = std::getenv("DENSE_GDN_STEP_FUSION");
    if (v == nullptr || std::strcmp(v, "1") == 0) return Scope::Devices;
    if (std::strcmp(v, "0") == 0) return Scope::Off;
    if (std::strcmp(v, "all") == 0) return Scope::All;
    throw Error(ErrorKind::Usage, "DENSE_GDN_STEP_FUSION='" + std::string(v) + "': expected 0, 1 or all");
}

// A contiguous F32 view of one token: ne[2] = ne[3] = 1 and rows back to back.
bool one_token_contiguous(const ViewRef& v) {
    const dense_tensor_view& t = v.view;
    return !v.external && t.type == DENSE_TYPE_F32 && t.ne[2] == 1 && t.ne[3] == 1 && t.nb[0] == 4 &&
           t.nb[1] == 4 * t.ne[0];
}

// `v` is the contiguous F32 part {ne0, ne1} of buffer `b` starting `first` floats after byte `offset`.
bool is_part(const ViewRef& v, BufferId b, uint64_t offset, int64_t first, int64_t ne0, int64_t ne1) {
    return one_token_contiguous(v) && v.buffer == b && v.offset == offset + 4 * static_cast<uint64_t>(first) &&
           v.view.ne[0] == ne0 && v.view.ne[1] == ne1;
}

bool same_view(const ViewRef& a, const ViewRef& b) {
    return a.external == b.external && a.buffer == b.buffer && a.offset == b.offset &&
           a.external_ptr == b.external_ptr && std::memcmp(&a.view.ne, &b.view.ne, sizeof a.view.ne) == 0 &&
           std::memcmp(&a.view.nb, &b.view.nb, sizeof a.view.nb) == 0 && a.view.type == b.view.type;
}

// The four nodes from `i` on, as one GDN_STEP node, or nothing (node.key.op == 0) when they are not
// the pattern of the header.
Node merged(const std::vector<Node>& nodes, size_t i, Scope s) {
    if (i + 4 > nodes.size()) return {};
    const Node &conv = nodes[i], &gates = nodes[i + 1], &l2 = nodes[i + 2], &decode = nodes[i + 3];
    if (conv.key.op != DENSE_OP_CONV1D_CAUSAL || gates.key.op != DENSE_OP_GDN_GATES || l2.key.op != DENSE_OP_L2_NORM ||
        decode.key.op != DENSE_OP_GDN_DECODE)
        return {};
    if (s != Scope::All && conv.key.device == DENSE_DEVICE_CPU) return {};
    for (const Node* n : {&gates, &l2, &decode})
        if (n->layer != conv.layer || n->phase != conv.phase || n->key.device != conv.key.device ||
            n->op.pack != conv.op.pack)
            return {};
    if (conv.src.size() != 3 || conv.dst.size() != 2 || gates.src.size() != 4 || gates.dst.size() != 2 ||
        l2.src.size() != 1 || l2.dst.size() != 1 || decode.src.size() != 6 || decode.dst.size() != 2)
        return {};
    // One token: the conv input is {C, 1}, the decode's v {dv, Hv, 1}.
    const ViewRef& y = conv.dst[0];
    if (!one_token_contiguous(conv.src[0]) || !one_token_contiguous(y) || y.view.ne[1] != 1 ||
        conv.src[0].view.ne[1] != 1)
        return {};
    const ViewRef& q = decode.src[0];
    const int64_t dk = q.view.ne[0], hk = q.view.ne[1];
    const int64_t dv = decode.src[2].view.ne[0], hv = decode.src[2].view.ne[1];
    const int64_t key_dim = dk * hk;
    if (y.view.ne[0] != 2 * key_dim + dv * hv) return {};
    // L2 in place over q and k; the decode reads y's parts and the gates' outputs.
    if (!is_part(l2.src[0], y.buffer, y.offset, 0, dk, 2 * hk) || !same_view(l2.dst[0], l2.src[0]) ||
        !is_part(q, y.buffer, y.offset, 0, dk, hk) || !is_part(decode.src[1], y.buffer, y.offset, key_dim, dk, hk) ||
        !is_part(decode.src[2], y.buffer, y.offset, 2 * key_dim, dv, hv) || !same_view(decode.src[3], gates.dst[0]) ||
        !same_view(decode.src[4], gates.dst[1]))
        return {};
    if (conv.params.size() < sizeof(dense_conv_params) || l2.params.size() < sizeof(dense_norm_params) ||
        decode.params.size() < sizeof(dense_gdn_params))
        return {};
    dense_conv_params cp{};
    dense_norm_params np{};
    dense_gdn_params gp{};
    std::memcpy(&cp, conv.params.data(), sizeof cp);
    std::memcpy(&np, l2.params.data(), sizeof np);
    std::memcpy(&gp, decode.params.data(), sizeof gp);
    dense_gdn_step_params p{};
    p.hdr = {static_cast<uint16_t>(DENSE_ABI_MAJOR), static_cast<uint16_t>(DENSE_ABI_MINOR),
             static_cast<uint32_t>(sizeof p)};
    p.scale = gp.scale;
    p.l2_eps = np.eps;
    p.apply_silu = cp.apply_silu;

    Node m;
    m.label = conv.label.substr(0, conv.label.find(' ')) + " gdn_step(conv1d_causal+silu, gdn_gates, l2_norm, " +
              "gated_delta_rule)";
    m.layer = conv.layer;
    m.phase = conv.phase;
    m.key = {DENSE_OP_GDN_STEP, DENSE_TYPE_NONE, DENSE_TYPE_NONE, conv.key.device};
    m.src = {conv.src[0], conv.src[1], conv.src[2], gates.src[0], gates.src[1], gates.src[2], gates.src[3], decode.src[5]};
    m.src_views = {conv.src_views[0], conv.src_views[1], conv.src_views[2], gates.src_views[0], gates.src_views[1],
                   gates.src_views[2], gates.src_views[3], decode.src_views[5]};
    m.dst = {conv.dst[0], conv.dst[1], gates.dst[0], gates.dst[1], decode.dst[0], decode.dst[1]};
    m.dst_views = {conv.dst_views[0], conv.dst_views[1], gates.dst_views[0], gates.dst_views[1], decode.dst_views[0],
                   decode.dst_views[1]};
    m.params.resize(sizeof p);
    std::memcpy(m.params.data(), &p, sizeof p);
    bind_call(m);
    return m;
}

}  // namespace

size_t fuse_gdn_steps(Graph& graph, const packs::PackManager& packs, size_t device) {
    const Scope s = scope();
    if (s == Scope::Off) return 0;
    std::vector<Node>& nodes = graph.nodes;
    std::vector<Node> out;
    std::vector<size_t> new_index(nodes.size());  // old node index -> index in `out`
    out.reserve(nodes.size());
    size_t fused = 0;
    for (size_t i = 0; i < nodes.size();) {
        Node m = merged(nodes, i, s);
        if (m.key.op == DENSE_OP_GDN_STEP) {
            const packs::OpCandidate* c = packs.select_op(m.key, m.call, device);
            if (c != nullptr && c->pack == nodes[i].op.pack) {
                m.op = *c;
                for (size_t k = i; k < i + 4; ++k) new_index[k] = out.size();
                out.push_back(std::move(m));
                ++fused;
                i += 4;
                continue;
            }
        }
        new_index[i] = out.size();
        out.push_back(std::move(nodes[i]));
        ++i;
    }
    if (fused == 0) {
        nodes = std::move(out);
        return 0;
    }
    for (size_t& e : graph.layer_end) e = new_index.at(e);
    nodes = std::move(out);
    for (Node& n : nodes) bind_call(n);  // as merge_gemv_lists: the calls point into the nodes' views
    return fused;
}

}  // namespace dense::graph
