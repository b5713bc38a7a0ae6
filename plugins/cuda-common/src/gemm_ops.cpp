#include "gemm_ops.hpp"

#include "act_view_checks.hpp"
#include "call_envelope.hpp"
#include "cuda_status.hpp"
#include "gemv_ops.hpp"
#include "kernels/gemv_launchers.hpp"
#include "prepared_op.hpp"
#include "view_checks.hpp"

#include <dense/pack_common/call_checks.hpp>
#include <dense/sdk/pack.hpp>

#include <climits>
#include <string>
#include <utility>

namespace dense::cuda {
namespace {

// The GEMV's registry priority (gemv_ops.cpp).
constexpr int32_t kPriority = 10;

// The launchers of each weight format: its GEMM, and for the quantized ones the GEMV's, which runs a
// GEMM of one column (the same bits, by the GEMV's own kernel). Null: no GEMM (nor GEMV) here.
// The GEMM launchers of every quantized format take the tensor-core kernel (kernels/gemm_mma.cuh)
// unless DENSE_CUDA_GEMM=dp4a or the weight is not aligned for its decoder: then the dp4a GEMM
// (gemm_launch.cuh).
struct Launchers {
    GemmLauncher gemm = nullptr;
    GemvListLauncher gemv = nullptr;  // null for the float formats (their GEMM is their GEMV per column)
};

Launchers launchers(dense_type_id type) noexcept {
    switch (type) {
        case DENSE_TYPE_F32: return {launch_gemm_f32, nullptr};
        case DENSE_TYPE_F16: return {launch_gemm_f16, nullptr};
        case DENSE_TYPE_BF16: return {launch_gemm_bf16, nullptr};
        case DENSE_TYPE_Q8_0: return {launch_gemm_q8_0, launch_gemv_q8_0};
        case DENSE_TYPE_Q2_K: return {launch_gemm_q2_k, launch_gemv_q2_k};
        case DENSE_TYPE_Q3_K: return {launch_gemm_q3_k, launch_gemv_q3_k};
        case DENSE_TYPE_Q4_K: return {launch_gemm_q4_k, launch_gemv_q4_k};
        case DENSE_TYPE_Q5_K: return {launch_gemm_q5_k, launch_gemv_q5_k};
        case DENSE_TYPE_Q6_K: return {launch_gemm_q6_k, launch_gemv_q6_k};
        case DENSE_TYPE_IQ2_XS: return {launch_gemm_iq2_xs, launch_gemv_iq2_xs};
        case DENSE_TYPE_IQ2_S: return {launch_gemm_iq2_s, launch_gemv_iq2_s};
        case DENSE_TYPE_IQ3_XXS: return {launch_gemm_iq3_xxs, launch_gemv_iq3_xxs};
        case DENSE_TYPE_IQ3_S: return {launch_gemm_iq3_s, launch_gemv_iq3_s};
        case DENSE_TYPE_IQ4_NL: return {launch_gemm_iq4_nl, launch_gemv_iq4_nl};
        case DENSE_TYPE_IQ4_XS: return {launch_gemm_iq4_xs, launch_gemv_iq4_xs};
        default: return {};
    }
}

bool is_float(dense_type_id type) noexcept {
    return type == DENSE_TYPE_F32 || type == DENSE_TYPE_F16 || type == DENSE_TYPE_BF16;
}

// Bytes of a contiguous view of `fmt` (check_contiguous proved it fits in int64).
int64_t view_bytes(const dense_tensor_view& v, const CudaFormat& fmt) noexcept {
    return element_count(v) / fmt.block_elements * fmt.block_bytes;
}

// The call's dense_gemv_params.order (ABI 1.13): exact (false) without params.
std::string read_free_order(const dense_op_call& c, bool& free_order) {
    free_order = false;
    if (c.params == nullptr) return {};  // read_accumulate checked the header
    const dense_gemv_params p = dense::sdk::read_struct(static_cast<const dense_gemv_params*>(c.params));
    if (std::string err = pack_common::check_gemm_order(p.order); !err.empty()) return err;
    free_order = p.order == DENSE_GEMM_ORDER_FREE;
    return {};
}

// The checks of GEMV_Q (gemv_ops.cpp) with T columns: the same alignments and size limits, src1 of
// IN * T elements, dst {OUT, T} with a row stride.
std::string validate(const OpContext& ctx, const dense_op_call& c, GemmLaunch& g) {
    const CudaFormat& wf = *ctx.format;
    const CudaFormat& af = *ctx.act_format;
    const uint32_t act_align = af.type == DENSE_TYPE_Q8_32 ? 16u : 4u;  // Q8_32 codes: 16-byte loads
    const uint32_t weight_align = is_float(wf.type) ? wf.block_bytes : 1u;
    int64_t n_act = 0;  // IN * T
    bool accumulate = false;
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); },
        [&] { return check_contiguous(c.src[0], "src0 (weight)", wf); },
        [&] { return check_shape(c.src[0], "src0 (weight)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1}); },
        [&] { return check_aligned(c.src[0], "src0 (weight)", weight_align); },
        [&]() -> std::string {
            // The kernels count steps of 256 elements and activation blocks in int.
            if (c.src[0].ne[0] > INT_MAX / 2)
                return "src0 (weight): ne[0] = " + std::to_string(c.src[0].ne[0]) + " is too large";
            return {};
        },
        [&] { return act::check_2d(c.dst[0], "dst"); },
        [&]() -> std::string {
            // Columns are counted in int (IN * T then fits in int64: IN < 2^30).
            if (c.dst[0].ne[1] > INT_MAX / 2)
                return "dst: ne[1] = " + std::to_string(c.dst[0].ne[1]) + " columns is too many";
            return {};
        },
        [&] {
            return act::check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, c.src[0].ne[1], c.dst[0].ne[1],
                                     act::Rows::Strided);
        },
        [&] { return check_contiguous(c.src[1], "src1 (activations)", af); },
        [&]() -> std::string {
            n_act = c.src[0].ne[0] * c.dst[0].ne[1];
            return check_shape(c.src[1], "src1 (activations)", {n_act, 1, 1, 1});
        },
        [&] { return check_aligned(c.src[1], "src1 (activations)", act_align); },
        [&] { return check_same_device(c.src[0], c.src[1]); },
        [&] { return check_same_device(c.src[0], c.dst[0]); },
        [&] {
            // check_matrix proved the extent representable.
            const int64_t y_bytes = (c.dst[0].ne[1] - 1) * c.dst[0].nb[1] + 4 * c.dst[0].ne[0];
            return first_error(
                [&] {
                    return check_disjoint(c.dst[0], "dst", y_bytes, c.src[0], "src0 (weight)",
                                          view_bytes(c.src[0], wf));
                },
                [&] {
                    return check_disjoint(c.dst[0], "dst", y_bytes, c.src[1], "src1 (activations)",
                                          view_bytes(c.src[1], af));
                });
        },
        [&] { return read_accumulate(c, accumulate); }, [&] { return read_free_order(c, g.free_order); });
    if (!err.empty()) return err;
    g.matrix.weight = c.src[0].data;
    g.matrix.in = c.src[0].ne[0];
    g.matrix.out = c.src[0].ne[1];
    g.matrix.row_bytes = c.src[0].ne[0] / wf.block_elements * wf.block_bytes;
    g.matrix.act = c.src[1].data;
    g.matrix.dst = static_cast<float*>(c.dst[0].data);
    g.matrix.accumulate = accumulate;
    g.cols = c.dst[0].ne[1];
    g.dst_col_stride = c.dst[0].ne[1] > 1 ? c.dst[0].nb[1] / 4 : c.src[0].ne[1];
    g.workspace = c.workspace;
    g.workspace_bytes = c.workspace != nullptr ? c.workspace_bytes : 0;
    return {};
}

