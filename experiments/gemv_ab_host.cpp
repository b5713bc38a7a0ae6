// Host reference for experiments/gemv_ab.cu: the same per-format Dot code compiled as plain C++
// (as tests/cuda/gemv_host_test.cpp does), terms summed in double.
#include "kernels/gemv_dot_iq2.cuh"
#include "kernels/gemv_dot_iq3.cuh"
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q2_k.cuh"
#include "kernels/gemv_dot_q3_k.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_dot_q8_0.cuh"
#include "dense_quant_tables.h"

#include <cstring>
#include <string>
#include <vector>

using namespace dense::cuda::gemv;

namespace {
template <class Dot>
double row_dot(const uint8_t* row, int64_t in, const int8_t* q, const float* d, const float* s) {
    IqTables t;
    if constexpr (Dot::kTable == IqTable::Iq2xsGrid) t.grid64 = dense_iq2xs_grid;
    if constexpr (Dot::kTable == IqTable::Iq2sGrid) t.grid64 = dense_iq2s_grid;
    if constexpr (Dot::kTable == IqTable::Iq3xxsGrid) t.grid32 = dense_iq3xxs_grid;
    if constexpr (Dot::kTable == IqTable::Iq3sGrid) t.grid32 = dense_iq3s_grid;
    if constexpr (Dot::kTable == IqTable::Iq4Values)
        for (int w = 0; w < 4; ++w) {
            uint32_t v = 0;
            for (int j = 0; j < 4; ++j) v |= static_cast<uint32_t>(static_cast<uint8_t>(dense_kvalues_iq4nl[4 * w + j])) << (8 * j);
            t.kvalues[w] = v;
        }
    double sum = 0;
    std::vector<uint8_t> buf(Dot::kStepBytes + 64);
    const ActView v{q, d, s};
    for (int64_t st = 0; st < in / 256; ++st) {
        std::memcpy(buf.data() + 16, row + st * Dot::kStepBytes, Dot::kStepBytes);
        for (int u = 0; u < 4; ++u) {
            ActUnit a;
            load_act_pair(v, st * 8 + 2 * u, a);
            float term[2];
            Dot::template unit<2>(buf.data() + 16, u, a, t, term);
            sum += term[0];
            sum += term[1];
        }
    }
    return sum;
}
}  // namespace

double host_row(const char* fmt, const uint8_t* row, int64_t in, const int8_t* q, const float* d, const float* s) {
    const std::string f = fmt;
    if (f == "q8_0") return row_dot<Q8_0Dot>(row, in, q, d, s);
    if (f == "q4_k") return row_dot<Q4_KDot>(row, in, q, d, s);
    if (f == "iq4_xs") return row_dot<IQ4_XSDot>(row, in, q, d, s);
    if (f == "q5_k") return row_dot<Q5_KDot>(row, in, q, d, s);
    if (f == "q6_k") return row_dot<Q6_KDot>(row, in, q, d, s);
    if (f == "q3_k") return row_dot<Q3_KDot>(row, in, q, d, s);
    if (f == "q2_k") return row_dot<Q2_KDot>(row, in, q, d, s);
    if (f == "iq2_xs") return row_dot<IQ2_XSDot>(row, in, q, d, s);
    if (f == "iq2_s") return row_dot<IQ2_SDot>(row, in, q, d, s);
    if (f == "iq3_xxs") return row_dot<IQ3_XXSDot>(row, in, q, d, s);
    if (f == "iq3_s") return row_dot<IQ3_SDot>(row, in, q, d, s);
    if (f == "iq4_nl") return row_dot<IQ4_NLDot>(row, in, q, d, s);
    return 0.0;
}
