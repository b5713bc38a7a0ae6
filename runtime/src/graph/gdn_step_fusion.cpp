#include "graph/gdn_step_fusion.hpp"

#include "graph/fusion_runs.hpp"

#include <dense/sdk/pack.hpp>

#include <vector>

namespace dense::graph {
namespace {

// The four nodes from `i` on as one GDN_STEP node, or a node with key.op == 0 when they are not the
// pattern of the header.
Node merged(const std::vector<Node>& nodes, size_t i, size_t& length) {
    length = 4;
    if (i + length > nodes.size()) return {};
    const Node &conv = nodes[i], &gates = nodes[i + 1], &l2 = nodes[i + 2], &decode = nodes[i + 3];
    if (conv.key.op != DENSE_OP_CONV1D_CAUSAL || gates.key.op != DENSE_OP_GDN_GATES || l2.key.op != DENSE_OP_L2_NORM ||
        decode.key.op != DENSE_OP_GDN_DECODE || !one_place({&conv, &gates, &l2, &decode}))
        return {};
    if (conv.src.size() != 3 || conv.dst.size() != 2 || gates.src.size() != 4 || gates.dst.size() != 2 ||
        l2.src.size() != 1 || l2.dst.size() != 1 || decode.src.size() != 6 || decode.dst.size() != 2)
        return {};
    // One token: the conv input and output are {C, 1}.
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
    dense_conv_params cp{};
    dense_norm_params np{};
    dense_gdn_params gp{};
    if (!params_as(conv, cp) || !params_as(l2, np) || !params_as(decode, gp)) return {};
    auto p = sdk::make_struct<dense_gdn_step_params>();
    p.scale = gp.scale;
    p.l2_eps = np.eps;
    p.apply_silu = cp.apply_silu;
    return fused_node(conv, DENSE_OP_GDN_STEP,
                      label_prefix(conv) + " gdn_step(conv1d_causal+silu, gdn_gates, l2_norm, gated_delta_rule)",
                      {{&conv, 0}, {&conv, 1}, {&conv, 2}, {&gates, 0}, {&gates, 1}, {&gates, 2}, {&gates, 3}, {&decode, 5}},
                      {{&conv, 0}, {&conv, 1}, {&gates, 0}, {&gates, 1}, {&decode, 0}, {&decode, 1}}, p);
}

}  // namespace

size_t fuse_gdn_steps(Graph& graph, const packs::PackManager& packs, size_t device) {
    return fuse_runs(graph, packs, device, fusion_scope("DENSE_GDN_STEP_FUSION"), merged);
}

}  // namespace dense::graph
