// Our activation quantizers against llama.cpp's reference ones (quantize_row_q8_K_ref,
// quantize_row_q8_0_ref in libggml-base.so) and our F16/BF16 activation rounding against ggml's
// row converters, all byte for byte, on random vectors plus hand-made edge cases: exact .5 ties (to
// check half-even vs half-away), equal-magnitude maxima of both signs (first one wins, sign of d),
// all-zero blocks, signed zeros, subnormals and very large values.
#include "cpu-ref/llama_oracle.hpp"
#include "cpu-ref/quant_test_support.hpp"

#include <limits>

namespace {

using namespace dense;
using namespace dense::test::quant;

// Random vectors of n floats (n a multiple of 256) in several flavours, then edge-case blocks.
std::vector<float> quantizer_inputs(uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<float> x;
    auto block = [&](auto gen) {
        for (int i = 0; i < 256; ++i) x.push_back(gen(i));
    };
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::uniform_int_distribution<int> small(-200, 200);
    for (int b = 0; b < 24; ++b) {
        const float scale = std::ldexp(1.0f, static_cast<int>(rng() % 60) - 30);  // 2^-30 .. 2^29
        switch (b % 4) {
            case 0:
                block([&](int) { return u(rng) * scale; });
                break;
            case 1:
                block([&](int) { return g(rng) * scale; });
                break;
            case 2:
                block([&](int i) { return u(rng) * (i % 37 == 0 ? 7.0f : 1.0f); });
                break;
            // Halves of integers: with a max of exactly +-127 the scale is exactly +-1 and every
            // element is a tie for the rounding rule.
            case 3:
                block([&](int i) {
                    return i == 5 ? (rng() & 1 ? 127.0f : -127.0f) : static_cast<float>(small(rng)) * 0.5f;
                });
                break;
        }
    }
    // Per-32 ties for Q8_0: max 127 in each 32-block too.
    block([&](int i) { return i % 32 == 0 ? 127.0f : static_cast<float>(small(rng) % 127) + 0.5f; });
    block([&](int i) { return i % 32 == 0 ? -127.0f : static_cast<float>(small(rng) % 127) - 0.5f; });
    block([&](int) { return 0.0f; });                                                         // amax == 0
    block([&](int i) { return i % 2 ? -0.0f : 0.0f; });                                       // signed zeros
    block([&](int i) { return i == 3 ? 2.5f : (i == 7 ? -2.5f : u(rng)); });                  // +max first: d < 0
    block([&](int i) { return i == 3 ? -2.5f : (i == 7 ? 2.5f : u(rng)); });                  // -max first: d > 0
    block([&](int) { return u(rng) * std::numeric_limits<float>::denorm_min() * 1000.0f; });  // subnormals
    block([&](int) { return u(rng) * 1e30f; });
    block([&](int i) { return i == 0 ? 1.0f : u(rng) * 1e-6f; });  // one dominant element
    return x;
}

TEST(OracleQuantize, Q8KBytesIdentical) {
    DENSE_REQUIRE_ORACLE_BASE();
    const auto ggml = oracle_fn<GgmlQuantizeRowRef>(LlamaOracle::instance().base_symbol("quantize_row_q8_K_ref"));
    ASSERT_NE(ggml, nullptr);
    for (uint64_t seed : {1u, 2u, 3u}) {
        const auto x = quantizer_inputs(seed);
        const auto n = static_cast<int64_t>(x.size());
        std::vector<uint8_t> want(act_bytes(DENSE_TYPE_Q8_K, n)), got(want.size());
        ggml(x.data(), want.data(), n);
        cpuref::quantize_activation(DENSE_TYPE_Q8_K, x.data(), got.data(), n);
        EXPECT_TRUE(same_bytes(got, want)) << "seed " << seed << " (block = byte / 292)";
    }
}

TEST(OracleQuantize, Q80BytesIdentical) {
    DENSE_REQUIRE_ORACLE_BASE();
    const auto ggml = oracle_fn<GgmlQuantizeRowRef>(LlamaOracle::instance().base_symbol("quantize_row_q8_0_ref"));
    ASSERT_NE(ggml, nullptr);
    for (uint64_t seed : {1u, 2u, 3u}) {
        const auto x = quantizer_inputs(seed);
        const auto n = static_cast<int64_t>(x.size());
        std::vector<uint8_t> want(act_bytes(DENSE_TYPE_Q8_0, n)), got(want.size());
        ggml(x.data(), want.data(), n);
        cpuref::quantize_activation(DENSE_TYPE_Q8_0, x.data(), got.data(), n);
        EXPECT_TRUE(same_bytes(got, want)) << "seed " << seed << " (block = byte / 34)";
    }
}

// Finite floats of every exponent, plus values exactly halfway between two fp16 / bf16 values.
std::vector<float> rounding_inputs(std::mt19937_64& rng) {
    std::vector<float> x;
    for (int i = 0; i < 20000; ++i) {
        uint32_t bits = static_cast<uint32_t>(rng());
        if (((bits >> 23) & 0xFFu) == 0xFFu) bits &= ~(1u << 30);  // keep it finite
        x.push_back(std::bit_cast<float>(bits));
    }
    std::uniform_real_distribution<float> u(-70000.0f, 70000.0f);
    for (int i = 0; i < 5000; ++i) x.push_back(u(rng));
    for (int i = 0; i < 2000; ++i) {
        const uint32_t h = static_cast<uint32_t>(rng()) & 0x7FFFFFFFu;
        x.push_back(std::bit_cast<float>((h & 0x7F7F0000u) | 0x8000u));  // bf16 tie
        const float f16 = fp16_to_fp32(static_cast<uint16_t>(h & 0x7BFFu));
        x.push_back(std::bit_cast<float>(std::bit_cast<uint32_t>(f16) | 0x1000u));  // fp16 tie (normal range)
    }
    x.push_back(65519.0f);  // just below the fp16 overflow threshold
    x.push_back(65520.0f);  // rounds to inf
    return x;
}

TEST(OracleQuantize, F16AndBF16RoundingIdentical) {
    DENSE_REQUIRE_ORACLE_BASE();
    const auto to_f16 = oracle_fn<GgmlFp32ToHalfRow>(LlamaOracle::instance().base_symbol("ggml_fp32_to_fp16_row"));
    const auto to_bf16 = oracle_fn<GgmlFp32ToHalfRow>(LlamaOracle::instance().base_symbol("ggml_fp32_to_bf16_row_ref"));
    ASSERT_NE(to_f16, nullptr);
    ASSERT_NE(to_bf16, nullptr);
    std::mt19937_64 rng(77);
    const auto x = rounding_inputs(rng);
    const auto n = static_cast<int64_t>(x.size());
    for (auto [type, fn] : {std::pair{DENSE_TYPE_F16, to_f16}, std::pair{DENSE_TYPE_BF16, to_bf16}}) {
        std::vector<uint16_t> want(x.size());
        std::vector<uint8_t> got(x.size() * 2);
        fn(x.data(), want.data(), n);
        cpuref::quantize_activation(type, x.data(), got.data(), n);
        std::vector<uint8_t> want_bytes(got.size());
        std::memcpy(want_bytes.data(), want.data(), got.size());
        EXPECT_TRUE(same_bytes(got, want_bytes)) << "type " << type << " (element = byte / 2)";
    }
}

}  // namespace
