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

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

namespace dense::test::cuda {
namespace {

using cpuref::FormatKernels;
namespace g = dense::cuda::gemv;

g::ActView act_view(const Q832& a) {
    return {reinterpret_cast<const int8_t*>(a.bytes.data()), reinterpret_cast<const float*>(a.bytes.data() + a.n),
            reinterpret_cast<const float*>(a.bytes.data() + a.n + a.n / 8)};
}

// ---- the per-format dot code, as the kernel calls it ---------------------------------------------

template <class Dot>
g::IqTables host_tables() {
    g::IqTables t;
    if constexpr (Dot::kTable == g::IqTable::Iq2xsGrid) t.grid64 = dense_iq2xs_grid;
    if constexpr (Dot::kTable == g::IqTable::Iq2sGrid) t.grid64 = dense_iq2s_grid;
    if constexpr (Dot::kTable == g::IqTable::Iq3xxsGrid) t.grid32 = dense_iq3xxs_grid;
    if constexpr (Dot::kTable == g::IqTable::Iq3sGrid) t.grid32 = dense_iq3s_grid;
    if constexpr (Dot::kTable == g::IqTable::Iq4Values)
        for (int w = 0; w < 4; ++w)
            for (int j = 0; j < 4; ++j)
                t.kvalues[w] |= static_cast<uint32_t>(static_cast<uint8_t>(dense_kvalues_iq4nl[4 * w + j])) << (8 * j);
    return t;
}

// The 8 terms of step `step` of one row (activation blocks 8*step .. 8*step+7; only the first
// n_blocks exist), exactly as the kernel's 4 lanes of that row compute them.
template <class Dot, int A>
void step_terms(const uint8_t* step_bytes, const g::ActView& act, int64_t step, int n_blocks, float (&out)[8]) {
    const g::IqTables tables = host_tables<Dot>();
    for (int u = 0; u < 4; ++u) {
        g::ActUnit a;
        for (int k = 0; k < 2; ++k) {
            if (2 * u + k < n_blocks)
                g::load_act_block(act, 8 * step + 2 * u + k, a, k);
            else
                g::clear_act_block(a, k);
        }
        float term[2];
        Dot::template unit<A>(step_bytes, u, a, tables, term);
        out[2 * u] = term[0];
        out[2 * u + 1] = term[1];
    }
}

// Weight rows in a buffer with room before and after, starting `offset` bytes past a 16-byte
// boundary. As in the kernel's staging slots (sized for whole steps plus padding): the funnel-shift
// loads read up to 3 bytes outside the data, and in a partial last step (Q8_0 / IQ4_NL rows that
// are not a multiple of 256) the units of absent blocks read a whole step's worth past the row.
struct PlacedRows {
    std::vector<uint8_t> storage;
    uint8_t* data = nullptr;
    PlacedRows(const std::vector<uint8_t>& rows, std::size_t offset, std::size_t step_bytes)
        : storage(rows.size() + step_bytes + 64, 0xEE) {
        const auto base = reinterpret_cast<uintptr_t>(storage.data());
        data = storage.data() + ((16 - base % 16) % 16) + 16 + offset;
        std::memcpy(data, rows.data(), rows.size());
    }
};

struct RowSetup {
    const FormatKernels* f;
    int64_t in;
    int64_t rows;
    int64_t row_bytes;
    std::vector<uint8_t> weights;
    std::vector<float> x;
    Q832 act;
};

RowSetup make_rows(const FormatKernels& f, int64_t in, int64_t rows, uint64_t seed, quant::ScaleRange range) {
    std::mt19937_64 rng(seed);
    RowSetup s{&f, in, rows, static_cast<int64_t>(cpuref::row_bytes(f.type, in)), {}, {}, {}};
    s.weights = quant::random_blocks(f, in * rows / f.block_elements, rng, range);
    s.x = quant::random_activation(in, rng);
    // A few all-zero blocks too (d = s = 0): their terms must vanish exactly on both sides.
    for (int64_t e = 64; e < 96 && e < in; ++e) s.x[static_cast<std::size_t>(e)] = 0.0f;
    s.act = quantize_q8_32(s.x);
    return s;
}

int64_t steps_of(int64_t in) {
    return (in + 255) / 256;
}
int blocks_in_step(int64_t in, int64_t step) {
    return static_cast<int>(std::min<int64_t>(8, in / 32 - 8 * step));
}

float cpuref_term(const RowSetup& s, int64_t r, int64_t b) {
    return cuda::cpuref_term(*s.f, s.weights.data() + r * s.row_bytes, s.act, b);
}

::testing::AssertionResult same_term(float got, float want) {
    if (std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(want)) return ::testing::AssertionSuccess();
    if (got == 0.0f && want == 0.0f) return ::testing::AssertionSuccess();  // +0 / -0 (see cpuref_term)
    return ::testing::AssertionFailure() << "got " << quant::hex32(got) << ", want " << quant::hex32(want);
}

// All terms of all rows through unit<A> with the rows placed `offset` bytes past 16-byte alignment;
// returns the number of mismatching terms (failures reported for the first few).
template <class Dot, int A>
int check_terms(const RowSetup& s, std::size_t offset, std::vector<std::vector<float>>* terms_out = nullptr) {
    const PlacedRows placed(s.weights, offset, Dot::kStepBytes);
    const g::ActView act = act_view(s.act);
    int bad = 0;
    if (terms_out != nullptr) terms_out->assign(static_cast<std::size_t>(s.rows), {});
    for (int64_t r = 0; r < s.rows; ++r) {
        for (int64_t st = 0; st < steps_of(s.in); ++st) {
            const int nb = blocks_in_step(s.in, st);
            float got[8];
            step_terms<Dot, A>(placed.data + r * s.row_bytes + st * Dot::kStepBytes, act, st, nb, got);
            for (int j = 0; j < nb; ++j) {
                const int64_t b = 8 * st + j;
                const float want = cpuref_term(s, r, b);
                const auto same = same_term(got[j], want);
                if (!same && bad++ < 5)
                    ADD_FAILURE() << s.f->name << " A=" << A << " offset " << offset << " row " << r << " block " << b
                                  << ": " << same.message();
                if (terms_out != nullptr) (*terms_out)[static_cast<std::size_t>(r)].push_back(got[j]);
            }
        }
    }
    return bad;
}

// Row sums in the kernel's order (gemv_kernel.cuh, sum_order): the steps of a row split into ks
// slices, contiguous or (strided, a streamed matrix, ks 4) steps j, j + ks, ...; in each, every lane
// (unit u) adds its two terms per step in step order; the 4 lanes combine as (u0 + u1) + (u2 + u3);
// the slices are added in slice order, or for a streamed matrix as (S0 + S1) + (S2 + S3).
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
    if (strided) return (slice[0] + slice[1]) + (slice[2] + slice[3]);
    float total = slice[0];
    for (int kw = 1; kw < ks; ++kw) total += slice[static_cast<std::size_t>(kw)];
    return total;
}

template <class Dot>
void check_format(const FormatKernels& f) {
    ASSERT_EQ(static_cast<uint32_t>(Dot::kBlockElems), f.block_elements) << f.name;
    ASSERT_EQ(static_cast<uint32_t>(Dot::kBlockBytes), f.block_bytes) << f.name;
    ASSERT_EQ(Dot::kStepBytes, Dot::kBlockBytes * 256 / Dot::kBlockElems) << f.name;
    ASSERT_EQ(Dot::kStepBytes % Dot::kAlign, 0) << f.name;

    // In = 5120 (the 27B hidden size) and, for the 32-element formats, a length that ends in a
    // partial step (the kernel's last-step path).
    std::vector<int64_t> lengths = {5120};
    if (f.block_elements == 32) lengths.push_back(5120 + 96);
    for (const int64_t in : lengths) {
        for (const auto range : {quant::ScaleRange::Moderate, quant::ScaleRange::Full}) {
            for (uint64_t seed = 1; seed <= 2; ++seed) {
                const RowSetup s = make_rows(f, in, 3, seed * 7919u + f.type * 131u + static_cast<uint64_t>(in), range);
                SCOPED_TRACE(std::string(f.name) + " in=" + std::to_string(in) + " seed " + std::to_string(seed) +
                             (range == quant::ScaleRange::Full ? " full-range scales" : " moderate scales"));
                // The fast path, on a 16-byte-aligned matrix: bit-exact and no misaligned vector load.
                g::host_misaligned_loads = 0;
                std::vector<std::vector<float>> terms;
                EXPECT_EQ((check_terms<Dot, Dot::kAlign>(s, 0, &terms)), 0);
                EXPECT_EQ(g::host_misaligned_loads, 0) << "a load claims more alignment than its address has";
                // The any-alignment path at every offset.
                for (std::size_t offset = 0; offset < 16; ++offset) EXPECT_EQ((check_terms<Dot, 2>(s, offset)), 0);
                if (::testing::Test::HasFailure()) return;

                if (range != quant::ScaleRange::Moderate) continue;
                std::vector<float> want(static_cast<std::size_t>(s.rows));
                cpuref::gemv_act(f.type, DENSE_TYPE_Q8_32, s.weights.data(), in, s.rows, s.act.bytes.data(), want.data());
                for (int64_t r = 0; r < s.rows; ++r) {
                    const auto& t = terms[static_cast<std::size_t>(r)];
                    ASSERT_EQ(t.size(), static_cast<std::size_t>(in / 32));
                    double abs_sum = 0.0;
                    for (const float v : t) abs_sum += std::fabs(static_cast<double>(v));
                    const double bound = order_bound(in, abs_sum);  // gemv_test_support.hpp derives it
                    for (const int ks : {1, 2, 4, 8}) {
                        const float got = kernel_order_sum(t, in, ks);
                        EXPECT_LE(std::fabs(static_cast<double>(got) - want[static_cast<std::size_t>(r)]), bound)
                            << "row " << r << " ks " << ks << ": got " << got << ", cpu-ref "
                            << want[static_cast<std::size_t>(r)];
                    }
                    const float streamed = kernel_order_sum(t, in, 4, true);
                    EXPECT_LE(std::fabs(static_cast<double>(streamed) - want[static_cast<std::size_t>(r)]), bound)
                        << "row " << r << " streamed order: got " << streamed << ", cpu-ref "
                        << want[static_cast<std::size_t>(r)];
                }
            }
        }
    }
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
