// The four op kinds cpu-ref registers, behind one pair of C callbacks (supports/run) that dispatch
// on the OpContext. Every call is validated completely before any byte is touched; a bad call
// returns DENSE_E_INVALID_ARGUMENT with exactly one host log line, and no exception crosses the ABI.
#include "pack/op_context.hpp"
#include "pack/view_checks.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace dense::cpuref::pack {
namespace {

// A call that passed validation: the envelope copy plus what the op derived from it.
struct Prepared {
    dense_op_call call{};
    int64_t embed_row = 0;
};

struct Verdict {
    dense_status status = DENSE_OK;
    std::string error;  // one line when status != DENSE_OK
};

Verdict invalid(std::string message) {
    return {DENSE_E_INVALID_ARGUMENT, std::move(message)};
}

const FormatKernels& f32_format() {
    return format(DENSE_TYPE_F32);
}

std::string check_counts(const dense_op_call& c, uint32_t n_src, uint32_t n_dst) {
    if (c.n_src != n_src || c.n_dst != n_dst)
        return "expected " + std::to_string(n_src) + " source(s) and " + std::to_string(n_dst) +
               " destination(s), got " + std::to_string(c.n_src) + " and " + std::to_string(c.n_dst);
    if ((n_src > 0 && c.src == nullptr) || (n_dst > 0 && c.dst == nullptr)) return "src or dst array is NULL";
    return {};
}

// Runs the checks in order and keeps the first failure.
template <class... Checks>
std::string first_error(Checks&&... checks) {
    std::string err;
    ((err.empty() ? void(err = checks()) : void()), ...);
    return err;
}

std::string validate_dequantize(const OpContext& ctx, const dense_op_call& c) {
    return first_error([&] { return check_counts(c, 1, 1); },
                       [&] { return check_contiguous(c.src[0], "src0 (blocks)", *ctx.weight); },
                       [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
                       [&]() -> std::string {
                           if (element_count(c.src[0]) == element_count(c.dst[0])) return {};
                           return "dst has " + std::to_string(element_count(c.dst[0])) + " elements, src0 has " +
                                  std::to_string(element_count(c.src[0]));
                       });
}

std::string validate_quantize_act(const OpContext& ctx, const dense_op_call& c) {
    return first_error([&] { return check_counts(c, 1, 1); },
                       [&] { return check_contiguous(c.src[0], "src0 (activation)", f32_format()); },
                       [&] { return check_contiguous(c.dst[0], "dst", *ctx.act); },
                       [&] {
                           const auto& ne = c.src[0].ne;
                           return check_shape(c.dst[0], "dst", {ne[0], ne[1], ne[2], ne[3]});
                       });
}

std::string validate_gemv(const OpContext& ctx, const dense_op_call& c) {
    return first_error([&] { return check_counts(c, 2, 1); },
                       [&] { return check_contiguous(c.src[0], "src0 (weight)", *ctx.weight); },
                       [&] {
                           return check_shape(c.src[0], "src0 (weight)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1});
                       },
                       [&] { return check_contiguous(c.src[1], "src1 (activation)", *ctx.act); },
                       [&] {
                           return check_shape(c.src[1], "src1 (activation)", {c.src[0].ne[0], 1, 1, 1});
                       },
                       [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
                       [&] {
                           return check_shape(c.dst[0], "dst", {c.src[0].ne[1], 1, 1, 1});
                       });
}

std::string validate_embed_row(const OpContext& ctx, const dense_op_call& c, int64_t* row) {
    return first_error(
        [&] { return check_counts(c, 1, 1); }, [&] { return check_contiguous(c.src[0], "src0 (table)", *ctx.weight); },
        [&] {
            return check_shape(c.src[0], "src0 (table)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1});
        },
        [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
        [&] {
            return check_shape(c.dst[0], "dst", {c.src[0].ne[0], 1, 1, 1});
        },
        [&]() -> std::string {
            const auto* p = static_cast<const dense_embed_row_params*>(c.params);
            if (p == nullptr) return "params (dense_embed_row_params) is NULL";
            if (p->hdr.abi_major != DENSE_ABI_MAJOR) return "params has ABI major " + std::to_string(p->hdr.abi_major);
            if (!dense::sdk::has_bytes(p, offsetof(dense_embed_row_params, row) + sizeof(int64_t)))
                return "params struct_size " + std::to_string(p->hdr.struct_size) +
                       " is too small for dense_embed_row_params";
            *row = dense::sdk::read_struct(p).row;
            if (*row < 0 || *row >= c.src[0].ne[1])
                return "row " + std::to_string(*row) + " is outside [0, " + std::to_string(c.src[0].ne[1]) + ")";
            return {};
        });
}

Verdict prepare(const OpContext& ctx, const dense_op_call* raw, Prepared& out) {
    if (raw == nullptr) return invalid("call is NULL");
    if (raw->hdr.abi_major != DENSE_ABI_MAJOR)
        return {DENSE_E_ABI, "call has ABI major " + std::to_string(raw->hdr.abi_major) + ", this pack speaks " +
                                 std::to_string(DENSE_ABI_MAJOR)};
    if (!dense::sdk::has_bytes(raw, offsetof(dense_op_call, params) + sizeof(void*)))
        return invalid("call struct_size " + std::to_string(raw->hdr.struct_size) + " is too small");
    out.call = dense::sdk::read_struct(raw);
    const dense_op_call& c = out.call;
    if (c.op_kind != ctx.kind)
        return invalid("op kind " + std::to_string(c.op_kind) + " routed to an impl of kind " +
                       std::to_string(ctx.kind));
    std::string err;
    switch (ctx.kind) {
        case DENSE_OP_DEQUANTIZE:
            err = validate_dequantize(ctx, c);
            break;
        case DENSE_OP_QUANTIZE_ACT:
            err = validate_quantize_act(ctx, c);
            break;
        case DENSE_OP_GEMV_Q:
            err = validate_gemv(ctx, c);
            break;
        case DENSE_OP_EMBED_ROW:
            err = validate_embed_row(ctx, c, &out.embed_row);
            break;
        default:
            return {DENSE_E_UNSUPPORTED, "op kind " + std::to_string(ctx.kind) + " is not implemented"};
    }
    if (!err.empty()) return invalid(std::move(err));
    return {};
}

void execute(const OpContext& ctx, const Prepared& p) {
    const dense_op_call& c = p.call;
    switch (ctx.kind) {
        case DENSE_OP_DEQUANTIZE:
            dequantize_row(ctx.weight->type, c.src[0].data, static_cast<float*>(c.dst[0].data),
                           element_count(c.src[0]));
            break;
        case DENSE_OP_QUANTIZE_ACT:
            quantize_activation(ctx.act->type, static_cast<const float*>(c.src[0].data), c.dst[0].data,
                                element_count(c.src[0]));
            break;
        case DENSE_OP_GEMV_Q:
            gemv(ctx.weight->type, c.src[0].data, c.src[0].ne[0], c.src[0].ne[1], c.src[1].data,
                 static_cast<float*>(c.dst[0].data));
            break;
        case DENSE_OP_EMBED_ROW: {
            const int64_t d = c.src[0].ne[0];
            const uint64_t offset = static_cast<uint64_t>(p.embed_row) * row_bytes(ctx.weight->type, d);
            dequantize_row(ctx.weight->type, static_cast<const uint8_t*>(c.src[0].data) + offset,
                           static_cast<float*>(c.dst[0].data), d);
            break;
        }
        default:
            break;  // prepare() refused it
    }
}

uint32_t supports_cb(void* user, const dense_op_call* call) noexcept {
    try {
        const auto* ctx = static_cast<const OpContext*>(user);
        if (ctx == nullptr) return 0;
        Prepared p;
        return prepare(*ctx, call, p).status == DENSE_OK ? 1u : 0u;
    } catch (...) {
        return 0;
    }
}

dense_status run_cb(void* user, const dense_op_call* call) noexcept {
    const auto* ctx = static_cast<const OpContext*>(user);
    if (ctx == nullptr) return DENSE_E_INVALID_ARGUMENT;
    return dense::sdk::guarded(ctx->host, ctx->name.c_str(), [&]() -> dense_status {
        Prepared p;
        const Verdict v = prepare(*ctx, call, p);
        if (v.status != DENSE_OK) {
            ctx->host.error(ctx->name + ": " + v.error);
            return v.status;
        }
        execute(*ctx, p);
        return DENSE_OK;
    });
}

}  // namespace

dense_op_impl make_op_impl(OpContext& ctx) noexcept {
    auto impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = ctx.kind;
    impl.weight_type = ctx.weight != nullptr ? ctx.weight->type : DENSE_TYPE_NONE;
    impl.act_type = ctx.act != nullptr ? ctx.act->type : DENSE_TYPE_NONE;
    impl.device_kind = DENSE_DEVICE_CPU;
    impl.priority = 0;  // the oracle: any faster implementation of the same key wins
    impl.name = ctx.name.c_str();
    impl.user = &ctx;
    impl.supports = supports_cb;
    impl.run = run_cb;
    impl.workspace_bytes = nullptr;  // needs none
    return impl;
}

}  // namespace dense::cpuref::pack
