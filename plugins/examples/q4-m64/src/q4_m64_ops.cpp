// CPU implementations of DEQUANTIZE, GEMV_Q (F32 activation) and EMBED_ROW for example.q4_m64.
// Simple scalar loops: the example is about the pack interface, not about speed.
#include "q4_m64_ops.hpp"

#include "q4_m64_format.hpp"

#include <dense/sdk/pack.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace example_q4m64 {
namespace {

std::string dims(const dense_tensor_view& v) {
    return "{" + std::to_string(v.ne[0]) + ", " + std::to_string(v.ne[1]) + ", " + std::to_string(v.ne[2]) + ", " +
           std::to_string(v.ne[3]) + "}";
}

// The view lies in host memory, has the type, positive dimensions, ne[0] a whole number of blocks,
// and is packed (nb[0] = block bytes, each longer dimension right after the previous; the stride of
// a dimension of size 1 does not matter).
std::string check_packed(const dense_tensor_view& v, const char* role, uint32_t type, uint32_t block_elements,
                         uint32_t block_bytes, size_t alignment) {
    const std::string r = role;
    if (v.device_kind != DENSE_DEVICE_CPU) return r + " is not in host memory";
    if (v.type != type) return r + " has type id " + std::to_string(v.type) + ", expected " + std::to_string(type);
    if (v.data == nullptr) return r + " has no data";
    if (reinterpret_cast<uintptr_t>(v.data) % alignment != 0) return r + " data is not aligned to " + std::to_string(alignment);
    for (int i = 0; i < 4; ++i)
        if (v.ne[i] < 1) return r + " has dimension " + std::to_string(i) + " = " + std::to_string(v.ne[i]);
    if (v.ne[0] % block_elements != 0)
        return r + " ne[0] = " + std::to_string(v.ne[0]) + " is not a multiple of " + std::to_string(block_elements);
    int64_t expected = block_bytes;
    if (v.nb[0] != expected) return r + " nb[0] = " + std::to_string(v.nb[0]) + ", expected " + std::to_string(expected);
    expected = v.ne[0] / block_elements * block_bytes;
    for (int i = 1; i < 4; ++i) {
        if (v.ne[i] > 1 && v.nb[i] != expected)
            return r + " is not packed: nb[" + std::to_string(i) + "] = " + std::to_string(v.nb[i]) + ", expected " +
                   std::to_string(expected);
        expected *= v.ne[i];
    }
    return {};
}

std::string check_q4(const OpEnv& env, const dense_tensor_view& v, const char* role) {
    return check_packed(v, role, env.type_id, kBlockElements, kBlockBytes, alignof(Block));
}

std::string check_f32(const dense_tensor_view& v, const char* role) {
    return check_packed(v, role, DENSE_TYPE_F32, 1, 4, alignof(float));
}

std::string check_shape(const dense_tensor_view& v, const char* role, int64_t ne0, int64_t ne1) {
    if (v.ne[0] == ne0 && v.ne[1] == ne1 && v.ne[2] == 1 && v.ne[3] == 1) return {};
    return std::string(role) + " has shape " + dims(v) + ", expected {" + std::to_string(ne0) + ", " +
           std::to_string(ne1) + ", 1, 1}";
}

int64_t bytes_of(const dense_tensor_view& v, uint32_t block_elements, uint32_t block_bytes) {
    return dense::sdk::element_count(v) / block_elements * block_bytes;
}

// Outputs must not overlap inputs: the loops below read the inputs while writing dst.
std::string check_disjoint(const dense_tensor_view& dst, int64_t dst_bytes, const dense_tensor_view& src,
                           int64_t src_bytes, const char* src_role) {
    const auto a = reinterpret_cast<uintptr_t>(dst.data);
    const auto b = reinterpret_cast<uintptr_t>(src.data);
    if (a + static_cast<uintptr_t>(dst_bytes) <= b || b + static_cast<uintptr_t>(src_bytes) <= a) return {};
    return std::string("dst overlaps ") + src_role;
}

// First non-empty message of a list of checks, evaluated in order (later ones may rely on earlier).
template <class... Checks>
std::string first_error(Checks&&... checks) {
    std::string err;
    ((err.empty() ? (void)(err = checks()) : (void)0), ...);
    return err;
}

const Block* blocks_of(const dense_tensor_view& v) {
    return static_cast<const Block*>(v.data);
}

}  // namespace

