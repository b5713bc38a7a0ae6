// GEMM_Q in cpu-ref (dense_abi.h, ABI 1.9) through the pack's C entry points: registered for every
// (weight, activation) pair GEMV_Q is; column j of a GEMM bit for bit the GEMV_Q of activation j
// quantized alone, with and without accumulate, for every such pair and T in {1, 2, 5}, into a dst
// whose columns are further apart than OUT floats (the gaps and the tail must stay untouched);
// malformed calls refused with one log line and nothing written.
#include "cpu-ref/ops_pack_support.hpp"
#include "cpu-ref/quant_test_support.hpp"

#include "kernels/formats.hpp"

#include <bit>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace dense;
using namespace dense::test;

// A NaN payload no GEMV produces: a float that still holds it was never written.
constexpr uint32_t kPoisonBits = 0x7FA5DEADu;
const float kPoison = std::bit_cast<float>(kPoisonBits);

constexpr int64_t kIn = 512;  // two 256-element blocks per row: every format's block divides it
constexpr int64_t kOut = 7;
constexpr int64_t kGap = 3;     // floats between one column's end and the next column
constexpr int64_t kGuard = 16;  // floats after the last column

struct Pair {
    dense_type_id weight;
    dense_type_id act;
};

std::string pair_name(const Pair& p) {
    return std::string(cpuref::format(p.weight).name) + " x " + cpuref::format(p.act).name;
}

class CpuRefGemm : public PackHarness {
protected:
    // The (weight, activation) pairs cpu-ref registers GEMV_Q for.
    std::vector<Pair> gemv_pairs() const {
        std::vector<Pair> pairs;
        for (const auto& impl : host_.ops)
            if (impl.op_kind == DENSE_OP_GEMV_Q) pairs.push_back({impl.weight_type, impl.act_type});
        return pairs;
    }

    // dst poisoned everywhere: {kOut, cols} with rows kOut + kGap floats apart, then kGuard floats.
    static std::vector<float> poisoned_dst(int64_t cols) {
        return std::vector<float>(static_cast<std::size_t>((kOut + kGap) * cols + kGuard), kPoison);
    }
};

TEST_F(CpuRefGemm, RegisteredForEveryGemvPair) {
    const auto pairs = gemv_pairs();
    ASSERT_EQ(pairs.size(), 27u);  // 15 storable formats with their own activation, 12 also with Q8_32
    std::set<std::pair<dense_type_id, dense_type_id>> gemm;
    for (std::size_t i = 0; i < host_.ops.size(); ++i) {
        const dense_op_impl& impl = host_.ops[i];
        if (impl.op_kind != DENSE_OP_GEMM_Q) continue;
        EXPECT_TRUE(gemm.insert({impl.weight_type, impl.act_type}).second) << host_.names[i] << " registered twice";
        EXPECT_EQ(impl.priority, 0) << host_.names[i];
        EXPECT_EQ(impl.device_kind, DENSE_DEVICE_CPU) << host_.names[i];
        EXPECT_EQ(host_.names[i].rfind("cpu-ref.gemm_q.", 0), 0u) << host_.names[i];
    }
    EXPECT_EQ(gemm.size(), pairs.size());
    for (const Pair& p : pairs) EXPECT_EQ(gemm.count({p.weight, p.act}), 1u) << pair_name(p);
    EXPECT_TRUE(host_.logs.empty());
}

