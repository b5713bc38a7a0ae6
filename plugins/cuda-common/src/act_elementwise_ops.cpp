// SWIGLU, CHECK_FINITE, ARGMAX and TOP_K (same views as cpu-ref's elementwise_ops.cpp; the contracts of
// ARGMAX and TOP_K are pack-common's argmax_contract.hpp and top_k_contract.hpp).
#include "act_handlers.hpp"

#include "act_quantized_copy.hpp"
#include "kernels/act_launchers.hpp"

#include <dense/pack_common/argmax_contract.hpp>
#include <dense/pack_common/top_k_contract.hpp>

#include <cstdint>

namespace dense::cuda::act {

// gate {n}, up {n} -> dst {n}; dst must not overlap the inputs (the ABI does not allow aliasing).
std::string handle_swiglu(Invocation& inv) {
    const dense_op_call& c = inv.call;
    const bool fused = inv.ctx.fused_act != DENSE_TYPE_NONE;
    int64_t n = 0;
    std::string err = first_error(
        [&] { return check_counts(c, 2, fused ? 2 : 1); }, [&] { return check_2d(c.src[0], "src0 (gate)"); },
        [&] {
            n = c.src[0].ne[0];
            return check_matrix(c.src[0], "src0 (gate)", DENSE_TYPE_F32, n, 1, Rows::Contiguous);
        },
        [&] { return check_matrix(c.src[1], "src1 (up)", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, 1, Rows::Contiguous); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[0], "src0 (gate)"); },
        [&] { return check_disjoint(c.dst[0], "dst", c.src[1], "src1 (up)"); },
        [&] { return fused ? check_quantized_copy(c, n, 1) : std::string(); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    const Q8_32Out quantized = fused ? quantized_copy_target(c) : Q8_32Out{};
    launch(inv, "swiglu launch", [&](cudaStream_t s) {
        return launch_swiglu(f32_in(c.src[0]), f32_in(c.src[1]), f32_out(c.dst[0]), n, quantized, s);
    });
    return {};
}

// x {n} -> the I32 status word (device memory) is set to 1 if x holds a NaN or an Inf, else left as is.
std::string handle_check_finite(Invocation& inv) {
    const dense_op_call& c = inv.call;
    std::string err = first_error(
        [&] { return check_counts(c, 1, 1); }, [&] { return check_2d(c.src[0], "src0 (x)"); },
        [&] { return check_matrix(c.src[0], "src0 (x)", DENSE_TYPE_F32, c.src[0].ne[0], 1, Rows::Contiguous); },
        [&] { return check_i32_scalar(c.dst[0], "dst (status)"); },
        [&] { return check_disjoint(c.dst[0], "dst (status)", c.src[0], "src0 (x)"); });
    if (!err.empty() || inv.phase != Phase::Run) return err;
    launch(inv, "check_finite launch", [&](cudaStream_t s) {
        return launch_check_finite(f32_in(c.src[0]), c.src[0].ne[0], static_cast<int32_t*>(c.dst[0].data), s);
    });
    return {};
}

// x {n} -> I32 {1} (device memory): the lowest index of the largest element (DENSE_OP_ARGMAX). Its two
// kernels pass the parts' bests through the workspace (argmax_workspace_bytes).
std::string handle_argmax(Invocation& inv) {
    const dense_op_call& c = inv.call;
    int64_t n = 0;
    std::string err = first_error([&] { return check_counts(c, 1, 1); },
                                  [&] { return pack_common::check_argmax_call(c, n); });
    if (!err.empty() || inv.phase == Phase::Check) return err;
    inv.workspace_needed = argmax_workspace_bytes();
    if (inv.phase != Phase::Run) return {};
    if (std::string e = check_run_workspace(c, inv.workspace_needed, alignof(int64_t)); !e.empty()) return e;
    launch(inv, "argmax launch", [&](cudaStream_t s) {
        return launch_argmax(f32_in(c.src[0]), n, static_cast<int32_t*>(c.dst[0].data), c.workspace, s);
    });
    return {};
}

// x {n} -> ids I32 {k}, values F32 {k} (device memory): the k best candidates (DENSE_OP_TOP_K). Its
// three kernels pass the group maxima and the filtered keys through the workspace (top_k_workspace_bytes).
std::string handle_top_k(Invocation& inv) {
    const dense_op_call& c = inv.call;
    int64_t n = 0, k = 0;
    std::string err = first_error([&] { return check_counts(c, 1, 2); },
                                  [&] { return pack_common::check_top_k_call(c, n, k); });
    if (!err.empty() || inv.phase == Phase::Check) return err;
    inv.workspace_needed = top_k_workspace_bytes(n, k);
    if (inv.phase != Phase::Run) return {};
    if (std::string e = check_run_workspace(c, inv.workspace_needed, alignof(uint64_t)); !e.empty()) return e;
    launch(inv, "top_k launch", [&](cudaStream_t s) {
        return launch_top_k(f32_in(c.src[0]), n, k, static_cast<int32_t*>(c.dst[0].data), f32_out(c.dst[1]),
                            c.workspace, s);
    });
    return {};
}

}  // namespace dense::cuda::act