std::string dequantize(const OpEnv& env, const dense_op_call& c, bool run) {
    std::string err = first_error(
        [&]() -> std::string { return c.n_src == 1 && c.n_dst == 1 ? "" : "expects 1 source and 1 destination"; },
        [&] { return check_q4(env, c.src[0], "src0 (blocks)"); },
        [&] { return check_f32(c.dst[0], "dst"); },
        [&]() -> std::string {
            if (dense::sdk::element_count(c.src[0]) == dense::sdk::element_count(c.dst[0])) return {};
            return "dst " + dims(c.dst[0]) + " and src0 " + dims(c.src[0]) + " differ in element count";
        },
        [&] {
            return check_disjoint(c.dst[0], dense::sdk::element_count(c.dst[0]) * 4, c.src[0],
                                  bytes_of(c.src[0], kBlockElements, kBlockBytes), "src0");
        });
    if (!err.empty() || !run) return err;
    dequantize_blocks(blocks_of(c.src[0]), static_cast<float*>(c.dst[0].data),
                      dense::sdk::element_count(c.src[0]) / kBlockElements);
    return {};
}

uint64_t gemv_workspace_bytes(const dense_op_call& c) {
    if (c.n_src < 1) return 0;
    return static_cast<uint64_t>(c.src[0].ne[0] / kBlockElements) * sizeof(float);
}

std::string gemv_f32(const OpEnv& env, const dense_op_call& c, bool run) {
    // params are optional; read no further than the host wrote (an older host's struct is shorter).
    auto params = dense::sdk::make_struct<dense_gemv_params>();
    std::string err = first_error(
        [&]() -> std::string { return c.n_src == 2 && c.n_dst == 1 ? "" : "expects 2 sources and 1 destination"; },
        [&] { return check_q4(env, c.src[0], "src0 (weight)"); },
        [&] { return check_shape(c.src[0], "src0 (weight)", c.src[0].ne[0], c.src[0].ne[1]); },
        [&] { return check_f32(c.src[1], "src1 (activation)"); },
        [&] { return check_shape(c.src[1], "src1 (activation)", c.src[0].ne[0], 1); },
        [&] { return check_f32(c.dst[0], "dst"); },
        [&] { return check_shape(c.dst[0], "dst", c.src[0].ne[1], 1); },
        [&] {
            return check_disjoint(c.dst[0], c.dst[0].ne[0] * 4, c.src[0], bytes_of(c.src[0], kBlockElements, kBlockBytes),
                                  "src0 (weight)");
        },
        [&] { return check_disjoint(c.dst[0], c.dst[0].ne[0] * 4, c.src[1], c.src[1].ne[0] * 4, "src1 (activation)"); },
        [&]() -> std::string {
            if (c.params == nullptr) return {};
            const auto* p = static_cast<const dense_gemv_params*>(c.params);
            if (p->hdr.abi_major != DENSE_ABI_MAJOR) return "dense_gemv_params has another ABI major";
            if (!dense::sdk::has_bytes(p, offsetof(dense_gemv_params, accumulate) + sizeof(uint32_t)))
                return "dense_gemv_params is too small to hold 'accumulate'";
            params = dense::sdk::read_struct(p);
            return {};
        });
    if (!err.empty() || !run) return err;

    const int64_t in = c.src[0].ne[0], out = c.src[0].ne[1];
    const int64_t nb = in / kBlockElements;
    const auto* x = static_cast<const float*>(c.src[1].data);
    auto* y = static_cast<float*>(c.dst[0].data);
    // x = d*q + m per block, so a row's dot product is sum_b (d_b * sum(q*x) + m_b * sum(x)): the
    // sums of x per block are the same for every row, computed once.
    float* xsum = c.workspace != nullptr && c.workspace_bytes >= static_cast<uint64_t>(nb) * sizeof(float)
                      ? static_cast<float*>(c.workspace)
                      : nullptr;
    if (xsum != nullptr) {
        for (int64_t b = 0; b < nb; ++b) {
            float s = 0.0f;
            for (int e = 0; e < 64; ++e) s += x[b * 64 + e];
            xsum[b] = s;
        }
    }
    for (int64_t r = 0; r < out; ++r) {
        const Block* row = blocks_of(c.src[0]) + r * nb;
        float acc = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            const float* xb = x + b * 64;
            float qx = 0.0f;
            for (int e = 0; e < 32; ++e) {
                qx += static_cast<float>(row[b].qs[e] & 0x0F) * xb[e];
                qx += static_cast<float>(row[b].qs[e] >> 4) * xb[e + 32];
            }
            float sx = 0.0f;
            if (xsum != nullptr) {
                sx = xsum[b];
            } else {  // no workspace: sum this block of x again (same result, more work)
                for (int e = 0; e < 64; ++e) sx += xb[e];
            }
            acc += half_to_float(row[b].d) * qx + half_to_float(row[b].m) * sx;
        }
        y[r] = params.accumulate != 0 ? y[r] + acc : acc;
    }
    return {};
}