// Every pair, T in {1, 2, 5}, accumulate off and on: column j equals GEMV_Q of activation j alone
// (T = 5 in the free order of ABI 1.13, which cpu-ref answers exactly too).
TEST_F(CpuRefGemm, EveryColumnIsBitIdenticalToTheGemvOfItsActivationAlone) {
    std::mt19937_64 rng(1909);
    for (const Pair& pair : gemv_pairs()) {
        const cpuref::FormatKernels& wf = cpuref::format(pair.weight);
        const dense_op_impl* gemm = host_.find(DENSE_OP_GEMM_Q, pair.weight, pair.act);
        const dense_op_impl* gemv = host_.find(DENSE_OP_GEMV_Q, pair.weight, pair.act);
        ASSERT_NE(gemm, nullptr) << pair_name(pair);
        ASSERT_NE(gemv, nullptr) << pair_name(pair);
        auto weight = quant::random_blocks(wf, kOut * kIn / wf.block_elements, rng, quant::ScaleRange::Moderate);
        for (const int64_t cols : {int64_t{1}, int64_t{2}, int64_t{5}}) {
            for (const bool accumulate : {false, true}) {
                // The free order (ABI 1.13) allows any order of the terms; cpu-ref keeps the GEMV's.
                const bool free_order = cols == 5;
                const std::string label = pair_name(pair) + " T=" + std::to_string(cols) + (accumulate ? " +=" : "") +
                                          (free_order ? " free order" : "");
                // The T activations, quantized as ONE vector of IN * T elements (QUANTIZE_ACT's layout).
                const auto x = quant::random_activation(kIn * cols, rng);
                std::vector<uint8_t> act(quant::act_bytes(pair.act, kIn * cols));
                cpuref::quantize_activation(pair.act, x.data(), act.data(), kIn * cols);
                // dst: the written columns hold random values to accumulate onto; gaps and tail poison.
                std::vector<float> got = poisoned_dst(cols);
                std::uniform_real_distribution<float> base(-2.0f, 2.0f);
                for (int64_t j = 0; j < cols; ++j)
                    for (int64_t r = 0; r < kOut; ++r) got[static_cast<std::size_t>(j * (kOut + kGap) + r)] = base(rng);
                const std::vector<float> before = got;
                auto params = dense::sdk::make_struct<dense_gemv_params>();
                params.accumulate = accumulate ? 1u : 0u;
                params.order = free_order ? DENSE_GEMM_ORDER_FREE : DENSE_GEMM_ORDER_EXACT;
                const std::vector src{rows_of(weight.data(), pair.weight, kIn, kOut),
                                      rows_of(act.data(), pair.act, kIn * cols, 1)};
                const std::vector dst{f32(got.data(), kOut, cols, kOut + kGap)};
                ASSERT_EQ(run(gemm, make_call(DENSE_OP_GEMM_Q, src, dst, &params)), DENSE_OK) << label;

                for (int64_t j = 0; j < cols; ++j) {
                    // Activation j quantized alone, through GEMV_Q onto the same starting values.
                    std::vector<uint8_t> one(quant::act_bytes(pair.act, kIn));
                    cpuref::quantize_activation(pair.act, x.data() + j * kIn, one.data(), kIn);
                    std::vector<float> want(before.begin() + j * (kOut + kGap),
                                            before.begin() + j * (kOut + kGap) + kOut);
                    const std::vector one_src{rows_of(weight.data(), pair.weight, kIn, kOut),
                                              rows_of(one.data(), pair.act, kIn, 1)};
                    const std::vector one_dst{f32(want.data(), kOut)};
                    ASSERT_EQ(run(gemv, make_call(DENSE_OP_GEMV_Q, one_src, one_dst, &params)), DENSE_OK) << label;
                    EXPECT_EQ(std::memcmp(got.data() + j * (kOut + kGap), want.data(), kOut * sizeof(float)), 0)
                        << label << ": column " << j << " differs from its GEMV_Q";
                    for (int64_t r = 0; r < kOut; ++r)
                        EXPECT_NE(std::bit_cast<uint32_t>(got[static_cast<std::size_t>(j * (kOut + kGap) + r)]),
                                  kPoisonBits)
                            << label << ": column " << j << " row " << r << " not written";
                    for (int64_t g = 0; g < kGap; ++g)
                        EXPECT_EQ(std::bit_cast<uint32_t>(got[static_cast<std::size_t>(j * (kOut + kGap) + kOut + g)]),
                                  kPoisonBits)
                            << label << ": the gap after column " << j << " was written";
                }
                for (std::size_t i = static_cast<std::size_t>((kOut + kGap) * cols); i < got.size(); ++i)
                    EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), kPoisonBits)
                        << label << ": written past the last column";
            }
        }
    }
    EXPECT_TRUE(host_.logs.empty());
}

