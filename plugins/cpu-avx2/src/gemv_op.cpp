#include "gemv_op.hpp"

#include <cstring>

namespace dense::cpuavx2 {
namespace {

std::string shape(const dense_tensor_view& v) {
    return "{" + std::to_string(v.ne[0]) + ", " + std::to_string(v.ne[1]) + ", " + std::to_string(v.ne[2]) + ", " +
           std::to_string(v.ne[3]) + "}";
}

bool accumulates(const dense_op_call& c) {
    if (c.params == nullptr) return false;
    dense_abi_header h;
    std::memcpy(&h, c.params, sizeof h);
    if (h.struct_size < offsetof(dense_gemv_params, accumulate) + sizeof(uint32_t)) return false;
    return static_cast<const dense_gemv_params*>(c.params)->accumulate != 0;
}

}  // namespace

std::string check_gemv(const GemvFormat& f, const dense_op_call& c) {
    if (c.n_src != 2 || c.n_dst != 1 || c.src == nullptr || c.dst == nullptr) return "expects 2 sources and 1 destination";
    const dense_tensor_view &w = c.src[0], &x = c.src[1], &y = c.dst[0];
    for (const dense_tensor_view* v : {&w, &x, &y})
        if (v->device_kind != DENSE_DEVICE_CPU || v->data == nullptr) return "every view must be CPU memory";
    if (w.type != f.weight || x.type != DENSE_TYPE_Q8_32 || y.type != DENSE_TYPE_F32) return "types do not match the op";
    const int64_t in = w.ne[0], rows = w.ne[1];
    if (in <= 0 || rows <= 0 || in % f.block_elements != 0 || in % 32 != 0 || w.ne[2] != 1 || w.ne[3] != 1)
        return "weight " + shape(w) + " is not a matrix of whole blocks";
    if (w.nb[1] != in / f.block_elements * f.block_bytes) return "weight rows are not contiguous";
    if (x.ne[0] != in || x.ne[1] != 1 || x.ne[2] != 1 || x.ne[3] != 1) return "activation " + shape(x) + " does not fit the weight";
    if (y.ne[0] != rows || y.ne[1] != 1 || y.ne[2] != 1 || y.ne[3] != 1 || y.nb[0] != 4)
        return "destination " + shape(y) + " does not fit the weight's " + std::to_string(rows) + " rows";
    return {};
}

std::string run_gemv(const GemvFormat& f, const dense_op_call& c) {
    std::string err = check_gemv(f, c);
    if (!err.empty()) return err;
    const dense_tensor_view &w = c.src[0], &x = c.src[1], &y = c.dst[0];
    f.rows(RowsArgs{static_cast<const uint8_t*>(w.data), static_cast<uint64_t>(w.nb[1]), w.ne[1],
                    static_cast<const uint8_t*>(x.data), w.ne[0], static_cast<float*>(y.data), accumulates(c)});
    return {};
}

}  // namespace dense::cpuavx2
