#include "act_quantized_copy.hpp"

#include "act_view_checks.hpp"
#include "formats.hpp"
#include "view_checks.hpp"

namespace dense::cuda::act {

std::string check_quantized_copy(const dense_op_call& c, int64_t n, int64_t rows) {
    if (c.n_dst < 2) return "expects dst1, the quantized copy of dst (this op is registered as fused with q8_32)";
    const dense_tensor_view& q = c.dst[1];
    const int64_t total = n * rows;
    // Whole blocks per row: the kernels quantize one row's block per warp (a block never spans rows).
    if (n % 32 != 0)
        return "dst1 (quantized copy): rows of " + std::to_string(n) + " elements are not whole 32-element blocks";
    if (std::string e = check_matrix(c.dst[0], "dst", DENSE_TYPE_F32, n, rows, Rows::Contiguous); !e.empty())
        return e + " (a quantized copy needs a contiguous dst)";
    if (std::string e = check_contiguous(q, "dst1 (quantized copy)", q8_32_format()); !e.empty()) return e;
    if (std::string e = check_shape(q, "dst1 (quantized copy)", {total, 1, 1, 1}); !e.empty()) return e;
    if (std::string e = check_aligned(q, "dst1 (quantized copy)", 4); !e.empty()) return e;  // its d and s floats
    if (std::string e = check_same_device(q, c.dst[0]); !e.empty()) return e;
    const int64_t q_bytes = total / 32 * 40;  // codes, d and s of each block (check_contiguous bounded it)
    const auto plain_bytes = [](const dense_tensor_view& v) {
        return (v.ne[1] - 1) * v.nb[1] + v.ne[0] * plain_element_bytes(v.type);
    };
    if (std::string e = dense::cuda::check_disjoint(q, "dst1 (quantized copy)", q_bytes, c.dst[0], "dst", plain_bytes(c.dst[0]));
        !e.empty())
        return e;
    static const char* const kSrc[] = {"src0", "src1", "src2", "src3"};
    for (uint32_t i = 0; i < c.n_src && i < 4; ++i)
        if (std::string e = dense::cuda::check_disjoint(q, "dst1 (quantized copy)", q_bytes, c.src[i], kSrc[i], plain_bytes(c.src[i]));
            !e.empty())
            return e;
    return {};
}

Q8_32Out quantized_copy_target(const dense_op_call& c) noexcept {
    Q8_32Out out;
    out.base = static_cast<uint8_t*>(c.dst[1].data);
    out.n = c.dst[1].ne[0];
    return out;
}

}  // namespace dense::cuda::act