std::string embed_row(const OpEnv& env, const dense_op_call& c, bool run) {
    const bool row_input = c.n_src == 2;
    int64_t row = 0;
    std::string err = first_error(
        [&]() -> std::string {
            return (c.n_src == 1 || c.n_src == 2) && c.n_dst == 1 ? "" : "expects 1 or 2 sources and 1 destination";
        },
        [&] { return check_q4(env, c.src[0], "src0 (table)"); },
        [&] { return check_shape(c.src[0], "src0 (table)", c.src[0].ne[0], c.src[0].ne[1]); },
        [&] { return check_f32(c.dst[0], "dst"); },
        [&] { return check_shape(c.dst[0], "dst", c.src[0].ne[0], 1); },
        [&] {
            return check_disjoint(c.dst[0], c.dst[0].ne[0] * 4, c.src[0], bytes_of(c.src[0], kBlockElements, kBlockBytes),
                                  "src0 (table)");
        },
        [&]() -> std::string {
            if (!row_input) return {};
            if (std::string e = check_packed(c.src[1], "src1 (row)", DENSE_TYPE_I32, 1, 4, alignof(int32_t)); !e.empty())
                return e;
            return check_shape(c.src[1], "src1 (row)", 1, 1);
        },
        [&]() -> std::string {
            if (row_input) return {};
            const auto* p = static_cast<const dense_embed_row_params*>(c.params);
            if (p == nullptr) return "no src1 and no dense_embed_row_params: which row?";
            if (p->hdr.abi_major != DENSE_ABI_MAJOR) return "dense_embed_row_params has another ABI major";
            if (!dense::sdk::has_bytes(p, offsetof(dense_embed_row_params, row) + sizeof(int64_t)))
                return "dense_embed_row_params is too small to hold 'row'";
            row = dense::sdk::read_struct(p).row;
            return {};
        },
        [&]() -> std::string {
            if (row_input) {
                if (!run) return {};  // the row is data: known only when the call runs
                int32_t r = 0;
                std::memcpy(&r, c.src[1].data, sizeof r);
                row = r;
            }
            if (row >= 0 && row < c.src[0].ne[1]) return {};
            return "row " + std::to_string(row) + " is outside [0, " + std::to_string(c.src[0].ne[1]) + ")";
        });
    if (!err.empty() || !run) return err;
    const int64_t nb = c.src[0].ne[0] / kBlockElements;
    dequantize_blocks(blocks_of(c.src[0]) + row * nb, static_cast<float*>(c.dst[0].data), nb);
    return {};
}

}  // namespace example_q4m64
