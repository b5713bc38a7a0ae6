// The CUDA packs' per-format GEMV dot code (plugins/cuda-common/src/kernels/gemv_dot_*.cuh) compiled
// as plain C++ and run on the CPU against cpu-ref's Q8_32 dot products (vec_dot_act). Runs on every
// machine, GPU or not:
//   - every per-32-block term bit for bit against cpu-ref, for all 12 quantized formats, random
//     blocks (moderate and full-range scales) and random activations, through the aligned fast path
//     (no misaligned vector load) and through the any-alignment funnel-shift path at all 16 offsets;
//   - row sums in the kernel's summation order (gemv_kernel.cuh) against cpu-ref's gemv_act within
//     the float summation-order bound derived below;
//   - the arithmetic shortcuts the dot code takes (parity signs, codebook byte permutes).
// The GPU tests (gemv_gpu_test.cpp) then check that nvcc's build of the same code agrees.
#include "cuda/cuda_pack_support.hpp"
#include "cuda/gemv_test_support.hpp"

#include "../../plugins/cuda-common/src/kernels/gemv_dot_iq2.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_iq3.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_iq4.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_q2_k.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_q3_k.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_q4_k.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_q5_k.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_q6_k.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_q8_0.cuh"
#include "../../plugins/cuda-common/src/kernels/iq_tables.cuh"
#include "cuda/gemv_host_terms.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

