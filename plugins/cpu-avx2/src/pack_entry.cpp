// libdense-cpu-avx2.so: GEMV_Q against Q8_32 activations for all 12 quantized formats (IQ4_XS, IQ4_NL,
// IQ3_XXS, IQ3_S, IQ2_XS, IQ2_S, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_0) with AVX2 (kernels/, one file
// per format). Its impls have priority 1, above
// cpu-ref's 0, so they serve those keys wherever the CPU has AVX2 and F16C. The activation choice of a CPU session
// is unchanged (each weight's own activation format first, packs/activation_choice.cpp), so these
// impls run only where the activation is Q8_32: the CPU rows of a row split beside a GPU.
//
// Where the CPU also has AVX-512 F/BW/VL/VNNI, every format gets a second impl (kernels/avx512/,
// priority 2, same results bit for bit) that wins selection, and the four grid formats a third with
// their codebook lookups as whole-vector gathers (priorities 2 and 3 by CPU vendor, whole_gathers_first);
// the pack stays one (it is the x86 SIMD pack: its AVX2 impls serve CPUs without AVX-512).
// DENSE_CPU_AVX512=0 leaves those impls out, to measure one against the other.
#include "gemv_op.hpp"

#include <dense/sdk/pack.hpp>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#ifndef DENSE_CPUAVX2_VERSION
#define DENSE_CPUAVX2_VERSION "0.0.0"
#endif