// One well-formed q4_k x Q8_32 call of T = 3, which each edit breaks in one way: refused by
// supports() silently and by run() with one log line, dst untouched.
TEST_F(CpuRefGemm, MalformedCallsAreRefusedWithOneLogLineAndNoWrite) {
    constexpr int64_t kCols = 3;
    const dense_op_impl* impl = host_.find(DENSE_OP_GEMM_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_32);
    ASSERT_NE(impl, nullptr);
    std::mt19937_64 rng(77);
    auto weight =
        quant::random_blocks(cpuref::format(DENSE_TYPE_Q4_K), kOut * kIn / 256, rng, quant::ScaleRange::Moderate);
    const auto x = quant::random_activation(kIn * kCols, rng);
    std::vector<uint8_t> act(quant::act_bytes(DENSE_TYPE_Q8_32, kIn * kCols));
    cpuref::quantize_activation(DENSE_TYPE_Q8_32, x.data(), act.data(), kIn * kCols);
    std::vector<float> y = poisoned_dst(kCols);
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    params.accumulate = 1;

    struct Call {
        std::vector<dense_tensor_view> src, dst;
        const void* params = nullptr;
    };
    auto good = [&] {
        return Call{
            {rows_of(weight.data(), DENSE_TYPE_Q4_K, kIn, kOut), rows_of(act.data(), DENSE_TYPE_Q8_32, kIn * kCols, 1)},
            {f32(y.data(), kOut, kCols, kOut + kGap)},
            &params};
    };
    {
        const Call ok = good();
        const auto call = make_call(DENSE_OP_GEMM_Q, ok.src, ok.dst, ok.params);
        EXPECT_EQ(impl->supports(impl->user, &call), 1u) << "the unedited call must be supported";
    }
    static auto small_params = [] {
        auto p = dense::sdk::make_struct<dense_gemv_params>();
        p.hdr.struct_size = static_cast<uint32_t>(offsetof(dense_gemv_params, accumulate));
        return p;
    }();
    static auto unknown_order = [] {
        auto p = dense::sdk::make_struct<dense_gemv_params>();
        p.order = 2;  // no order of ABI 1.13
        return p;
    }();
    std::vector<float> spare(64, kPoison);
    const std::vector<std::pair<std::string, std::function<void(Call&)>>> edits = {
        {"activations of IN * (T - 1) elements", [](Call& c) { c.src[1].ne[0] -= kIn; }},
        {"activations of IN * T + 32 elements", [](Call& c) { c.src[1].ne[0] += 32; }},
        {"T = 2 against 3 activations", [](Call& c) { c.dst[0].ne[1] = 2; }},
        {"dst rows of OUT - 1", [](Call& c) { c.dst[0].ne[0] = kOut - 1; }},
        {"column stride below 4 OUT", [](Call& c) { c.dst[0].nb[1] = 4 * (kOut - 1); }},
        {"column stride not a multiple of 4", [](Call& c) { c.dst[0].nb[1] = 4 * kOut + 2; }},
        {"dst is 3-D",
         [](Call& c) {
             c.dst[0].ne[1] = 1;
             c.dst[0].ne[2] = kCols;
         }},
        {"dst of F16", [](Call& c) { c.dst[0].type = DENSE_TYPE_F16; }},
        {"activations of Q8_K", [](Call& c) { c.src[1].type = DENSE_TYPE_Q8_K; }},
        {"weight of another format", [](Call& c) { c.src[0].type = DENSE_TYPE_Q5_K; }},
        {"weight is 3-D",
         [](Call& c) {
             c.src[0].ne[1] = 1;
             c.src[0].ne[2] = kOut;
         }},
        {"dst over the activations", [](Call& c) { c.dst[0].data = c.src[1].data; }},
        {"dst over the weight", [](Call& c) { c.dst[0].data = c.src[0].data; }},
        {"one source", [](Call& c) { c.src.pop_back(); }},
        {"a second destination", [&spare](Call& c) { c.dst.push_back(f32(spare.data(), 4)); }},
        {"params too small", [](Call& c) { c.params = &small_params; }},
        {"an unknown order", [](Call& c) { c.params = &unknown_order; }},
    };
    for (const auto& [what, edit] : edits) {
        std::fill(y.begin(), y.end(), kPoison);
        Call c = good();
        edit(c);
        const auto call = make_call(DENSE_OP_GEMM_Q, c.src, c.dst, c.params);
        EXPECT_EQ(impl->supports(impl->user, &call), 0u) << what;
        const std::size_t logs = host_.logs.size();
        EXPECT_EQ(run(impl, call), DENSE_E_INVALID_ARGUMENT) << what;
        EXPECT_EQ(host_.logs.size(), logs + 1) << what << ": expected exactly one log line";
        for (float v : y) ASSERT_EQ(std::bit_cast<uint32_t>(v), kPoisonBits) << what << ": written although refused";
    }
}

}  // namespace
