#include "dense/pack_common/call_checks.hpp"

namespace dense::pack_common {

std::string check_counts(const dense_op_call& c, uint32_t n_src, uint32_t n_dst) {
    if (c.n_src != n_src || c.n_dst != n_dst)
        return "expected " + std::to_string(n_src) + " source(s) and " + std::to_string(n_dst) +
               " destination(s), got " + std::to_string(c.n_src) + " and " + std::to_string(c.n_dst);
    if ((n_src > 0 && c.src == nullptr) || (n_dst > 0 && c.dst == nullptr)) return "src or dst array is NULL";
    return {};
}

std::string check_gemm_order(uint32_t order) {
    if (order == DENSE_GEMM_ORDER_EXACT || order == DENSE_GEMM_ORDER_FREE) return {};
    return "params (dense_gemv_params): order " + std::to_string(order) + " is not a known GEMM order (0 exact, 1 free)";
}

}  // namespace dense::pack_common
