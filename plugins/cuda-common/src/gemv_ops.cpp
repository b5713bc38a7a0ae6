#include "gemv_ops.hpp"

#include "kernels/launch_chain_break.hpp"

#include "call_envelope.hpp"
#include "cuda_status.hpp"
#include "kernels/gemv_launchers.hpp"
#include "prepared_op.hpp"
#include "view_checks.hpp"

#include <dense/sdk/pack.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <string>
#include <utility>

namespace dense::cuda {

std::string read_accumulate(const dense_op_call& c, bool& accumulate) {
    accumulate = false;
    if (c.params == nullptr) return {};
    const auto* params = static_cast<const dense_gemv_params*>(c.params);
    if (params->hdr.abi_major != DENSE_ABI_MAJOR) return "params has ABI major " + std::to_string(params->hdr.abi_major);
    if (!dense::sdk::has_bytes(params, offsetof(dense_gemv_params, accumulate) + sizeof(uint32_t)))
        return "params struct_size " + std::to_string(params->hdr.struct_size) +
               " is too small for dense_gemv_params";
    accumulate = dense::sdk::read_struct(params).accumulate != 0;
    return {};
}

namespace {

// Registry priority, as the dequantize ops (the key includes the device kind).
constexpr int32_t kPriority = 10;

// The kernel of each float weight format (null: not a float format).
GemvLauncher float_launcher(dense_type_id type) noexcept {
    switch (type) {
        case DENSE_TYPE_F32: return launch_gemv_f32;
        case DENSE_TYPE_F16: return launch_gemv_f16;
        case DENSE_TYPE_BF16: return launch_gemv_bf16;
        default: return nullptr;
    }
}

// The kernel of each quantized weight format, which takes a list of matrices (null: no GEMV for it).
GemvListLauncher list_launcher(dense_type_id type) noexcept {
    switch (type) {
        case DENSE_TYPE_Q8_0: return launch_gemv_q8_0;
        case DENSE_TYPE_Q2_K: return launch_gemv_q2_k;
        case DENSE_TYPE_Q3_K: return launch_gemv_q3_k;
        case DENSE_TYPE_Q4_K: return launch_gemv_q4_k;
        case DENSE_TYPE_Q5_K: return launch_gemv_q5_k;
        case DENSE_TYPE_Q6_K: return launch_gemv_q6_k;
        case DENSE_TYPE_IQ2_XS: return launch_gemv_iq2_xs;
        case DENSE_TYPE_IQ2_S: return launch_gemv_iq2_s;
        case DENSE_TYPE_IQ3_XXS: return launch_gemv_iq3_xxs;
        case DENSE_TYPE_IQ3_S: return launch_gemv_iq3_s;
        case DENSE_TYPE_IQ4_NL: return launch_gemv_iq4_nl;
        case DENSE_TYPE_IQ4_XS: return launch_gemv_iq4_xs;
        default: return nullptr;
    }
}

bool is_float(dense_type_id type) noexcept {
    return float_launcher(type) != nullptr;
}

// GEMV_Q_MULTI takes 2 to 16 matrices (dense_abi.h).
constexpr uint32_t kMaxListMatrices = 16;

// A call that passed validation.
struct Prepared {
    dense_op_call call{};
    GemvLaunch gemv;            // GEMV_Q
    // GEMV_Q_MULTI: one launch description per matrix, and each one's format.
    GemvLaunch list[kMaxListMatrices];
    dense_type_id list_type[kMaxListMatrices] = {};
    uint32_t list_n = 0;
    const float* src = nullptr; // QUANTIZE_ACT
    void* dst = nullptr;
    int64_t n = 0;
};

const CudaFormat& f32_format() noexcept {
    return *find_cuda_format(DENSE_TYPE_F32);
}

// Bytes of a contiguous view of `fmt` (check_contiguous proved it fits in int64).
int64_t view_bytes(const dense_tensor_view& v, const CudaFormat& fmt) noexcept {
    return element_count(v) / fmt.block_elements * fmt.block_bytes;
}


std::string validate_gemv(const OpContext& ctx, const dense_op_call& c, Prepared& p) {
    const CudaFormat& wf = *ctx.format;
    const CudaFormat& af = *ctx.act_format;
    // Activation alignment: the Q8_32 codes are read in 16-byte vectors; F32 as floats.
    const uint32_t act_align = af.type == DENSE_TYPE_Q8_32 ? 16u : 4u;
    // Float weights are read as their elements; quantized blocks at any address.
    const uint32_t weight_align = is_float(wf.type) ? wf.block_bytes : 1u;
    bool accumulate = false;
    std::string err = first_error(
        [&] { return check_counts(c, 2, 1); },
        [&] { return check_contiguous(c.src[0], "src0 (weight)", wf); },
        [&] { return check_shape(c.src[0], "src0 (weight)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1}); },
        [&] { return check_aligned(c.src[0], "src0 (weight)", weight_align); },
        [&] { return check_contiguous(c.src[1], "src1 (activation)", af); },
        [&] { return check_shape(c.src[1], "src1 (activation)", {c.src[0].ne[0], 1, 1, 1}); },
        [&] { return check_aligned(c.src[1], "src1 (activation)", act_align); },
        [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
        [&] { return check_shape(c.dst[0], "dst", {c.src[0].ne[1], 1, 1, 1}); },
        [&] { return check_aligned(c.dst[0], "dst", 4); },
        [&] { return check_same_device(c.src[0], c.src[1]); },
        [&] { return check_same_device(c.src[0], c.dst[0]); },
        [&] {
            return check_disjoint(c.dst[0], "dst", view_bytes(c.dst[0], f32_format()), c.src[0], "src0 (weight)",
                                  view_bytes(c.src[0], wf));
        },
        [&] {
            return check_disjoint(c.dst[0], "dst", view_bytes(c.dst[0], f32_format()), c.src[1], "src1 (activation)",
                                  view_bytes(c.src[1], af));
        },
        [&]() -> std::string {
            // The kernels count steps of 256 elements and rows in int / int64.
            if (c.src[0].ne[0] > INT_MAX / 2) return "src0 (weight): ne[0] = " + std::to_string(c.src[0].ne[0]) + " is too large";
            return {};
        },
        [&] { return read_accumulate(c, accumulate); });
    if (!err.empty()) return err;
    p.gemv.weight = c.src[0].data;
    p.gemv.in = c.src[0].ne[0];
    p.gemv.out = c.src[0].ne[1];
    p.gemv.row_bytes = c.src[0].ne[0] / wf.block_elements * wf.block_bytes;
    p.gemv.act = c.src[1].data;
    p.gemv.dst = static_cast<float*>(c.dst[0].data);
    p.gemv.accumulate = accumulate;
    return {};
}

// GEMV_Q_MULTI: src0 .. src{k-1} weights of quantized formats with a kernel here, src{k} the Q8_32
// activation, dst_i F32 {rows_i}; every dst disjoint from every source and every other dst.
std::string validate_gemv_list(const OpContext& ctx, const dense_op_call& c, Prepared& p) {
    const CudaFormat& af = *ctx.act_format;
    const uint32_t k = c.n_dst;
    if (k < 2 || k > kMaxListMatrices) return "expected 2 to 16 matrices (destinations), got " + std::to_string(k);
    if (std::string err = check_counts(c, k + 1, k); !err.empty()) return err;
    if (c.params != nullptr) return "takes no params (it never accumulates)";
    const dense_tensor_view& x = c.src[k];
    const std::string x_role = "src" + std::to_string(k) + " (activation)";
    if (std::string err = first_error([&] { return check_contiguous(x, x_role.c_str(), af); },
                                      [&] { return check_shape(x, x_role.c_str(), {x.ne[0], 1, 1, 1}); },
                                      [&] { return check_aligned(x, x_role.c_str(), 16); },
                                      [&]() -> std::string {
                                          if (x.ne[0] > INT_MAX / 2)
                                              return x_role + ": ne[0] = " + std::to_string(x.ne[0]) + " is too large";
                                          return {};
                                      });
        !err.empty())
        return err;
    for (uint32_t i = 0; i < k; ++i) {
        const dense_tensor_view& w = c.src[i];
        const dense_tensor_view& y = c.dst[i];
        const std::string w_role = "src" + std::to_string(i) + " (weight)";
        const std::string y_role = "dst" + std::to_string(i);
        const CudaFormat* wf = find_cuda_format(w.type);
        if (wf == nullptr || list_launcher(w.type) == nullptr)
            return w_role + ": type id " + std::to_string(w.type) + " has no GEMV against q8_32 in this pack";
        std::string err = first_error(
            [&] { return check_contiguous(w, w_role.c_str(), *wf); },
            [&] { return check_shape(w, w_role.c_str(), {x.ne[0], w.ne[1], 1, 1}); },
            [&] { return check_contiguous(y, y_role.c_str(), f32_format()); },
            [&] { return check_shape(y, y_role.c_str(), {w.ne[1], 1, 1, 1}); },
            [&] { return check_aligned(y, y_role.c_str(), 4); },
            [&] { return check_same_device(w, x); },
            [&] { return check_same_device(w, y); });
        if (!err.empty()) return err;
        const int64_t y_bytes = view_bytes(y, f32_format());
        for (uint32_t j = 0; j <= k; ++j) {
            const CudaFormat* sf = j == k ? &af : find_cuda_format(c.src[j].type);
            if (sf == nullptr) continue;  // matrix j's own check names its type
            const std::string s_role = "src" + std::to_string(j);
            if (err = check_disjoint(y, y_role.c_str(), y_bytes, c.src[j], s_role.c_str(), view_bytes(c.src[j], *sf));
                !err.empty())
                return err;
        }
        for (uint32_t j = 0; j < i; ++j) {
            const std::string o_role = "dst" + std::to_string(j);
            if (err = check_disjoint(y, y_role.c_str(), y_bytes, c.dst[j], o_role.c_str(), view_bytes(c.dst[j], f32_format()));
                !err.empty())
                return err;
        }
        GemvLaunch& g = p.list[i];
        g.weight = w.data;
        g.in = x.ne[0];
        g.out = w.ne[1];
        g.row_bytes = x.ne[0] / wf->block_elements * wf->block_bytes;
        g.act = x.data;
        g.dst = static_cast<float*>(y.data);
        g.accumulate = false;
        p.list_type[i] = w.type;
    }
    p.list_n = k;
    return {};
}

std::string validate_quantize(const OpContext& ctx, const dense_op_call& c, Prepared& p) {
    const CudaFormat& af = *ctx.act_format;
    std::string err = first_error(
        [&] { return check_counts(c, 1, 1); },
        [&] { return check_contiguous(c.src[0], "src0 (activation)", f32_format()); },
        [&] { return check_aligned(c.src[0], "src0 (activation)", 4); },
        [&] { return check_contiguous(c.dst[0], "dst", af); },
        [&] {
            const auto& ne = c.src[0].ne;
            return check_shape(c.dst[0], "dst", {ne[0], ne[1], ne[2], ne[3]});
        },
        [&] { return check_aligned(c.dst[0], "dst", af.type == DENSE_TYPE_Q8_32 ? 16u : 4u); },
        [&] { return check_same_device(c.src[0], c.dst[0]); },
        [&] {
            return check_disjoint(c.dst[0], "dst", view_bytes(c.dst[0], af), c.src[0], "src0 (activation)",
                                  view_bytes(c.src[0], f32_format()));
        });
    if (!err.empty()) return err;
    p.src = static_cast<const float*>(c.src[0].data);
    p.dst = c.dst[0].data;
    p.n = element_count(c.src[0]);
    return {};
}

Verdict prepare(const OpContext& ctx, const dense_op_call* raw, Prepared& p) {
    if (Verdict v = read_call(raw, ctx.kind, p.call); v.status != DENSE_OK) return v;
    const dense_op_call& c = p.call;
    std::string err;
    switch (ctx.kind) {
        case DENSE_OP_GEMV_Q:
            err = validate_gemv(ctx, c, p);
            break;
        case DENSE_OP_GEMV_Q_MULTI:
            err = validate_gemv_list(ctx, c, p);
            break;
        case DENSE_OP_QUANTIZE_ACT:
            err = validate_quantize(ctx, c, p);
            break;
        default:
            return {DENSE_E_UNSUPPORTED, "op kind " + std::to_string(ctx.kind) + " is not implemented"};
    }
    if (!err.empty()) return invalid(std::move(err));
    return {};
}

// The matrices of `sub` (indices into p's list, all of formats a and b) as one pair launch, where
// one of the pack's pairs fits them (gemv_launchers.hpp, gemv_pair_plan.hpp); false when none does
// (nothing enqueued).
bool launch_pair(const Prepared& p, const uint32_t* sub, int n, uint32_t a, uint32_t b, cudaStream_t stream, cudaError_t& err) {
    uint32_t types[kMaxListMatrices];
    GemvLaunch calls[kMaxListMatrices];
    for (int i = 0; i < n; ++i) {
        types[i] = p.list_type[sub[i]];
        calls[i] = p.list[sub[i]];
    }
    for (const GemvPair* (*table)(int&) : {&gemv_pairs_with_q8_0, &gemv_pairs_same_format}) {
        int count = 0;
        const GemvPair* pairs = table(count);
        for (int k = 0; k < count; ++k) {
            const GemvPair& pair = pairs[k];
            const auto in_pair = [&](uint32_t t) { return t == pair.streamed_type || t == pair.direct_type; };
            if (in_pair(a) && in_pair(b) && pair.launch(types, calls, n, stream, err)) return true;
        }
    }
    return false;
}

// GEMV_Q_MULTI: as many of the list's matrices as one pair launch takes: the whole list if a pair
// fits it, else the matrices of two of its formats, else those of one (two summation orders), in
// that order of trial. Marks them in `done`; false when no pair fits any (nothing enqueued). The
// rest go per format and order: the 27B's attention list with v in Q6_K is then a Q5_K + Q8_0
// pair and a Q6_K launch, 2 launches instead of 3.
bool launch_list_pairs(const Prepared& p, cudaStream_t stream, bool* done, cudaError_t& err) {
    uint32_t formats[kMaxListMatrices];
    int n_formats = 0;
    for (uint32_t i = 0; i < p.list_n; ++i)
        if (std::find(formats, formats + n_formats, p.list_type[i]) == formats + n_formats) formats[n_formats++] = p.list_type[i];
    // The matrices of formats a and b, into `sub`; tries them as a pair.
    auto try_formats = [&](uint32_t a, uint32_t b) {
        uint32_t sub[kMaxListMatrices];
        int n = 0;
        for (uint32_t i = 0; i < p.list_n; ++i)
            if (p.list_type[i] == a || p.list_type[i] == b) sub[n++] = i;
        if (n < 2 || !launch_pair(p, sub, n, a, b, stream, err)) return false;
        for (int i = 0; i < n; ++i) done[sub[i]] = true;
        return true;
    };
    // Two formats (the whole list when it has two), then one format's two orders.
    for (int x = 0; x < n_formats; ++x)
        for (int y = x + 1; y < n_formats; ++y)
            if (try_formats(formats[x], formats[y])) return true;
    for (int x = 0; x < n_formats; ++x)
        if (try_formats(formats[x], formats[x])) return true;
    return false;
}

dense_status execute(const OpContext& ctx, const Prepared& p) {
    const dense_status s = use_device(ctx.pack->host, ctx.name, p.call.dst[0].device_index);
    if (s != DENSE_OK) return s;
    const auto stream = static_cast<cudaStream_t>(p.call.stream);
    if (ctx.kind == DENSE_OP_GEMV_Q_MULTI) {
        bool done[kMaxListMatrices] = {};
        cudaError_t pair_err = cudaSuccess;
        if (launch_list_pairs(p, stream, done, pair_err)) {
            if (pair_err != cudaSuccess)
                return report_cuda(ctx.pack->host, ctx.name, "pair kernel launch (" + std::to_string(p.list_n) + " matrices)", pair_err);
            // Debug level: which lists pair is a property the GPU test checks (the runtime filters it).
            int paired = 0;
            for (uint32_t i = 0; i < p.list_n; ++i) paired += done[i] ? 1 : 0;
            ctx.pack->host.log(DENSE_LOG_DEBUG, ctx.name + ": " + std::to_string(paired) + " of " + std::to_string(p.list_n) +
                                                    " matrices in one pair launch");
        }
        // The rest: one list per format, in order of first appearance (each list: launches of equal K split).
        for (uint32_t i = 0; i < p.list_n; ++i) {
            if (done[i]) continue;
            GemvLaunch same[kMaxListMatrices];
            int n = 0;
            for (uint32_t j = i; j < p.list_n; ++j)
                if (!done[j] && p.list_type[j] == p.list_type[i]) {
                    same[n++] = p.list[j];
                    done[j] = true;
                }
            const cudaError_t err = list_launcher(p.list_type[i])(same, n, stream);
            if (err != cudaSuccess)
                return report_cuda(ctx.pack->host, ctx.name, "kernel launch (" + std::to_string(n) + " matrices)", err);
        }
        return DENSE_OK;
    }
    if (ctx.kind == DENSE_OP_GEMV_Q) {
        const dense_type_id t = ctx.format->type;
        const cudaError_t err = is_float(t) ? float_launcher(t)(p.gemv, stream) : list_launcher(t)(&p.gemv, 1, stream);
        return report_cuda(ctx.pack->host, ctx.name,
                           "kernel launch ({" + std::to_string(p.gemv.in) + ", " + std::to_string(p.gemv.out) + "})", err);
    }
    if (ctx.act_format->type == DENSE_TYPE_Q8_32) {
        const cudaError_t err = launch_quantize_q8_32(p.src, p.dst, p.n, stream);
        return report_cuda(ctx.pack->host, ctx.name, "kernel launch (" + std::to_string(p.n) + " elements)", err);
    }
    const cudaError_t err =
        cudaMemcpyAsync(p.dst, p.src, static_cast<std::size_t>(p.n) * sizeof(float), cudaMemcpyDeviceToDevice, stream);
    break_launch_chain(stream);  // the next kernel must not overtake the copy (launch_chain_break.hpp)
    return report_cuda(ctx.pack->host, ctx.name, "cudaMemcpyAsync (" + std::to_string(p.n) + " floats)", err);
}

dense_op_impl make_op_impl(OpContext& ctx) noexcept {
    auto impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = ctx.kind;
    impl.weight_type = ctx.format != nullptr ? ctx.format->type : DENSE_TYPE_NONE;
    impl.act_type = ctx.act_format->type;
    impl.device_kind = DENSE_DEVICE_CUDA;
    impl.priority = kPriority;
    impl.name = ctx.name.c_str();
    impl.user = &ctx;
    impl.supports = PreparedOp<Prepared, prepare, execute>::supports;
    impl.run = PreparedOp<Prepared, prepare, execute>::run;
    impl.workspace_bytes = nullptr;  // needs none
    return impl;
}

void add_op(PackState& state, dense_op_kind kind, const char* label, const CudaFormat* weight, const CudaFormat& act) {
    OpContext ctx;
    ctx.pack = &state;
    ctx.format = weight;
    ctx.act_format = &act;
    ctx.kind = kind;
    ctx.name = state.name + "." + label + "." + (weight != nullptr ? std::string(weight->name) + "." : "") + act.name;
    ctx.make_impl = make_op_impl;
    state.ops.push_back(std::move(ctx));
}

}  // namespace

void plan_gemv_ops(PackState& state) {
    for (const CudaFormat& f : cuda_formats()) {
        if (float_launcher(f.type) == nullptr && list_launcher(f.type) == nullptr) continue;
        add_op(state, DENSE_OP_GEMV_Q, "gemv_q", &f, is_float(f.type) ? f32_format() : q8_32_format());
    }
    add_op(state, DENSE_OP_GEMV_Q_MULTI, "gemv_q_multi", nullptr, q8_32_format());
    add_op(state, DENSE_OP_QUANTIZE_ACT, "quantize_act", nullptr, q8_32_format());
    add_op(state, DENSE_OP_QUANTIZE_ACT, "quantize_act", nullptr, f32_format());
}

}  // namespace dense::cuda
