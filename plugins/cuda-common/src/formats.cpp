#include "formats.hpp"

#include <array>

namespace dense::cuda {
namespace {

constexpr std::array kFormats = {
    CudaFormat{DENSE_TYPE_F32, "f32", 1, 4, launch_dequantize_f32},
    CudaFormat{DENSE_TYPE_F16, "f16", 1, 2, launch_dequantize_f16},
    CudaFormat{DENSE_TYPE_Q8_0, "q8_0", 32, 34, launch_dequantize_q8_0},
    CudaFormat{DENSE_TYPE_Q2_K, "q2_k", 256, 84, launch_dequantize_q2_k},
    CudaFormat{DENSE_TYPE_Q3_K, "q3_k", 256, 110, launch_dequantize_q3_k},
    CudaFormat{DENSE_TYPE_Q4_K, "q4_k", 256, 144, launch_dequantize_q4_k},
    CudaFormat{DENSE_TYPE_Q5_K, "q5_k", 256, 176, launch_dequantize_q5_k},
    CudaFormat{DENSE_TYPE_Q6_K, "q6_k", 256, 210, launch_dequantize_q6_k},
    CudaFormat{DENSE_TYPE_IQ2_XS, "iq2_xs", 256, 74, launch_dequantize_iq2_xs},
    CudaFormat{DENSE_TYPE_IQ3_XXS, "iq3_xxs", 256, 98, launch_dequantize_iq3_xxs},
    CudaFormat{DENSE_TYPE_IQ4_NL, "iq4_nl", 32, 18, launch_dequantize_iq4_nl},
    CudaFormat{DENSE_TYPE_IQ3_S, "iq3_s", 256, 110, launch_dequantize_iq3_s},
    CudaFormat{DENSE_TYPE_IQ2_S, "iq2_s", 256, 82, launch_dequantize_iq2_s},
    CudaFormat{DENSE_TYPE_IQ4_XS, "iq4_xs", 256, 136, launch_dequantize_iq4_xs},
    CudaFormat{DENSE_TYPE_BF16, "bf16", 1, 2, launch_dequantize_bf16},
};

}  // namespace

std::span<const CudaFormat> cuda_formats() noexcept {
    return kFormats;
}

const CudaFormat& q8_32_format() noexcept {
    static constexpr CudaFormat kQ8_32{DENSE_TYPE_Q8_32, "q8_32", 32, 40, nullptr};
    return kQ8_32;
}

const CudaFormat* find_cuda_format(dense_type_id type) noexcept {
    for (const CudaFormat& f : kFormats)
        if (f.type == type) return &f;
    return nullptr;
}

}  // namespace dense::cuda
