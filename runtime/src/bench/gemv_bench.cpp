#include "bench/gemv_bench.hpp"

#include "bench/op_call.hpp"
#include "bench/timing.hpp"
#include "core/type_table.hpp"
#include "packs/activation_choice.hpp"
#include "plan/graph_options.hpp"
#include "synth/block_fill.hpp"

#include <dense/sdk/pack.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace dense::bench {

std::vector<GemvShape> qwen35_27b_gemv_shapes() {
    return {
        {"ffn_gate/up", 5120, 17408},
        {"ffn_down", 17408, 5120},
        {"attn_q+gate", 5120, 12288},
        {"ssm_qkv", 5120, 10240},
        {"attn_output", 6144, 5120},
        {"lm_head", 5120, 248320},
    };
}

namespace {

// One case: `copies` identical matrices (so every call misses L2), the activation quantized once.
GemvResult run_case(const packs::PackManager& packs, size_t device, const MemoryFactory& memory,
                    const GemvBenchOptions& o, dense_type_id type, const GemvShape& shape) {
    const auto& dev = packs.devices().at(device);
    const TypeInfo& t = *global_type_table().find(type);
    const uint64_t w_bytes = tensor_bytes(type, {shape.in, shape.out, 1, 1});
    const int copies = static_cast<int>(std::clamp<uint64_t>((o.rotate_bytes + w_bytes - 1) / w_bytes, 2, 64));
    const dense_type_id act = packs::gemv_activation_chooser(packs, device)(type);
    const int64_t cols = std::max<int64_t>(1, o.gemm_cols);  // > 1: GEMM_Q, the columns as one vector
    const bool gemm = cols > 1;

    auto mem = memory();
    std::vector<std::byte> host(w_bytes);
    synth::Rng rng(0x6E3Fu + type);
    synth::fill_blocks(synth::make_recipe(type, 1.0 / std::sqrt(static_cast<double>(shape.in))), rng, host.data(),
                       w_bytes / t.block_bytes);
    std::vector<void*> w(static_cast<size_t>(copies));
    for (auto& p : w) {
        p = mem->alloc(w_bytes, "gemv bench weights");
        mem->to_device(p, host.data(), w_bytes);
    }
    std::vector<float> x(static_cast<size_t>(shape.in * cols));
    for (auto& v : x) v = static_cast<float>(rng.uniform(-1.0, 1.0));
    void* x_dev = mem->alloc(x.size() * 4, "gemv bench input");
    mem->to_device(x_dev, x.data(), x.size() * 4);
    const int64_t n_act = shape.in * cols;
    void* a_dev = mem->alloc(tensor_bytes(act, {n_act, 1, 1, 1}), "gemv bench activation");
    void* y_dev = mem->alloc(static_cast<uint64_t>(shape.out * cols) * 4, "gemv bench output");

    OpCall quantize(packs, device, {DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_NONE, act, dev.kind()},
                    {contiguous_view(x_dev, DENSE_TYPE_F32, dev, {n_act, 1, 1, 1})},
                    {contiguous_view(a_dev, act, dev, {n_act, 1, 1, 1})}, nullptr, mem->stream());
    quantize.run();
    // A GEMM in the order the session's prompt steps ask for (plan::prefill_gemm_free_order); the free
    // order's workspace (the same for every copy) allocated once.
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    params.order = gemm && plan::prefill_gemm_free_order() ? DENSE_GEMM_ORDER_FREE : DENSE_GEMM_ORDER_EXACT;
    std::vector<std::unique_ptr<OpCall>> calls;
    for (void* p : w)
        calls.push_back(std::make_unique<OpCall>(
            packs, device, packs::OpKey{gemm ? DENSE_OP_GEMM_Q : DENSE_OP_GEMV_Q, type, act, dev.kind()},
            std::vector<dense_tensor_view>{contiguous_view(p, type, dev, {shape.in, shape.out, 1, 1}),
                                           contiguous_view(a_dev, act, dev, {n_act, 1, 1, 1})},
            std::vector<dense_tensor_view>{
                gemm ? contiguous_view(y_dev, DENSE_TYPE_F32, dev, {shape.out, cols, 1, 1})
                     : contiguous_view(y_dev, DENSE_TYPE_F32, dev, {shape.out, 1, 1, 1})},
            gemm ? static_cast<const void*>(&params) : nullptr, mem->stream()));
    if (const uint64_t ws = calls.front()->workspace_bytes(); ws > 0) {
        void* ws_dev = mem->alloc(ws, "gemm bench workspace");
        for (auto& c : calls) c->set_workspace(ws_dev, ws);
    }
    mem->sync();

    const int per_timing = std::max(copies, 20);
    const Timing timing = time_device_work(
        *mem, [&] { for (int i = 0; i < per_timing; ++i) calls[static_cast<size_t>(i % copies)]->run(); }, o.reps);

    GemvResult r;
    r.format = t.name;
    r.shape = shape.label;
    r.impl = calls.front()->impl_name();
    r.act = global_type_table().find(act) ? global_type_table().find(act)->name : std::to_string(act);
    r.in = shape.in;
    r.out = shape.out;
    r.weight_bytes = w_bytes;
    r.seconds = timing.best() / per_timing;
    r.gbs = static_cast<double>(w_bytes) / r.seconds / 1e9;
    r.fraction = o.read_ceiling_gbs > 0 ? r.gbs / o.read_ceiling_gbs : 0;
    r.cols = cols;
    r.tmacs = static_cast<double>(shape.in) * static_cast<double>(shape.out) * static_cast<double>(cols) / r.seconds / 1e12;
    if (gemm) {
        r.shape += " T=" + std::to_string(cols);
        r.impl += params.order == DENSE_GEMM_ORDER_FREE ? " (free order)" : " (exact order)";
    }
    return r;
}

}  // namespace

std::vector<GemvResult> bench_gemv(const packs::PackManager& packs, size_t device, const MemoryFactory& memory,
                                   const GemvBenchOptions& o) {
    std::vector<GemvResult> out;
    for (dense_type_id type : o.formats)
        for (const GemvShape& s : o.shapes) out.push_back(run_case(packs, device, memory, o, type, s));
    return out;
}

std::string gemm_markdown(const std::vector<GemvResult>& results) {
    std::ostringstream o;
    o << "\n| GEMM format | shape | in x out | T | µs | GB/s of weight | T-int8-MAC/s | impl |\n";
    o << "|---|---|---|---:|---:|---:|---:|---|\n";
    char buf[64];
    // The CUDA packs' kernel choice (for A/B runs): DENSE_CUDA_GEMM=dp4a selects their dp4a GEMM.
    const char* env = std::getenv("DENSE_CUDA_GEMM");
    const std::string kernel = env != nullptr ? std::string(" (DENSE_CUDA_GEMM=") + env + ")" : "";
    for (const auto& g : results) {
        if (g.cols <= 1) continue;
        o << "| " << g.format << " | " << g.shape << " | " << g.in << " x " << g.out << " | " << g.cols << " | ";
        std::snprintf(buf, sizeof buf, "%.1f | %.0f | %.2f", g.seconds * 1e6, g.gbs, g.tmacs);
        o << buf << " | " << g.impl << kernel << " |\n";
    }
    return o.str();
}

}  // namespace dense::bench
