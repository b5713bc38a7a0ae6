// GEMM_Q (ABI 1.9): the GEMV of T activations at once. cpu-ref is the oracle: column j is exactly its
// GEMV_Q (run_gemv, the same arithmetic) of activation j, so a device pack's batched kernel has the
// single GEMVs' oracle by construction. No speed is sought here.
#include "pack/op_handlers.hpp"

#include <cstring>
#include <vector>

namespace dense::cpuref::pack {
namespace {

// Activation j of the T in `act` (a vector of n = in * T elements of `fmt`) as a vector of `in`
// elements that the GEMV reads: a sub-range of blocks for the block formats (Q8_K, Q8_0, F16, F32,
// BF16), a gathered copy in `scratch` for Q8_32, whose codes, d and s are three arrays over the whole
// vector (dense_abi.h).
const void* column(const FormatKernels& fmt, const void* act, int64_t in, int64_t n, int64_t j,
                   std::vector<uint8_t>& scratch) {
    const auto* base = static_cast<const uint8_t*>(act);
    if (fmt.type != DENSE_TYPE_Q8_32) return base + row_bytes(fmt.type, in) * static_cast<uint64_t>(j);
    const auto codes = static_cast<std::size_t>(in);
    const auto scales = static_cast<std::size_t>(in / 32) * 4;  // bytes of d (and of s) per column
    scratch.resize(codes + 2 * scales);
    std::memcpy(scratch.data(), base + j * in, codes);
    std::memcpy(scratch.data() + codes, base + n + j * (in / 32) * 4, scales);
    std::memcpy(scratch.data() + codes + scales, base + n + n / 8 + j * (in / 32) * 4, scales);
    return scratch.data();
}

}  // namespace

// src0 weight {IN, OUT}; src1 activations {IN * T}; dst F32 {OUT, T}, rows nb[1] apart; params
// optional (dense_gemv_params.accumulate, as GEMV_Q; order exact or free, both answered exactly).
std::string handle_gemm_q(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    int64_t n_act = 0;  // IN * T
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); },
        [&] { return check_contiguous(c.src[0], "src0 (weight)", *ctx.weight); },
        [&] { return check_shape(c.src[0], "src0 (weight)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1}); },
        [&] { return check_2d(c.dst[0], "dst"); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, c.src[0].ne[1], c.dst[0].ne[1], Rows::Strided); },
        [&]() -> std::string {
            if (__builtin_mul_overflow(c.src[0].ne[0], c.dst[0].ne[1], &n_act))
                return "src1 (activations): IN * T overflows";
            return {};
        },
        [&] { return check_contiguous(c.src[1], "src1 (activations)", *ctx.act); },
        [&] { return check_shape(c.src[1], "src1 (activations)", {n_act, 1, 1, 1}); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0 (weight)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (activations)"); },
        [&]() -> std::string {
            if (c.params == nullptr) return {};
            return read_params(c, "dense_gemv_params", DENSE_PACK_FIELD_END(dense_gemv_params, accumulate),
                               &params);
        },
        // A free order (ABI 1.13-1.14) allows any order and rounding of the terms within their bound;
        // the GEMV per column is one of them.
        [&] { return check_gemm_order(params.order); });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t in = c.src[0].ne[0], out = c.src[0].ne[1], cols = c.dst[0].ne[1];
    const int64_t stride = row_stride_elements(c.dst[0]);
    std::vector<uint8_t> scratch;
    for (int64_t j = 0; j < cols; ++j)
        run_gemv(ctx, c.src[0].data, in, out, column(*ctx.act, c.src[1].data, in, n_act, j, scratch),
                 f32_out(c.dst[0]) + j * stride, params.accumulate != 0);
    return {};
}

}  // namespace dense::cpuref::pack
