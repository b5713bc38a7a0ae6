#include "dequant_ops.hpp"

#include "call_envelope.hpp"
#include "cuda_status.hpp"
#include "prepared_op.hpp"
#include "view_checks.hpp"

#include <dense/sdk/pack.hpp>

#include <cstddef>
#include <string>
#include <utility>

namespace dense::cuda {
namespace {

// Registry priority. The key includes the device kind, so this never competes with cpu-ref; it
// leaves room below for slower fallbacks and above for the faster kernels that come later.
constexpr int32_t kPriority = 10;

// A call that passed validation.
struct Prepared {
    dense_op_call call{};
    const uint8_t* src = nullptr;  // first byte to decode
    float* dst = nullptr;
    int64_t n_elements = 0;
    RowSelect select;  // EMBED_ROW with the row in device memory (src1)
};

const CudaFormat& f32_format() noexcept {
    return *find_cuda_format(DENSE_TYPE_F32);
}

std::string validate_dequantize(const OpContext& ctx, const dense_op_call& c, Prepared& p) {
    std::string err = first_error([&] { return check_counts(c, 1, 1); },
                                  [&] { return check_contiguous(c.src[0], "src0 (blocks)", *ctx.format); },
                                  [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
                                  [&] { return check_same_device(c.src[0], c.dst[0]); },
                                  [&]() -> std::string {
                                      if (element_count(c.src[0]) == element_count(c.dst[0])) return {};
                                      return "dst has " + std::to_string(element_count(c.dst[0])) +
                                             " elements, src0 has " + std::to_string(element_count(c.src[0]));
                                  });
    if (!err.empty()) return err;
    p.src = static_cast<const uint8_t*>(c.src[0].data);
    p.dst = static_cast<float*>(c.dst[0].data);
    p.n_elements = element_count(c.src[0]);
    return {};
}

// The row comes from dense_embed_row_params (one src), or from an I32 {1} tensor in device memory
// (two srcs: what a captured token step uses; the kernel reads it and writes NaN for a row outside
// the table, which the step's finite check turns into an error).
std::string validate_embed_row(const OpContext& ctx, const dense_op_call& c, Prepared& p) {
    const bool indirect = c.n_src == 2;
    int64_t row = 0;
    std::string err = first_error(
        [&] { return check_counts(c, indirect ? 2 : 1, 1); },
        [&] { return check_contiguous(c.src[0], "src0 (table)", *ctx.format); },
        [&] {
            return check_shape(c.src[0], "src0 (table)", {c.src[0].ne[0], c.src[0].ne[1], 1, 1});
        },
        [&] { return check_contiguous(c.dst[0], "dst", f32_format()); },
        [&] {
            return check_shape(c.dst[0], "dst", {c.src[0].ne[0], 1, 1, 1});
        },
        [&] { return check_same_device(c.src[0], c.dst[0]); },
        [&]() -> std::string {
            if (!indirect) return {};
            const dense_tensor_view& r = c.src[1];
            if (r.type != DENSE_TYPE_I32) return "src1 (row) must be I32";
            if (r.ne[0] != 1 || r.ne[1] != 1 || r.ne[2] != 1 || r.ne[3] != 1) return "src1 (row) must be {1}";
            if (r.data == nullptr) return "src1 (row) data is NULL";
            if (reinterpret_cast<uintptr_t>(r.data) % 4 != 0) return "src1 (row) is not 4-byte aligned";
            return check_same_device(c.src[1], c.dst[0]);
        },
        [&]() -> std::string {
            if (indirect) return {};
            const auto* params = static_cast<const dense_embed_row_params*>(c.params);
            if (params == nullptr) return "params (dense_embed_row_params) is NULL";
            if (params->hdr.abi_major != DENSE_ABI_MAJOR)
                return "params has ABI major " + std::to_string(params->hdr.abi_major);
            if (!dense::sdk::has_bytes(params, offsetof(dense_embed_row_params, row) + sizeof(int64_t)))
                return "params struct_size " + std::to_string(params->hdr.struct_size) +
                       " is too small for dense_embed_row_params";
            row = dense::sdk::read_struct(params).row;
            if (row < 0 || row >= c.src[0].ne[1])
                return "row " + std::to_string(row) + " is outside [0, " + std::to_string(c.src[0].ne[1]) + ")";
            return {};
        });
    if (!err.empty()) return err;
    // The table is contiguous, so row r starts r * row_bytes in; check_contiguous proved that the
    // whole table's byte size (row_bytes * V) fits in int64.
    const int64_t row_bytes = (c.src[0].ne[0] / ctx.format->block_elements) * ctx.format->block_bytes;
    p.src = static_cast<const uint8_t*>(c.src[0].data) + row * row_bytes;
    p.dst = static_cast<float*>(c.dst[0].data);
    p.n_elements = c.src[0].ne[0];
    if (indirect) p.select = RowSelect{static_cast<const int32_t*>(c.src[1].data), row_bytes, c.src[0].ne[1]};
    return {};
}

Verdict prepare(const OpContext& ctx, const dense_op_call* raw, Prepared& p) {
    if (Verdict v = read_call(raw, ctx.kind, p.call); v.status != DENSE_OK) return v;
    const dense_op_call& c = p.call;
    std::string err;
    switch (ctx.kind) {
        case DENSE_OP_DEQUANTIZE:
            err = validate_dequantize(ctx, c, p);
            break;
        case DENSE_OP_EMBED_ROW:
            err = validate_embed_row(ctx, c, p);
            break;
        default:
            return {DENSE_E_UNSUPPORTED, "op kind " + std::to_string(ctx.kind) + " is not implemented"};
    }
    if (!err.empty()) return invalid(std::move(err));
    return {};
}

dense_status execute(const OpContext& ctx, const Prepared& p) {
    const dense_status s = use_device(ctx.pack->host, ctx.name, p.call.dst[0].device_index);
    if (s != DENSE_OK) return s;
    const cudaError_t err =
        ctx.format->dequantize(p.src, p.dst, p.n_elements, static_cast<cudaStream_t>(p.call.stream), p.select);
    return report_cuda(ctx.pack->host, ctx.name, "kernel launch (" + std::to_string(p.n_elements) + " elements)", err);
}

// The impl for ctx (ctx.kind, ctx.format); ctx must outlive every use the host makes of it.
dense_op_impl make_op_impl(OpContext& ctx) noexcept {
    auto impl = dense::sdk::make_struct<dense_op_impl>();
    impl.op_kind = ctx.kind;
    impl.weight_type = ctx.format->type;
    impl.act_type = DENSE_TYPE_NONE;
    impl.device_kind = DENSE_DEVICE_CUDA;
    impl.priority = kPriority;
    impl.name = ctx.name.c_str();
    impl.user = &ctx;
    impl.supports = PreparedOp<Prepared, prepare, execute>::supports;
    impl.run = PreparedOp<Prepared, prepare, execute>::run;
    impl.workspace_bytes = nullptr;  // needs none
    return impl;
}

}  // namespace

void plan_dequant_ops(PackState& state) {
    for (const CudaFormat& f : cuda_formats()) {
        for (const auto& [kind, label] : {std::pair{DENSE_OP_DEQUANTIZE, "dequantize"}, std::pair{DENSE_OP_EMBED_ROW, "embed_row"}}) {
            OpContext ctx;
            ctx.pack = &state;
            ctx.format = &f;
            ctx.kind = static_cast<dense_op_kind>(kind);
            ctx.name = state.name + "." + label + "." + f.name;
            ctx.make_impl = make_op_impl;
            state.ops.push_back(std::move(ctx));
        }
    }
}

}  // namespace dense::cuda
