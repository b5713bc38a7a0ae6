#include "graph/attn_prep_fusion.hpp"

#include "graph/fusion_runs.hpp"

#include <dense/sdk/pack.hpp>

#include <cstring>
#include <vector>

namespace dense::graph {
namespace {

// A plain RMS_NORM (no quantized copy) of `rows` heads of d: src {x, w}, dst {y}.
bool head_norm(const Node& n) {
    return n.key.op == DENSE_OP_RMS_NORM && n.key.act == DENSE_TYPE_NONE && n.src.size() == 2 && n.dst.size() == 1 &&
           n.src[1].external;
}

// ROPE of `x` in place, one token.
bool rope_in_place(const Node& n, const ViewRef& x) {
    return n.key.op == DENSE_OP_ROPE && n.src.size() == 2 && n.dst.size() == 1 && same_view(n.src[0], x) &&
           same_view(n.dst[0], x) && n.src[1].view.ne[0] == 1;
}

// The five nodes from `i` on as one ATTN_PREP node, or a node with key.op == 0 when they are not the
// pattern of the header.
Node merged(const std::vector<Node>& nodes, size_t i, size_t& length) {
    length = 5;
    if (i + length > nodes.size()) return {};
    const Node &norm_q = nodes[i], &norm_k = nodes[i + 1], &rope_q = nodes[i + 2], &rope_k = nodes[i + 3],
               &store = nodes[i + 4];
    if (!head_norm(norm_q) || !head_norm(norm_k) || store.key.op != DENSE_OP_KV_STORE ||
        !one_place({&norm_q, &norm_k, &rope_q, &rope_k, &store}))
        return {};
    const ViewRef &q = norm_q.dst[0], &k = norm_k.dst[0];
    if (!one_token_contiguous(q) || !one_token_contiguous(k) || !rope_in_place(rope_q, q) || !rope_in_place(rope_k, k) ||
        !same_view(rope_k.src[1], rope_q.src[1]))
        return {};
    if (store.src.size() != 3 || store.dst.size() != 2 || !same_view(store.src[0], k) ||
        !same_view(store.src[2], rope_q.src[1]) || !one_token_contiguous(store.src[1]))
        return {};
    dense_norm_params nq{}, nk{};
    dense_rope_params rq{}, rk{};
    if (!params_as(norm_q, nq) || !params_as(norm_k, nk) || !params_as(rope_q, rq) || !params_as(rope_k, rk)) return {};
    if (std::memcmp(&nq.eps, &nk.eps, sizeof nq.eps) != 0 || rq.n_rot != rk.n_rot || rq.mode != rk.mode ||
        std::memcmp(&rq.freq_base, &rk.freq_base, sizeof rq.freq_base) != 0 ||
        std::memcmp(&rq.freq_scale, &rk.freq_scale, sizeof rq.freq_scale) != 0)
        return {};
    auto p = sdk::make_struct<dense_attn_prep_params>();
    p.eps = nq.eps;
    p.n_rot = rq.n_rot;
    p.mode = rq.mode;
    p.freq_base = rq.freq_base;
    p.freq_scale = rq.freq_scale;
    return fused_node(norm_q, DENSE_OP_ATTN_PREP, label_prefix(norm_q) + " attn_prep(rms_norm q and k heads, rope, kv_store)",
                      {{&norm_q, 0}, {&norm_k, 0}, {&store, 1}, {&norm_q, 1}, {&norm_k, 1}, {&rope_q, 1}},
                      {{&norm_q, 0}, {&norm_k, 0}, {&store, 0}, {&store, 1}}, p);
}

}  // namespace

size_t fuse_attn_preps(Graph& graph, const packs::PackManager& packs, size_t device) {
    return fuse_runs(graph, packs, device, fusion_scope("DENSE_ATTN_PREP_FUSION"), merged);
}

}  // namespace dense::graph
