// The dp4a GEMM's flavour of the per-format dot code (DENSE_GEMV_PURE_ASM = 1, as gemm_*.cu build it),
// compiled as plain C++ and checked term by term against cpu-ref like the GEMV's flavour in
// gemv_host_test.cpp. The two flavours form some formats' exact integer sums differently (IQ4_NL /
// IQ4_XS: lookup16 codes against the GEMV's sign split; Q6_K: 32 off each code against 32 x the
// activation sums). Both must give cpu-ref's terms bit for bit, or a GEMM column would stop being
// its GEMV (which the batched prompt relies on); here that is checked on every machine, the GPU
// tests (CudaGemm.*EveryColumnIsItsGemv) check nvcc's build of it.
#define DENSE_GEMV_PURE_ASM 1
#include "../../plugins/cuda-common/src/kernels/gemv_dot_iq4.cuh"
#include "../../plugins/cuda-common/src/kernels/gemv_dot_q6_k.cuh"
#include "cuda/gemv_host_terms.hpp"

#include <gtest/gtest.h>

namespace dense::test::cuda {
namespace {

class GemmFlavourDotOnHost : public ::testing::TestWithParam<const FormatKernels*> {};

TEST_P(GemmFlavourDotOnHost, TermsMatchCpuRef) {
    const FormatKernels& f = *GetParam();
    const auto no_row_checks = [](const RowSetup&, const std::vector<std::vector<float>>&) {};
    switch (f.type) {
        case DENSE_TYPE_IQ4_NL: return check_format_terms<g::IQ4_NLDot>(f, no_row_checks);
        case DENSE_TYPE_IQ4_XS: return check_format_terms<g::IQ4_XSDot>(f, no_row_checks);
        case DENSE_TYPE_Q6_K: return check_format_terms<g::Q6_KDot>(f, no_row_checks);
        default: FAIL() << f.name << " is not one of the formats whose flavours differ";
    }
}

std::vector<const FormatKernels*> formats_whose_flavours_differ() {
    std::vector<const FormatKernels*> out;
    for (const FormatKernels* f : quant::quantized_weight_formats())
        if (f->type == DENSE_TYPE_IQ4_NL || f->type == DENSE_TYPE_IQ4_XS || f->type == DENSE_TYPE_Q6_K) out.push_back(f);
    return out;
}

INSTANTIATE_TEST_SUITE_P(FlavoursDiffer, GemmFlavourDotOnHost, ::testing::ValuesIn(formats_whose_flavours_differ()),
                         quant::format_param_name);

}  // namespace
}  // namespace dense::test::cuda