namespace dense::cpuavx2 {
namespace {

constexpr GemvFormat kFormats[] = {
    {DENSE_TYPE_IQ4_XS, "cpu-avx2.gemv_q.iq4_xs.q8_32", 256, 136, dot_rows_iq4_xs_q8_32},
    {DENSE_TYPE_IQ4_NL, "cpu-avx2.gemv_q.iq4_nl.q8_32", 32, 18, dot_rows_iq4_nl_q8_32},
    {DENSE_TYPE_IQ3_XXS, "cpu-avx2.gemv_q.iq3_xxs.q8_32", 256, 98, dot_rows_iq3_xxs_q8_32},
    {DENSE_TYPE_IQ3_S, "cpu-avx2.gemv_q.iq3_s.q8_32", 256, 110, dot_rows_iq3_s_q8_32},
    {DENSE_TYPE_IQ2_XS, "cpu-avx2.gemv_q.iq2_xs.q8_32", 256, 74, dot_rows_iq2_xs_q8_32},
    {DENSE_TYPE_IQ2_S, "cpu-avx2.gemv_q.iq2_s.q8_32", 256, 82, dot_rows_iq2_s_q8_32},
    {DENSE_TYPE_Q2_K, "cpu-avx2.gemv_q.q2_k.q8_32", 256, 84, dot_rows_q2_k_q8_32},
    {DENSE_TYPE_Q3_K, "cpu-avx2.gemv_q.q3_k.q8_32", 256, 110, dot_rows_q3_k_q8_32},
    {DENSE_TYPE_Q4_K, "cpu-avx2.gemv_q.q4_k.q8_32", 256, 144, dot_rows_q4_k_q8_32},
    {DENSE_TYPE_Q5_K, "cpu-avx2.gemv_q.q5_k.q8_32", 256, 176, dot_rows_q5_k_q8_32},
    {DENSE_TYPE_Q6_K, "cpu-avx2.gemv_q.q6_k.q8_32", 256, 210, dot_rows_q6_k_q8_32},
    {DENSE_TYPE_Q8_0, "cpu-avx2.gemv_q.q8_0.q8_32", 32, 34, dot_rows_q8_0_q8_32},
};

constexpr GemvFormat kVnni512Formats[] = {
    {DENSE_TYPE_IQ4_XS, "cpu-avx2.gemv_q.iq4_xs.q8_32.avx512vnni", 256, 136, dot_rows_iq4_xs_q8_32_vnni512},
    {DENSE_TYPE_Q4_K, "cpu-avx2.gemv_q.q4_k.q8_32.avx512vnni", 256, 144, dot_rows_q4_k_q8_32_vnni512},
    {DENSE_TYPE_Q5_K, "cpu-avx2.gemv_q.q5_k.q8_32.avx512vnni", 256, 176, dot_rows_q5_k_q8_32_vnni512},
    {DENSE_TYPE_Q6_K, "cpu-avx2.gemv_q.q6_k.q8_32.avx512vnni", 256, 210, dot_rows_q6_k_q8_32_vnni512},
    {DENSE_TYPE_Q3_K, "cpu-avx2.gemv_q.q3_k.q8_32.avx512vnni", 256, 110, dot_rows_q3_k_q8_32_vnni512},
    {DENSE_TYPE_Q2_K, "cpu-avx2.gemv_q.q2_k.q8_32.avx512vnni", 256, 84, dot_rows_q2_k_q8_32_vnni512},
    {DENSE_TYPE_IQ3_S, "cpu-avx2.gemv_q.iq3_s.q8_32.avx512vnni", 256, 110, dot_rows_iq3_s_q8_32_vnni512},
    {DENSE_TYPE_IQ3_XXS, "cpu-avx2.gemv_q.iq3_xxs.q8_32.avx512vnni", 256, 98, dot_rows_iq3_xxs_q8_32_vnni512},
    {DENSE_TYPE_IQ2_XS, "cpu-avx2.gemv_q.iq2_xs.q8_32.avx512vnni", 256, 74, dot_rows_iq2_xs_q8_32_vnni512},
    {DENSE_TYPE_IQ2_S, "cpu-avx2.gemv_q.iq2_s.q8_32.avx512vnni", 256, 82, dot_rows_iq2_s_q8_32_vnni512},
    {DENSE_TYPE_IQ4_NL, "cpu-avx2.gemv_q.iq4_nl.q8_32.avx512vnni", 32, 18, dot_rows_iq4_nl_q8_32_vnni512},
    {DENSE_TYPE_Q8_0, "cpu-avx2.gemv_q.q8_0.q8_32.avx512vnni", 32, 34, dot_rows_q8_0_q8_32_vnni512},
};

// The grid formats' VNNI dots with whole-vector gathers (kernels/avx512/vnni_common.hpp, Lookup): the
// same bits as the split-lookup impls above. Both are registered where VNNI is; whole_gathers_first()
// says which ranks higher.
constexpr GemvFormat kVnni512GatherFormats[] = {
    {DENSE_TYPE_IQ3_S, "cpu-avx2.gemv_q.iq3_s.q8_32.avx512vnni.gather", 256, 110, dot_rows_iq3_s_q8_32_vnni512_gather},
    {DENSE_TYPE_IQ3_XXS, "cpu-avx2.gemv_q.iq3_xxs.q8_32.avx512vnni.gather", 256, 98, dot_rows_iq3_xxs_q8_32_vnni512_gather},
    {DENSE_TYPE_IQ2_XS, "cpu-avx2.gemv_q.iq2_xs.q8_32.avx512vnni.gather", 256, 74, dot_rows_iq2_xs_q8_32_vnni512_gather},
    {DENSE_TYPE_IQ2_S, "cpu-avx2.gemv_q.iq2_s.q8_32.avx512vnni.gather", 256, 82, dot_rows_iq2_s_q8_32_vnni512_gather},
};

// Whole-vector gathers measured faster on Intel Xeons (the build machine of session 45; the GPU test
// machines' hosts are Xeons too) and split lookups on AMD Zen 5 (sessions 11-23), so the choice is by
// vendor; CPUs of other vendors were never measured and keep the split form. DENSE_CPU_GATHER=1 / 0
// overrides it (A/B runs).
bool whole_gathers_first() {
    if (const char* v = std::getenv("DENSE_CPU_GATHER"); v != nullptr) return std::string(v) != "0";
    __builtin_cpu_init();
    return __builtin_cpu_is("intel");
}

// The CPU and the OS (ZMM state saved: libgcc's check includes XCR0) support the VNNI kernels, and
// DENSE_CPU_AVX512 does not turn them off.
bool use_avx512_vnni() {
    if (const char* v = std::getenv("DENSE_CPU_AVX512"); v != nullptr && std::string(v) == "0") return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512vnni");
}

struct PackState {
    dense_pack pack = dense::sdk::make_struct<dense_pack>();
    dense::sdk::Host host{nullptr};
    struct Op {
        PackState* state;
        const GemvFormat* format;
    };
    std::vector<std::unique_ptr<Op>> ops;
};

uint32_t supports_cb(void* user, const dense_op_call* call) noexcept {
    try {
        const auto* op = static_cast<const PackState::Op*>(user);
        return call != nullptr && check_gemv(*op->format, *call).empty() ? 1u : 0u;
    } catch (...) {
        return 0;
    }
}

dense_status run_cb(void* user, const dense_op_call* call) noexcept {
    const auto* op = static_cast<const PackState::Op*>(user);
    if (call == nullptr) return DENSE_E_INVALID_ARGUMENT;
    return dense::sdk::guarded(op->state->host, "cpu-avx2", [&]() -> dense_status {
        const std::string err = run_gemv(*op->format, *call);
        if (err.empty()) return DENSE_OK;
        op->state->host.error(std::string(op->format->op_name) + ": " + err);
        return DENSE_E_INVALID_ARGUMENT;
    });
}

// 1 for the CPU, plus 1 for the ISA it was built for (the design's rule for CPU packs), when the CPU
// has it: AVX2 and F16C. 0 elsewhere.
uint32_t score(const dense_hw_desc& hw) {
    if (hw.device_kind != DENSE_DEVICE_CPU) return 0;
    const uint64_t need = DENSE_CPU_AVX2 | DENSE_CPU_F16C;
    return (hw.cpu_features & need) == need ? 2u : 0u;
}

dense_status init(dense::sdk::Host host, dense_pack** out) {
    auto state = std::make_unique<PackState>();
    state->host = host;
    std::vector<std::pair<const GemvFormat*, uint32_t>> impls;  // format, priority
    for (const GemvFormat& f : kFormats) impls.emplace_back(&f, 1u);
    if (use_avx512_vnni()) {
        // Priority 2 and 3: the grid formats' two lookup flavours in the order whole_gathers_first() says.
        const bool gathers_first = whole_gathers_first();
        for (const GemvFormat& f : kVnni512Formats) {
            bool grid = false;
            for (const GemvFormat& g : kVnni512GatherFormats) grid = grid || g.weight == f.weight;
            impls.emplace_back(&f, grid && !gathers_first ? 3u : 2u);
        }
        for (const GemvFormat& f : kVnni512GatherFormats) impls.emplace_back(&f, gathers_first ? 3u : 2u);
    }
    for (const auto& [format, priority] : impls) {
        const GemvFormat& f = *format;
        state->ops.push_back(std::make_unique<PackState::Op>(PackState::Op{state.get(), &f}));
        auto impl = dense::sdk::make_struct<dense_op_impl>();
        impl.op_kind = DENSE_OP_GEMV_Q;
        impl.weight_type = f.weight;
        impl.act_type = DENSE_TYPE_Q8_32;
        impl.device_kind = DENSE_DEVICE_CPU;
        impl.priority = priority;
        impl.name = f.op_name;
        impl.user = state->ops.back().get();
        impl.supports = supports_cb;
        impl.run = run_cb;
        if (const dense_status s = host.register_op(impl); s != DENSE_OK) {
            host.error(std::string("registering ") + f.op_name + " failed with status " + std::to_string(s));
            return s;
        }
    }
    state->pack.name = "cpu-avx2";
    state->pack.version = DENSE_CPUAVX2_VERSION;
    state->pack.device_kind = DENSE_DEVICE_CPU;
    state->pack.device = nullptr;
    state->pack.user = state.get();
    *out = &state.release()->pack;
    return DENSE_OK;
}

void release(dense_pack* pack) {
    if (pack != nullptr) delete static_cast<PackState*>(pack->user);
}

}  // namespace
}  // namespace dense::cpuavx2

DENSE_PACK_ENTRY_POINTS(dense::cpuavx2::score, dense::cpuavx2::init, dense::cpuavx2::release)
