#include "graph/graph.hpp"

#include "core/error.hpp"

namespace dense::graph {

void Graph::resolve(const std::vector<void*>& base) {
    if (base.size() != buffers.size()) throw Error(ErrorKind::Internal, "graph resolve: buffer count mismatch");
    auto fill = [&](const ViewRef& ref) {
        dense_tensor_view v = ref.view;
        if (ref.external) {
            v.data = const_cast<void*>(ref.external_ptr);  // weights are read-only; the ABI view is not const
        } else {
            v.data = static_cast<std::byte*>(base[ref.buffer]) + ref.offset;
        }
        return v;
    };
    for (Node& n : nodes) {
        n.src_views.clear();
        n.dst_views.clear();
        for (const auto& r : n.src) n.src_views.push_back(fill(r));
        for (const auto& r : n.dst) n.dst_views.push_back(fill(r));
        bind_call(n);
    }
}

void bind_call(Node& n) {
    n.call = dense_op_call{};
    n.call.hdr = {static_cast<uint16_t>(DENSE_ABI_MAJOR), static_cast<uint16_t>(DENSE_ABI_MINOR),
                  static_cast<uint32_t>(sizeof(dense_op_call))};
    n.call.op_kind = n.key.op;
    n.call.n_src = static_cast<uint32_t>(n.src_views.size());
    n.call.src = n.src_views.data();
    n.call.n_dst = static_cast<uint32_t>(n.dst_views.size());
    n.call.dst = n.dst_views.data();
    n.call.params = n.params.empty() ? nullptr : n.params.data();
}

}  // namespace dense::graph