namespace dense::test::cuda {
namespace {

// Row sums in the kernel's order (gemv_kernel.cuh, sum_order): the steps of a row split into ks
// slices, contiguous or (strided, a streamed matrix, ks 8) steps j, j + ks, ...; in each, every lane
// (unit u) adds its two terms per step in step order; the 4 lanes combine as (u0 + u1) + (u2 + u3);
// the slices are added in slice order, or for a streamed matrix as a pairwise tree
// (((S0 + S1) + (S2 + S3)) + ((S4 + S5) + (S6 + S7))).
float kernel_order_sum(const std::vector<float>& terms, int64_t in, int ks, bool strided = false) {
    const int64_t steps = steps_of(in);
    std::vector<float> slice(static_cast<std::size_t>(ks));
    for (int kw = 0; kw < ks; ++kw) {
        const int64_t s0 = strided ? kw : steps * kw / ks, s1 = strided ? steps : steps * (kw + 1) / ks;
        float lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t st = s0; st < s1; st += strided ? ks : 1) {
            const int nb = blocks_in_step(in, st);
            for (int j = 0; j < nb; ++j) lane[j / 2] += terms[static_cast<std::size_t>(8 * st + j)];
        }
        slice[static_cast<std::size_t>(kw)] = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    }
    if (strided) {
        for (std::size_t width = 1; width < slice.size(); width *= 2)
            for (std::size_t j = 0; j + width < slice.size(); j += 2 * width) slice[j] = slice[j] + slice[j + width];
        return slice[0];
    }
    float total = slice[0];
    for (int kw = 1; kw < ks; ++kw) total += slice[static_cast<std::size_t>(kw)];
    return total;
}

template <class Dot>
void check_format(const FormatKernels& f) {
    check_format_terms<Dot>(f, [&](const RowSetup& s, const std::vector<std::vector<float>>& terms) {
        std::vector<float> want(static_cast<std::size_t>(s.rows));
        cpuref::gemv_act(f.type, DENSE_TYPE_Q8_32, s.weights.data(), s.in, s.rows, s.act.bytes.data(), want.data());
        for (int64_t r = 0; r < s.rows; ++r) {
            const auto& t = terms[static_cast<std::size_t>(r)];
            ASSERT_EQ(t.size(), static_cast<std::size_t>(s.in / 32));
            double abs_sum = 0.0;
            for (const float v : t) abs_sum += std::fabs(static_cast<double>(v));
            const double bound = order_bound(s.in, abs_sum);  // gemv_test_support.hpp derives it
            for (const int ks : {1, 2, 4, 8}) {
                const float got = kernel_order_sum(t, s.in, ks);
                EXPECT_LE(std::fabs(static_cast<double>(got) - want[static_cast<std::size_t>(r)]), bound)
                    << "row " << r << " ks " << ks << ": got " << got << ", cpu-ref " << want[static_cast<std::size_t>(r)];
            }
            const float streamed = kernel_order_sum(t, s.in, 8, true);
            EXPECT_LE(std::fabs(static_cast<double>(streamed) - want[static_cast<std::size_t>(r)]), bound)
                << "row " << r << " streamed order: got " << streamed << ", cpu-ref " << want[static_cast<std::size_t>(r)];
        }
    });
}

class GemvDotOnHost : public ::testing::TestWithParam<const FormatKernels*> {};

TEST_P(GemvDotOnHost, TermsAndRowSumsMatchCpuRef) {
    const FormatKernels& f = *GetParam();
    switch (f.type) {
        case DENSE_TYPE_Q8_0: return check_format<g::Q8_0Dot>(f);
        case DENSE_TYPE_Q2_K: return check_format<g::Q2_KDot>(f);
        case DENSE_TYPE_Q3_K: return check_format<g::Q3_KDot>(f);
        case DENSE_TYPE_Q4_K: return check_format<g::Q4_KDot>(f);
        case DENSE_TYPE_Q5_K: return check_format<g::Q5_KDot>(f);
        case DENSE_TYPE_Q6_K: return check_format<g::Q6_KDot>(f);
        case DENSE_TYPE_IQ2_XS: return check_format<g::IQ2_XSDot>(f);
        case DENSE_TYPE_IQ2_S: return check_format<g::IQ2_SDot>(f);
        case DENSE_TYPE_IQ3_XXS: return check_format<g::IQ3_XXSDot>(f);
        case DENSE_TYPE_IQ3_S: return check_format<g::IQ3_SDot>(f);
        case DENSE_TYPE_IQ4_NL: return check_format<g::IQ4_NLDot>(f);
        case DENSE_TYPE_IQ4_XS: return check_format<g::IQ4_XSDot>(f);
        default: FAIL() << "no GEMV dot code for " << f.name;
    }
}

INSTANTIATE_TEST_SUITE_P(QuantizedWeightFormats, GemvDotOnHost, ::testing::ValuesIn(quant::quantized_weight_formats()),
                         quant::format_param_name);

// ---- the arithmetic shortcuts -------------------------------------------------------------------------

TEST(GemvHelpersOnHost, ParitySignsEqualTheCodebook) {
    for (uint32_t i = 0; i < 128; ++i) EXPECT_EQ(g::parity_signs(i), dense_ksigns_iq2xs[i]) << i;
}

TEST(GemvHelpersOnHost, SignedGridBytesAreNegatedExactly) {
    std::mt19937_64 rng(5);
    for (int it = 0; it < 10000; ++it) {
        uint32_t g4 = 0;
        int8_t mags[4];
        for (int j = 0; j < 4; ++j) {
            mags[j] = static_cast<int8_t>(1 + rng() % 127);
            g4 |= static_cast<uint32_t>(static_cast<uint8_t>(mags[j])) << (8 * j);
        }
        const auto mask = static_cast<uint32_t>(rng() & 15u);
        const uint32_t got = g::apply_signs(g4, g::sign_bytes4(mask));
        for (int j = 0; j < 4; ++j) {
            const int want = ((mask >> j) & 1u) ? -mags[j] : mags[j];
            ASSERT_EQ(static_cast<int8_t>(got >> (8 * j)), want) << "magnitudes " << g4 << " mask " << mask;
        }
    }
}

// The streamed IQ3 GEMVs' entry numbers: one prmt puts an index byte beside an upper byte (bytes 2 and
// 3 zero), and the IQ3_S upper bytes carry the right 9th bit and sign nibble for every qh byte (the
// multiply that spreads qh must not carry into a kept bit) and every sign nibble.
TEST(GemvHelpersOnHost, SignedGridEntryNumbersPutEachFieldInItsPlace) {
    std::mt19937_64 rng(11);
    for (uint32_t qh = 0; qh < 256; ++qh) {
        for (int it = 0; it < 64; ++it) {
            const auto signs = static_cast<uint32_t>(rng());
            const auto index_bytes = static_cast<uint32_t>(rng());
            uint32_t first = 0, second = 0;
            g::iq3s_entry_upper_bytes(qh, signs, first, second);
            for (uint32_t l = 0; l < 4; ++l) {
                const uint32_t want_first = ((qh >> (2 * l)) & 1u) | ((signs >> (8 * l)) & 15u) << 1;
                const uint32_t want_second = ((qh >> (2 * l + 1)) & 1u) | ((signs >> (8 * l + 4)) & 15u) << 1;
                ASSERT_EQ((first >> (8 * l)) & 0xFFu, want_first) << "qh " << qh << " signs " << signs << " group " << l;
                ASSERT_EQ((second >> (8 * l)) & 0xFFu, want_second) << "qh " << qh << " signs " << signs << " group " << l;
            }
            // Byte j of the index word beside byte l of the upper word, for a few (j, l).
            ASSERT_EQ((g::byte_pair_index<0, 0>(index_bytes, first)), (index_bytes & 0xFFu) | (first & 0xFFu) << 8);
            ASSERT_EQ((g::byte_pair_index<3, 2>(index_bytes, second)), (index_bytes >> 24) | ((second >> 16) & 0xFFu) << 8);
            ASSERT_EQ((g::byte_pair_index<1, 3>(index_bytes, first)), ((index_bytes >> 8) & 0xFFu) | (first >> 24) << 8);
        }
    }
}

// IQ2_S's 2 high index bits of each group land on byte l of one word, for every qh byte.
TEST(GemvHelpersOnHost, Iq2sIndexHighBitsLandOnTheirGroupsByte) {
    for (uint32_t qh = 0; qh < 256; ++qh) {
        const uint32_t high = g::iq2s_index_high_bytes(qh);
        for (uint32_t l = 0; l < 4; ++l) ASSERT_EQ((high >> (8 * l)) & 0xFFu, (qh >> (2 * l)) & 3u) << "qh " << qh << " group " << l;
    }
}

// The GEMV's signed dot of 8 grid magnitudes (signed_dot8: XOR with the sign bytes, then a dp4a of
// the sign bits' 0x01 bytes as the correction) is the plain signed sum for every one of the 256
// masks, magnitudes over the whole [0, 127] and activations over the whole int8 range.
TEST(GemvHelpersOnHost, SignedDotOfEightIsThePlainSignedSumForEveryMask) {
    std::mt19937_64 rng(7);
    for (uint32_t mask = 0; mask < 256; ++mask) {
        for (int it = 0; it < 200; ++it) {
            uint32_t g[2] = {0, 0}, act[2] = {0, 0};
            int want = 0;
            const int32_t c = static_cast<int32_t>(rng() % 2001) - 1000;
            for (int e = 0; e < 8; ++e) {
                const int mag = it == 0 ? 127 : static_cast<int>(rng() % 128);  // it 0: the extremes
                const int a = it == 0 ? (e % 2 ? -128 : 127) : static_cast<int>(rng() % 256) - 128;
                g[e / 4] |= static_cast<uint32_t>(mag) << (8 * (e % 4));
                act[e / 4] |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(a))) << (8 * (e % 4));
                want += ((mask >> e) & 1u ? -mag : mag) * a;
            }
            ASSERT_EQ(g::signed_dot8(g[0], g[1], mask, act, c), c + want) << "mask " << mask << " iteration " << it;
        }
    }
}

