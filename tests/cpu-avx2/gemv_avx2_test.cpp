// The cpu-avx2 pack's GEMVs (Q8_32 activations) against cpu-ref's gemv_act on fresh random blocks:
// bit for bit (the pack computes the same integer block sums and the same float operations in the same
// order, plugins/cpu-avx2/src/kernels/row_dots.hpp), for every format it registers, at several shapes,
// realistic and full-range fp16 scales, with and without accumulation, on row ranges that start
// anywhere (how the row-split executor calls it), with row counts that are and are not multiples of
// the eight rows the kernels take at a time. Also: the pack wins op selection over cpu-ref for
// its keys, and leaves CPU sessions' own activation formats alone. Skips where the CPU lacks AVX2.
#include "common/pack_loading.hpp"
#include "common/test_paths.hpp"
#include "cpu-ref/quant_test_support.hpp"
#include "packs/pack_manager.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace dense::test {
namespace {

packs::PackManager& avx2_and_ref() {
    // Never destroyed: packs stay loaded for the whole process (pack_manager.hpp).
    static packs::PackManager* pm = load_packs_from({build_pack_dir() / "libdense-cpu-ref.so", build_pack_dir() / "libdense-cpu-avx2.so"}).release();
    return *pm;
}

// The cpu-avx2 impls of GEMV_Q(type, Q8_32) on the CPU (the AVX2 one, and the AVX-512 VNNI one where
// this CPU has it), highest priority first, or none and the reason.
std::vector<const packs::OpCandidate*> avx2_gemvs(dense_type_id type, std::string& why) {
    const auto& pm = avx2_and_ref();
    const packs::PackRecord* p = pm.find_pack("cpu-avx2");
    if (p == nullptr) {
        why = "cpu-avx2 pack not built";
        return {};
    }
    if (!p->usable()) {
        why = "cpu-avx2 not usable on this CPU (" + p->reason + ")";
        return {};
    }
    std::vector<const packs::OpCandidate*> found;
    for (const auto& c : pm.registry().candidates(packs::OpKey{DENSE_OP_GEMV_Q, type, DENSE_TYPE_Q8_32, DENSE_DEVICE_CPU}))
        if (c.pack == "cpu-avx2") found.push_back(&c);
    if (found.empty()) why = "cpu-avx2 registers no GEMV for this format";
    return found;
}

const packs::OpCandidate* avx2_gemv(dense_type_id type, std::string& why) {
    const auto found = avx2_gemvs(type, why);
    return found.empty() ? nullptr : found.front();
}

dense_tensor_view view(const void* data, dense_type_id type, int64_t ne0, int64_t ne1, int64_t row_bytes, int64_t block_bytes) {
    dense_tensor_view v{};
    v.data = const_cast<void*>(data);
    v.type = type;
    v.device_kind = DENSE_DEVICE_CPU;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.ne[2] = v.ne[3] = 1;
    v.nb[0] = block_bytes;
    v.nb[1] = row_bytes;
    v.nb[2] = v.nb[3] = row_bytes * ne1;
    return v;
}

const dense_type_id kFormats[] = {DENSE_TYPE_IQ4_XS, DENSE_TYPE_IQ4_NL, DENSE_TYPE_IQ3_XXS, DENSE_TYPE_IQ3_S, DENSE_TYPE_IQ2_XS, DENSE_TYPE_IQ2_S, DENSE_TYPE_Q2_K, DENSE_TYPE_Q3_K, DENSE_TYPE_Q4_K, DENSE_TYPE_Q5_K, DENSE_TYPE_Q6_K, DENSE_TYPE_Q8_0};

class Avx2Gemv : public ::testing::TestWithParam<dense_type_id> {};

TEST_P(Avx2Gemv, BitIdenticalToCpuRefOnRandomBlocks) {
    const dense_type_id type = GetParam();
    std::string why;
    const auto impls = avx2_gemvs(type, why);
    if (impls.empty()) GTEST_SKIP() << why;
    for (const packs::OpCandidate* op : impls) {
    SCOPED_TRACE(op->impl.name);
    const cpuref::FormatKernels& f = cpuref::format(type);
    std::mt19937_64 rng(0xA5A5 + type);
    struct Shape {
        int64_t in, rows;
    };
    std::vector<Shape> shapes{{256, 1}, {512, 37}, {5120, 96}, {17408, 9}};
    // The 32-element formats also take rows that end inside a 256-element unit (the kernels' tail).
    if (f.block_elements == 32) shapes.push_back({288, 19});
    for (const Shape s : shapes) {
        for (const auto range : {quant::ScaleRange::Moderate, quant::ScaleRange::Full}) {
            for (const bool accumulate : {false, true}) {
                SCOPED_TRACE(std::string(f.name) + " " + std::to_string(s.in) + " x " + std::to_string(s.rows) +
                             (range == quant::ScaleRange::Full ? " full-range scales" : "") + (accumulate ? " +=" : ""));
                const int64_t blocks_per_row = s.in / f.block_elements;
                const auto w = quant::random_blocks(f, blocks_per_row * s.rows, rng, range);
                const auto x = quant::random_activation(s.in, rng);
                std::vector<uint8_t> xq(static_cast<size_t>(s.in / 32 * 40));
                cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), xq.data(), s.in);
                std::vector<float> start(static_cast<size_t>(s.rows));
                for (auto& v : start) v = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);

                std::vector<float> want(static_cast<size_t>(s.rows));
                cpuref::gemv_act(type, DENSE_TYPE_Q8_32, w.data(), s.in, s.rows, xq.data(), want.data());
                if (accumulate)
                    for (size_t r = 0; r < want.size(); ++r) want[r] = start[r] + want[r];

                // Two calls over rows [0, cut) and [cut, rows), as the executor's row chunks.
                std::vector<float> got = accumulate ? start : std::vector<float>(want.size(), -7.0f);
                const int64_t row_bytes = blocks_per_row * f.block_bytes;
                const int64_t cut = s.rows / 3;
                auto params = dense::sdk::make_struct<dense_gemv_params>();
                params.accumulate = accumulate ? 1u : 0u;
                for (const auto& [first, end] : {std::pair{int64_t{0}, cut}, std::pair{cut, s.rows}}) {
                    if (end == first) continue;
                    const dense_tensor_view src[2] = {
                        view(w.data() + first * row_bytes, type, s.in, end - first, row_bytes, f.block_bytes),
                        view(xq.data(), DENSE_TYPE_Q8_32, s.in, 1, s.in / 32 * 40, 40)};
                    dense_tensor_view dst = view(got.data() + first, DENSE_TYPE_F32, end - first, 1, 4 * (end - first), 4);
                    auto call = dense::sdk::make_struct<dense_op_call>();
                    call.op_kind = DENSE_OP_GEMV_Q;
                    call.n_src = 2;
                    call.src = src;
                    call.n_dst = 1;
                    call.dst = &dst;
                    call.params = &params;
                    ASSERT_NE(op->impl.supports(op->impl.user, &call), 0u);
                    ASSERT_EQ(op->impl.run(op->impl.user, &call), DENSE_OK);
                }
                for (size_t r = 0; r < want.size(); ++r)
                    ASSERT_EQ(std::memcmp(&got[r], &want[r], 4), 0)
                        << "row " << r << ": got " << quant::hex32(got[r]) << ", cpu-ref " << quant::hex32(want[r]);
            }
        }
    }
    }
}

