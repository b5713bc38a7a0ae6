// SWIGLU, CHECK_FINITE, ARGMAX and TOP_K (their contracts are pack-common's, argmax_contract.hpp and
// top_k_contract.hpp).
#include "pack/op_handlers.hpp"

#include "kernels/ops.hpp"

#include <dense/pack_common/argmax_contract.hpp>
#include <dense/pack_common/top_k_contract.hpp>

#include <cstring>

namespace dense::cpuref::pack {

// gate {n}, up {n} -> dst {n}; dst must not overlap the inputs (the ABI does not allow aliasing).
std::string handle_swiglu(const OpContext&, const dense_op_call& c, Phase phase) {
    int64_t n = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); }, [&] { return check_2d(c.src[0], "src0 (gate)"); },
        [&] {
            n = c.src[0].ne[0];
            return check_matrix(c.src[0], "src0 (gate)", DENSE_TYPE_F32, n, 1, Rows::Contiguous);
        },
        [&] { return check_matrix(c.src[1], "src1 (up)", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0 (gate)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (up)"); });
    if (!err.empty() || phase == Phase::Check) return err;
    swiglu(f32_in(c.src[0]), f32_in(c.src[1]), f32_out(c.dst[0]), n);
    return {};
}

// x {n} -> the I32 status word is set to 1 if x holds a NaN or an Inf, else left as it is.
std::string handle_check_finite(const OpContext&, const dense_op_call& c, Phase phase) {
    std::string err = first_error(
        [&] { return check_counts(c, 1, 1); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] { return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, c.src[0].ne[0], 1, Rows::Contiguous); },
        [&] { return check_i32_scalar(c.dst[0], "dst (status)"); },
        [&] { return check_disjoint(c.dst[0], "dst (status)", c.src[0], "src0 (x)"); });
    if (!err.empty() || phase == Phase::Check) return err;
    if (has_non_finite(f32_in(c.src[0]), c.src[0].ne[0])) {
        const int32_t one = 1;
        std::memcpy(c.dst[0].data, &one, sizeof one);
    }
    return {};
}

// x {n} -> I32 {1}: the lowest index of the largest element (dense_abi.h, DENSE_OP_ARGMAX).
std::string handle_argmax(const OpContext&, const dense_op_call& c, Phase phase) {
    int64_t n = 0;
    std::string err = pack_common::check_argmax_call(c, n);
    if (!err.empty() || phase == Phase::Check) return err;
    const auto index = static_cast<int32_t>(first_largest_index(f32_in(c.src[0]), n));
    std::memcpy(c.dst[0].data, &index, sizeof index);
    return {};
}

// x {n} -> ids I32 {k}, values F32 {k}: the k best candidates (dense_abi.h, DENSE_OP_TOP_K).
std::string handle_top_k(const OpContext&, const dense_op_call& c, Phase phase) {
    int64_t n = 0, k = 0;
    std::string err = pack_common::check_top_k_call(c, n, k);
    if (!err.empty() || phase == Phase::Check) return err;
    top_k(f32_in(c.src[0]), n, k, static_cast<int32_t*>(c.dst[0].data), f32_out(c.dst[1]));
    return {};
}

}  // namespace dense::cpuref::pack