// A call that passed validation: the call as read, and its launch.
struct Prepared {
    dense_op_call call{};
    GemmLaunch g;
};

Verdict prepare(const OpContext& ctx, const dense_op_call* raw, Prepared& p) {
    if (Verdict v = read_call(raw, ctx.kind, p.call); v.status != DENSE_OK) return v;
    if (std::string err = validate(ctx, p.call, p.g); !err.empty()) return invalid(std::move(err));
    return {};
}

dense_status execute(const OpContext& ctx, const Prepared& p) {
    const dense_status s = use_device(ctx.pack->host, ctx.name, p.call.dst[0].device_index);
    if (s != DENSE_OK) return s;
    const GemmLaunch& g = p.g;
    const Launchers l = launchers(ctx.format->type);
    const auto stream = static_cast<cudaStream_t>(p.call.stream);
    const cudaError_t err = g.cols == 1 && l.gemv != nullptr ? l.gemv(&g.matrix, 1, stream) : l.gemm(g, stream);
    return report_cuda(ctx.pack->host, ctx.name,
                       "kernel launch ({" + std::to_string(g.matrix.in) + ", " + std::to_string(g.matrix.out) +
                           "} x " + std::to_string(g.cols) + " columns)",
                       err);
}

// The free-order kernel's K-split partial sums (kernels/gemm_mma_wide.cuh): 0 for an exact call, a
// float format (its GEMM is the GEMV per column), one column, or a call this op refuses.
uint64_t workspace_bytes(void* user, const dense_op_call* raw) noexcept {
    try {
        const auto& ctx = *static_cast<const OpContext*>(user);
        Prepared p;
        if (prepare(ctx, raw, p).status != DENSE_OK || !p.g.free_order || is_float(ctx.format->type) || p.g.cols < 2)
            return 0;
        int sm = 0;
        if (cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, p.call.dst[0].device_index) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;  // the launch then finds no workspace and runs the exact kernel
        }
        return gemm_free_order_plan(p.g.matrix.out, p.g.matrix.in, p.g.cols, sm, gemm_free_order_forced_splits())
            .workspace_bytes;
    } catch (...) {
        return 0;
    }
}

dense_op_impl make_op_impl(OpContext& ctx) noexcept {
    auto impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = ctx.kind;
    impl.weight_type = ctx.format->type;
    impl.act_type = ctx.act_format->type;
    impl.device_kind = DENSE_DEVICE_CUDA;
    impl.priority = kPriority;
    impl.name = ctx.name.c_str();
    impl.user = &ctx;
    impl.supports = PreparedOp<Prepared, prepare, execute>::supports;
    impl.run = PreparedOp<Prepared, prepare, execute>::run;
    impl.workspace_bytes = workspace_bytes;
    return impl;
}

}  // namespace

void plan_gemm_ops(PackState& state) {
    for (const CudaFormat& f : cuda_formats()) {
        if (launchers(f.type).gemm == nullptr) continue;
        OpContext ctx;
        ctx.pack = &state;
        ctx.format = &f;
        // The GEMV's pairing: F32 activations for float weights, Q8_32 for the quantized ones.
        ctx.act_format = is_float(f.type) ? find_cuda_format(DENSE_TYPE_F32) : &q8_32_format();
        ctx.kind = DENSE_OP_GEMM_Q;
        ctx.name = state.name + ".gemm_q." + f.name + "." + ctx.act_format->name;
        ctx.make_impl = make_op_impl;
        state.ops.push_back(std::move(ctx));
    }
}

}  // namespace dense::cuda
