// The ops on stored formats: DEQUANTIZE, QUANTIZE_ACT, GEMV_Q (optionally accumulating into dst) and
// EMBED_ROW (row from an I32 input or from params).
#include "pack/op_handlers.hpp"

#include <vector>

namespace dense::cpuref::pack {
namespace {

const FormatKernels& f32_format() {
    return format(DENSE_TYPE_F32);
}

}  // namespace

std::string handle_dequantize(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    std::string err = first_error([&] { return check_counts(c, 1, 1); },
                                  [&] { return check_contiguous(c.src[0], "src0 (blocks)", *ctx.weight); },
                                  [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
                                  [&]() -> std::string {
                                      if (element_count(c.src[0]) == element_count(c.dst[0])) return {};
                                      return "dst has " + std::to_string(element_count(c.dst[0])) +
                                             " elements, src0 has " + std::to_string(element_count(c.src[0]));
                                  },
                                  [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0"); });
    if (!err.empty() || phase == Phase::Check) return err;
    dequantize_row(ctx.weight->type, c.src[0].data, static_cast<float*>(c.dst[0].data), element_count(c.src[0]));
    return {};
}

std::string handle_quantize_act(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    std::string err = first_error([&] { return check_counts(c, 1, 1); },
                                  [&] { return check_contiguous(c.src[0], "src0 (activation)", f32_format()); },
                                  [&] { return check_contiguous(c.dst[0], "dst", *ctx.act); },
                                  [&] {
                                      const auto& ne = c.src[0].ne;
                                      return check_shape(c.dst[0], "dst", {ne[0], ne[1], ne[2], ne[3]});
                                  },
                                  [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0"); });
    if (!err.empty() || phase == Phase::Check) return err;
    quantize_activation(ctx.act->type, static_cast<const float*>(c.src[0].data), c.dst[0].data,
                        element_count(c.src[0]));
    return {};
}

// params are optional: without them (or with accumulate = 0) dst = W x, else dst += W x.
std::string handle_gemv_q(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); },
        [&] { return check_contiguous(c.src[0], "src0 (weight)", *ctx.weight); },
        [&] { return check_shape(c.src[0], "src0 (weight)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1}); },
        [&] { return check_contiguous(c.src[1], "src1 (activation)", *ctx.act); },
        [&] { return check_shape(c.src[1], "src1 (activation)", {c.src[0].ne[0], 1, 1, 1}); },
        [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
        [&] { return check_shape(c.dst[0], "dst", {c.src[0].ne[1], 1, 1, 1}); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0 (weight)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (activation)"); },
        [&]() -> std::string {
            if (c.params == nullptr) return {};
            return read_params(c, "dense_gemv_params", DENSE_PACK_FIELD_END(dense_gemv_params, accumulate),
                               &params);
        });
    if (!err.empty() || phase == Phase::Check) return err;
    run_gemv(ctx, c.src[0].data, c.src[0].ne[0], c.src[0].ne[1], c.src[1].data, static_cast<float*>(c.dst[0].data),
             params.accumulate != 0);
    return {};
}

void run_gemv(const OpContext& ctx, const void* weight, int64_t in, int64_t out, const void* act, float* y,
              bool accumulate) {
    if (!accumulate) {
        gemv_act(ctx.weight->type, ctx.act->type, weight, in, out, act, y);
        return;
    }
    // Row by row, so a token step allocates nothing: y[r] + (W x)[r], one float rounding each.
    const uint64_t stride = row_bytes(ctx.weight->type, in);
    const auto* rows = static_cast<const uint8_t*>(weight);
    for (int64_t r = 0; r < out; ++r)
        y[r] += vec_dot_act(ctx.weight->type, ctx.act->type, rows + static_cast<uint64_t>(r) * stride, act, in);
}

// src1 (optional) I32 {1} row, read at run time; without it params.row (checked statically).
std::string handle_embed_row(const OpContext& ctx, const dense_op_call& c, Phase phase) {
    const bool row_input = c.n_src == 2;
    int64_t row = 0;
    std::string err = first_error(
        [&] { return check_counts(c, row_input ? 2 : 1, 1); },
        [&] { return check_contiguous(c.src[0], "src0 (table)", *ctx.weight); },
        [&] { return check_shape(c.src[0], "src0 (table)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1}); },
        [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
        [&] { return check_shape(c.dst[0], "dst", {c.src[0].ne[0], 1, 1, 1}); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0 (table)"); },
        [&]() -> std::string {
            if (!row_input) return {};
            if (std::string e = check_i32_scalar(c.src[1], "src1 (row)"); !e.empty()) return e;
            return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (row)");
        },
        [&]() -> std::string {
            if (row_input) return {};  // the row is data, known only when the call runs
            dense_embed_row_params p{};
            if (std::string e = read_params(c, "dense_embed_row_params",
                                            DENSE_PACK_FIELD_END(dense_embed_row_params, row), &p);
                !e.empty())
                return e;
            row = p.row;
            return {};
        },
        [&]() -> std::string {
            if (row_input) {
                if (phase == Phase::Check) return {};
                row = read_i32(c.src[1]);
            }
            if (row < 0 || row >= c.src[0].ne[1])
                return "row " + std::to_string(row) + " is outside [0, " + std::to_string(c.src[0].ne[1]) + ")";
            return {};
        });
    if (!err.empty() || phase == Phase::Check) return err;
    const int64_t d = c.src[0].ne[0];
    const uint64_t offset = static_cast<uint64_t>(row) * row_bytes(ctx.weight->type, d);
    dequantize_row(ctx.weight->type, static_cast<const uint8_t*>(c.src[0].data) + offset,
                   static_cast<float*>(c.dst[0].data), d);
    return {};
}

}  // namespace dense::cpuref::pack
