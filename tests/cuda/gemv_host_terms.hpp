// The per-format GEMV dot code run on the host, term by term against cpu-ref: the helpers of
// gemv_host_test.cpp (the GEMV's flavour of the code) and gemm_flavour_host_test.cpp (the dp4a GEMM's,
// DENSE_GEMV_PURE_ASM = 1). Each includes the gemv_dot_*.cuh headers of its flavour before this one;
// `g::` then names that flavour's types and Dots.
#pragma once

#include "cuda/gemv_test_support.hpp"

#include "../../plugins/cuda-common/src/kernels/iq_tables.cuh"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <vector>

namespace dense::test::cuda {
namespace {

using cpuref::FormatKernels;
namespace g = dense::cuda::gemv;

g::ActView act_view(const Q832& a) {
    return {reinterpret_cast<const int8_t*>(a.bytes.data()), reinterpret_cast<const float*>(a.bytes.data() + a.n),
            reinterpret_cast<const float*>(a.bytes.data() + a.n + a.n / 8)};
}

// ---- the per-format dot code, as the kernel calls it ---------------------------------------------

// The signed IQ3 grid (gemv_common.cuh, signed_grid_entry) of a grid of n entries, built once.
template <const uint32_t* kGrid, int n>
const uint32_t* host_signed_grid() {
    static const std::vector<uint32_t> table = [] {
        static_assert(n == 256 || n == 512, "IQ3_XXS (8 index bits) or IQ3_S (9)");
        std::vector<uint32_t> v(static_cast<std::size_t>(16 * n));
        for (uint32_t e = 0; e < v.size(); ++e) v[e] = g::signed_grid_entry<n == 256 ? 8 : 9>(kGrid, e);
        return v;
    }();
    return table.data();
}

template <class Dot>
g::IqTables host_tables() {
    g::IqTables t;
    if constexpr (g::StreamTableOf<Dot>::value == g::IqTable::Iq3xxsSignedGrid)
        t.signed_grid32 = host_signed_grid<dense_iq3xxs_grid, 256>();
    if constexpr (g::StreamTableOf<Dot>::value == g::IqTable::Iq3sSignedGrid)
        t.signed_grid32 = host_signed_grid<dense_iq3s_grid, 512>();
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
// Stream: through the streamed GEMV's unit (g::stream_unit) instead of Dot::unit.
template <class Dot, int A, bool Stream = false>
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
        if constexpr (Stream)
            g::stream_unit<Dot, A>(step_bytes, u, a, tables, term);
        else
            Dot::template unit<A>(step_bytes, u, a, tables, term);
        out[2 * u] = term[0];
        out[2 * u + 1] = term[1];
    }
}

// Weight rows in a buffer with room before and after, starting `offset` bytes past a 16-byte
// boundary. As in the kernel's staging slots (sized for whole steps plus padding): the funnel-shift
// loads read up to 3 bytes outside the data (Q6_K's 8-byte ones, ld_words_by8, up to 6 bytes before
// a field, inside its block after it), and in a partial last step (Q8_0 / IQ4_NL rows that
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
template <class Dot, int A, bool Stream = false>
int check_terms(const RowSetup& s, std::size_t offset, std::vector<std::vector<float>>* terms_out = nullptr) {
    const PlacedRows placed(s.weights, offset, Dot::kStepBytes);
    const g::ActView act = act_view(s.act);
    int bad = 0;
    if (terms_out != nullptr) terms_out->assign(static_cast<std::size_t>(s.rows), {});
    for (int64_t r = 0; r < s.rows; ++r) {
        for (int64_t st = 0; st < steps_of(s.in); ++st) {
            const int nb = blocks_in_step(s.in, st);
            float got[8];
            step_terms<Dot, A, Stream>(placed.data + r * s.row_bytes + st * Dot::kStepBytes, act, st, nb, got);
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


// Every term of random rows through Dot::unit against cpu-ref, bit for bit: In = 5120 (the 27B hidden
// size) and, for the 32-element formats, a length that ends in a partial step (the kernel's last-step
// path); moderate and full-range scales; the fast path on a 16-byte-aligned matrix (with no
// misaligned vector load) and the any-alignment path at every offset. `on_rows(setup, terms)` then
// gets each moderate-scale setup with its terms, for checks of row sums.
template <class Dot, class OnRows>
void check_format_terms(const FormatKernels& f, OnRows&& on_rows) {
    ASSERT_EQ(static_cast<uint32_t>(Dot::kBlockElems), f.block_elements) << f.name;
    ASSERT_EQ(static_cast<uint32_t>(Dot::kBlockBytes), f.block_bytes) << f.name;
    ASSERT_EQ(Dot::kStepBytes, Dot::kBlockBytes * 256 / Dot::kBlockElems) << f.name;
    ASSERT_EQ(Dot::kStepBytes % Dot::kAlign, 0) << f.name;
    std::vector<int64_t> lengths = {5120};
    if (f.block_elements == 32) lengths.push_back(5120 + 96);
    for (const int64_t in : lengths) {
        for (const auto range : {quant::ScaleRange::Moderate, quant::ScaleRange::Full}) {
            for (uint64_t seed = 1; seed <= 2; ++seed) {
                const RowSetup s = make_rows(f, in, 3, seed * 7919u + f.type * 131u + static_cast<uint64_t>(in), range);
                SCOPED_TRACE(std::string(f.name) + " in=" + std::to_string(in) + " seed " + std::to_string(seed) +
                             (range == quant::ScaleRange::Full ? " full-range scales" : " moderate scales"));
                g::host_misaligned_loads = 0;
                std::vector<std::vector<float>> terms;
                EXPECT_EQ((check_terms<Dot, Dot::kAlign>(s, 0, &terms)), 0);
                EXPECT_EQ(g::host_misaligned_loads, 0) << "a load claims more alignment than its address has";
                // The streamed GEMV calls the unit at its matrices' step alignment, which is more than
                // kAlign for Q8_0 and IQ4_NL (gemv_common.cuh, step_align): whole steps only.
                // A format's own streamed unit (the IQ3 formats': a signed grid; IQ2_S's) runs at the
                // same alignment: at every offset too.
                constexpr int kStreamAlign = g::step_align(Dot::kStepBytes);
                constexpr bool kStreamUnit = g::StreamTableOf<Dot>::own_unit;
                if constexpr (kStreamAlign != Dot::kAlign || kStreamUnit) {
                    if (in % 256 == 0) {
                        EXPECT_EQ((check_terms<Dot, kStreamAlign, true>(s, 0)), 0);
                        EXPECT_EQ(g::host_misaligned_loads, 0) << "a streamed unit's load claims more alignment than its address has";
                    }
                }
                if constexpr (kStreamUnit) {
                    for (std::size_t offset = 0; offset < 16; ++offset) EXPECT_EQ((check_terms<Dot, 2, true>(s, offset)), 0);
                }
                for (std::size_t offset = 0; offset < 16; ++offset) EXPECT_EQ((check_terms<Dot, 2>(s, offset)), 0);
                if (::testing::Test::HasFailure()) return;
                if (range == quant::ScaleRange::Moderate) on_rows(s, terms);
            }
        }
    }
}

}  // namespace
}  // namespace dense::test::cuda
