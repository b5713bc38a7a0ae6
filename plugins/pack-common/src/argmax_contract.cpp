#include "dense/pack_common/argmax_contract.hpp"

#include "dense/pack_common/call_checks.hpp"
#include "dense/pack_common/view_checks.hpp"

#include <cstdint>

namespace dense::pack_common {

std::string check_argmax_call(const dense_op_call& c, int64_t& n) {
    return first_error(
        [&] { return check_counts(c, 1, 1); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] {
            n = c.src[0].ne[0];
            return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, n, 1, Rows::Contiguous);
        },
        [&] {  // the answer is an I32
            return n >= 1 && n <= INT32_MAX ? std::string()
                                            : "src0 (x): ARGMAX takes 1 to 2^31-1 elements, got " + std::to_string(n);
        },
        [&] { return check_i32_scalar(c.dst[0], "dst (index)"); },
        [&] { return check_disjoint(c.dst[0], "dst (index)", c.src[0], "src0 (x)"); });
}

}  // namespace dense::pack_common