INSTANTIATE_TEST_SUITE_P(Formats, Avx2Gemv, ::testing::ValuesIn(kFormats),
                         [](const auto& p) { return std::string(cpuref::format(p.param).name); });

// Selection: for its keys the pack outranks cpu-ref (impl priority), and a call it cannot take (a view
// on another device) is refused by its supports() rather than run.
TEST(Avx2Pack, WinsSelectionForItsKeysAndRefusesForeignViews) {
    std::string why;
    if (avx2_gemv(DENSE_TYPE_Q4_K, why) == nullptr) GTEST_SKIP() << why;
    auto& pm = avx2_and_ref();
    std::vector<uint8_t> w(144 * 4), xq(256 / 32 * 40);
    std::vector<float> y(4);
    const dense_tensor_view src[2] = {view(w.data(), DENSE_TYPE_Q4_K, 256, 4, 144, 144),
                                      view(xq.data(), DENSE_TYPE_Q8_32, 256, 1, 320, 40)};
    dense_tensor_view dst = view(y.data(), DENSE_TYPE_F32, 4, 1, 16, 4);
    auto call = dense::sdk::make_struct<dense_op_call>();
    call.op_kind = DENSE_OP_GEMV_Q;
    call.n_src = 2;
    call.src = src;
    call.n_dst = 1;
    call.dst = &dst;
    const packs::OpKey key{DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_32, DENSE_DEVICE_CPU};
    const packs::OpCandidate* chosen = pm.select_op(key, call, 0);
    ASSERT_NE(chosen, nullptr);
    EXPECT_EQ(chosen->pack, "cpu-avx2");
    // Q8_K activations (a CPU session's own for Q4_K) stay with cpu-ref.
    const packs::OpKey own{DENSE_OP_GEMV_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_K, DENSE_DEVICE_CPU};
    for (const auto& c : pm.registry().candidates(own)) EXPECT_NE(c.pack, "cpu-avx2");

    dense_tensor_view on_gpu[2] = {src[0], src[1]};
    on_gpu[1].device_kind = DENSE_DEVICE_CUDA;
    call.src = on_gpu;
    const packs::OpCandidate* avx2 = avx2_gemv(DENSE_TYPE_Q4_K, why);
    EXPECT_EQ(avx2->impl.supports(avx2->impl.user, &call), 0u);
    EXPECT_EQ(avx2->impl.run(avx2->impl.user, &call), DENSE_E_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace dense::test