TEST(GemvHelpersOnHost, CodebookLookupAndByteSubtraction) {
    const g::IqTables t = host_tables<g::IQ4_NLDot>();
    std::mt19937_64 rng(6);
    for (int it = 0; it < 10000; ++it) {
        const auto q = static_cast<uint32_t>(rng());
        uint32_t even = 0, odd = 0;
        g::lookup16(q, t.kvalues, even, odd);
        for (int j = 0; j < 4; ++j) {
            ASSERT_EQ(static_cast<int8_t>(even >> (8 * j)), dense_kvalues_iq4nl[(q >> (8 * j)) & 15u]) << q;
            ASSERT_EQ(static_cast<int8_t>(odd >> (8 * j)), dense_kvalues_iq4nl[(q >> (8 * j + 4)) & 15u]) << q;
        }
        const auto v = static_cast<uint32_t>(rng()) & 0x3F3F3F3Fu;  // 6-bit values, as Q6_K
        const uint32_t c = static_cast<uint32_t>(rng() % 64) * 0x01010101u;
        const uint32_t d = g::sub_bytes(v, c);
        for (int j = 0; j < 4; ++j)
            ASSERT_EQ(static_cast<int8_t>(d >> (8 * j)), static_cast<int>((v >> (8 * j)) & 0xFFu) - static_cast<int>(c & 0xFFu));
    }
}

