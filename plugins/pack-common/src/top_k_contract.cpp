#include "dense/pack_common/top_k_contract.hpp"

#include "dense/pack_common/call_checks.hpp"
#include "dense/pack_common/view_checks.hpp"

#include <cstdint>

namespace dense::pack_common {

std::string check_top_k_call(const dense_op_call& c, int64_t& n, int64_t& k) {
    static const char* const src_roles[] = {"src0 (x)"};
    static const char* const dst_roles[] = {"dst0 (ids)", "dst1 (values)"};
    return first_error(
        [&] { return check_counts(c, 1, 2); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] {
            n = c.src[0].ne[0];
            return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, n, 1, Rows::Contiguous);
        },
        [&] {  // the ids are I32
            return n >= 1 && n <= INT32_MAX ? std::string()
                                            : "src0 (x): TOP_K takes 1 to 2^31-1 elements, got " + std::to_string(n);
        },
        [&] { return check_2d(c.dst[0], "dst0 (ids)"); },
        [&] {
            k = c.dst[0].ne[0];
            return check_matrix(c.dst[0], "dst0 (ids)", DENSE_TYPE_I32, k, 1, Rows::Contiguous);
        },
        [&] {
            return k >= 1 && k <= DENSE_TOP_K_MAX
                       ? std::string()
                       : "dst0 (ids): TOP_K keeps 1 to " + std::to_string(DENSE_TOP_K_MAX) + " elements, got " +
                             std::to_string(k);
        },
        [&] { return check_matrix(c.dst[1], "dst1 (values)", DENSE_TYPE_F32, k, 1, Rows::Contiguous); },
        [&] { return check_outputs_apart(c, src_roles, dst_roles); });
}

}  // namespace dense::pack_common