// The device's prmt as byte_perm_signed models it (PTX ISA, prmt generic mode): bits 0-2 of a
// selector nibble pick a byte, bit 3 replaces it by its sign copied into all 8 bits.
TEST(GemvHelpersOnHost, SignedBytePermuteCopiesOrReplicatesTheSign) {
    const uint32_t x = 0x80017F00u, y = 0xFF7E0281u;  // bytes 0..7: 00 7F 01 80 81 02 7E FF
    EXPECT_EQ(g::byte_perm_signed(x, y, 0x3210u), x);
    EXPECT_EQ(g::byte_perm_signed(x, y, 0x7654u), y);
    EXPECT_EQ(g::byte_perm_signed(x, y, 0xBA98u), 0xFF000000u);  // signs of 00 7F 01 80
    EXPECT_EQ(g::byte_perm_signed(x, y, 0xFEDCu), 0xFF0000FFu);  // signs of 81 02 7E FF
    EXPECT_EQ(g::byte_perm_signed(x, y, 0x0F43u), 0x00FF8180u);  // 80, 81, sign(FF), 00
    EXPECT_EQ(g::byte_perm_signed(x, y, 0xFFFF0F43u), 0x00FF8180u) << "the high 16 bits are not read";
}

// iq4_block_dot (the GEMV flavour looks codes up with the sign split, gemv_dot_iq4.cuh): every
// index at every one of the 32 element positions, against kvalues_iq4nl, with a one-hot activation
// of either sign; then random blocks against the plain sum.
TEST(GemvHelpersOnHost, Iq4BlockDotIsTheCodebookSumForEveryIndexAndPosition) {
    const g::IqTables t = host_tables<g::IQ4_NLDot>();
    for (int e = 0; e < 32; ++e)
        for (uint32_t n = 0; n < 16; ++n)
            for (const int a : {1, -3}) {
                uint32_t qs[4] = {0x88888888u, 0x88888888u, 0x88888888u, 0x88888888u};  // index 8 elsewhere
                const int byte = e % 16, shift = 8 * (byte % 4) + (e >= 16 ? 4 : 0);
                qs[byte / 4] = (qs[byte / 4] & ~(15u << shift)) | (n << shift);
                uint32_t act[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                act[e / 4] = static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(a))) << (8 * (e % 4));
                ASSERT_EQ(g::iq4_block_dot(qs, act, t.kvalues), a * dense_kvalues_iq4nl[n]) << "element " << e << " index " << n;
            }
    std::mt19937_64 rng(7);
    for (int it = 0; it < 20000; ++it) {
        uint32_t qs[4], act[8];
        for (uint32_t& w : qs) w = static_cast<uint32_t>(rng());
        for (uint32_t& w : act) w = static_cast<uint32_t>(rng());
        int32_t want = 0;
        for (int e = 0; e < 32; ++e) {
            const int byte = e % 16;
            const uint32_t n = ((qs[byte / 4] >> (8 * (byte % 4))) >> (e >= 16 ? 4 : 0)) & 15u;
            want += dense_kvalues_iq4nl[n] * static_cast<int8_t>(act[e / 4] >> (8 * (e % 4)));
        }
        ASSERT_EQ(g::iq4_block_dot(qs, act, t.kvalues), want) << "block " << it;
    }
}

// ---- registration (pack init makes no CUDA call, so this runs without a GPU) ----------------------

TEST(GemvOpsRegistration, EveryWeightFormatHasAGemvAndBothActivationsAQuantizer) {
    const auto& packs = built_cuda_packs();
    if (packs.empty()) GTEST_SKIP() << no_cuda_packs_reason();
    for (const CudaPackLib& lib : packs) {
        ASSERT_TRUE(lib.usable()) << lib.load_error;
        RecordingHost host;
        dense_pack* pack = nullptr;
        ASSERT_EQ(lib.init(host.api(), &pack), DENSE_OK) << host.log_text();
        for (const FormatKernels* f : quant::storable_formats()) {
            const dense_type_id act = f->block_elements == 1 ? DENSE_TYPE_F32 : DENSE_TYPE_Q8_32;
            const dense_op_impl* impl = host.find_op(DENSE_OP_GEMV_Q, f->type, act);
            ASSERT_NE(impl, nullptr) << lib.name << ": no GEMV_Q for " << f->name;
            EXPECT_EQ(std::string(impl->name), lib.name + ".gemv_q." + f->name + (act == DENSE_TYPE_F32 ? ".f32" : ".q8_32"));
        }
        for (const dense_type_id act : {DENSE_TYPE_Q8_32, DENSE_TYPE_F32})
            EXPECT_NE(host.find_op(DENSE_OP_QUANTIZE_ACT, DENSE_TYPE_NONE, act), nullptr) << lib.name << " act " << act;
        lib.release(pack);
    }
}

}  // namespace
}  // namespace dense::test::cuda
