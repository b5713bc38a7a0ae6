// The activation ops of the CUDA packs on the host: registration, workspace_bytes, and the validation of
// calls. No GPU needed (views carry fake device addresses that are never dereferenced): every malformed
// call is refused by supports() without a log line and by run() with DENSE_E_INVALID_ARGUMENT (or the
// status the mutation names) and exactly one log line that names the impl and the offending view.
// Runs wherever the packs were built (CI included).
#include "cuda/cuda_pack_support.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dense::test::cuda {
namespace {

// Fake, far-apart, 256-byte aligned device addresses: view i lives at kBase + i * kSpan.
constexpr uintptr_t kBase = uintptr_t{0x7f0000000000};
constexpr uintptr_t kSpan = uintptr_t{1} << 30;

void* fake(int i) {
    return reinterpret_cast<void*>(kBase + static_cast<uintptr_t>(i) * kSpan);
}

dense_tensor_view plain(int slot, dense_type_id type, int64_t ne0, int64_t ne1 = 1, int64_t stride = 0) {
    const int64_t elem = type == DENSE_TYPE_F16 ? 2 : 4;
    dense_tensor_view v{};
    v.data = fake(slot);
    v.type = type;
    v.device_kind = DENSE_DEVICE_CUDA;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.ne[2] = v.ne[3] = 1;
    v.nb[0] = elem;
    v.nb[1] = elem * (stride == 0 ? ne0 : stride);
    v.nb[2] = v.nb[3] = v.nb[1] * ne1;
    return v;
}

dense_tensor_view cache(int slot, dense_type_id type, int64_t d, int64_t heads, int64_t n_ctx) {
    dense_tensor_view v = plain(slot, type, d, heads);
    v.ne[2] = n_ctx;
    v.nb[2] = v.nb[1] * heads;
    v.nb[3] = v.nb[2] * n_ctx;
    return v;
}

// A well-formed call of one op; mutations break it in one way each.
struct Fixture {
    std::vector<dense_tensor_view> src, dst;
    dense_norm_params norm = dense::sdk::make_struct<dense_norm_params>();
    dense_rope_params rope = dense::sdk::make_struct<dense_rope_params>();
    dense_attn_params attn = dense::sdk::make_struct<dense_attn_params>();
    dense_conv_params conv = dense::sdk::make_struct<dense_conv_params>();
    dense_gdn_params gdn = dense::sdk::make_struct<dense_gdn_params>();
    dense_abi_header* params = nullptr;  // the member the call points at (nullptr: no params)
    dense_op_call call = dense::sdk::make_struct<dense_op_call>();

    Fixture(const Fixture&) = delete;
    Fixture& operator=(const Fixture&) = delete;

    explicit Fixture(dense_op_kind kind) {
        norm.eps = 1e-6f;
        rope.n_rot = 64;
        rope.mode = DENSE_ROPE_NEOX;
        rope.freq_base = 1e7f;
        rope.freq_scale = 1.0f;
        attn.scale = 0.0625f;
        conv.apply_silu = 1;
        gdn.scale = 0.088f;
        call.op_kind = kind;
        switch (kind) {
            case DENSE_OP_RMS_NORM:
                src = {plain(0, DENSE_TYPE_F32, 256, 24, 512), plain(1, DENSE_TYPE_F32, 256)};
                dst = {plain(2, DENSE_TYPE_F32, 256, 24)};
                params = &norm.hdr;
                break;
            case DENSE_OP_L2_NORM:
                src = {plain(0, DENSE_TYPE_F32, 128, 16)};
                dst = {src[0]};  // in place
                params = &norm.hdr;
                break;
            case DENSE_OP_GATED_RMS_NORM:
                src = {plain(0, DENSE_TYPE_F32, 128, 48), plain(1, DENSE_TYPE_F32, 128, 48),
                       plain(2, DENSE_TYPE_F32, 128)};
                dst = {plain(3, DENSE_TYPE_F32, 128, 48)};
                params = &norm.hdr;
                break;
            case DENSE_OP_ROPE:
                src = {plain(0, DENSE_TYPE_F32, 256, 24), plain(1, DENSE_TYPE_I32, 1)};
                dst = {src[0]};
                params = &rope.hdr;
                break;
            case DENSE_OP_KV_STORE:
                src = {plain(0, DENSE_TYPE_F32, 256, 4), plain(1, DENSE_TYPE_F32, 256, 4), plain(2, DENSE_TYPE_I32, 1)};
                dst = {cache(3, DENSE_TYPE_F16, 256, 4, 32768), cache(4, DENSE_TYPE_F16, 256, 4, 32768)};
                break;
            case DENSE_OP_ATTN_DECODE:
                src = {plain(0, DENSE_TYPE_F32, 256, 24), cache(1, DENSE_TYPE_F16, 256, 4, 32768),
                       cache(2, DENSE_TYPE_F16, 256, 4, 32768), plain(3, DENSE_TYPE_I32, 1),
                       plain(4, DENSE_TYPE_F32, 256, 24, 512)};
                dst = {plain(5, DENSE_TYPE_F32, 256, 24)};
                params = &attn.hdr;
                call.workspace = fake(6);
                call.workspace_bytes = uint64_t{1} << 28;
                break;
            case DENSE_OP_CONV1D_CAUSAL:
                src = {plain(0, DENSE_TYPE_F32, 10240), plain(1, DENSE_TYPE_F32, 4, 10240), plain(2, DENSE_TYPE_F32, 3, 10240)};
                dst = {plain(3, DENSE_TYPE_F32, 10240), src[2]};  // state in place
                params = &conv.hdr;
                break;
            case DENSE_OP_GDN_GATES:
                src = {plain(0, DENSE_TYPE_F32, 48), plain(1, DENSE_TYPE_F32, 48), plain(2, DENSE_TYPE_F32, 48),
                       plain(3, DENSE_TYPE_F32, 48)};
                dst = {plain(4, DENSE_TYPE_F32, 48), plain(5, DENSE_TYPE_F32, 48)};
                break;
            case DENSE_OP_GDN_DECODE: {
                dense_tensor_view x = plain(0, DENSE_TYPE_F32, 128, 16);  // q | k | v inside one conv output
                dense_tensor_view k = x, v = plain(0, DENSE_TYPE_F32, 128, 48);
                k.data = static_cast<char*>(x.data) + 2048 * 4;
                v.data = static_cast<char*>(x.data) + 4096 * 4;
                src = {x, k, v, plain(1, DENSE_TYPE_F32, 48), plain(2, DENSE_TYPE_F32, 48),
                       plain(3, DENSE_TYPE_F32, 128 * 128, 48)};
                dst = {plain(4, DENSE_TYPE_F32, 128, 48), plain(5, DENSE_TYPE_F32, 128 * 128, 48)};
                params = &gdn.hdr;
                break;
            }
            case DENSE_OP_SWIGLU:
                src = {plain(0, DENSE_TYPE_F32, 17408), plain(1, DENSE_TYPE_F32, 17408)};
                dst = {plain(2, DENSE_TYPE_F32, 17408)};
                break;
            case DENSE_OP_CHECK_FINITE:
                src = {plain(0, DENSE_TYPE_F32, 5120)};
                dst = {plain(1, DENSE_TYPE_I32, 1)};
                break;
            case DENSE_OP_ARGMAX:  // the 27B's vocabulary
                src = {plain(0, DENSE_TYPE_F32, 248320)};
                dst = {plain(1, DENSE_TYPE_I32, 1)};
                call.workspace = fake(6);
                call.workspace_bytes = 4096;
                break;
            case DENSE_OP_TOP_K:  // the 27B's vocabulary, the chat default k
                src = {plain(0, DENSE_TYPE_F32, 248320)};
                dst = {plain(1, DENSE_TYPE_I32, 40), plain(2, DENSE_TYPE_F32, 40)};
                call.workspace = fake(6);
                call.workspace_bytes = uint64_t{1} << 20;
                break;
            default:
                ADD_FAILURE() << "no fixture for op " << kind;
        }
    }

    const dense_op_call& finish() {
        call.n_src = static_cast<uint32_t>(src.size());
        call.src = src.data();
        call.n_dst = static_cast<uint32_t>(dst.size());
        call.dst = dst.data();
        call.params = params;
        return call;
    }
};

struct Mutation {
    std::string what;
    std::function<void(Fixture&)> apply;
    std::string names;  // the log line must contain this (the view or field at fault)
    dense_status expected = DENSE_E_INVALID_ARGUMENT;
    // The fault only exists when the call runs (the workspace: the host asks supports() and
    // workspace_bytes() before it allocates one), so supports() still accepts the call.
    bool supported_until_run = false;
};

const std::vector<dense_op_kind>& activation_kinds() {
    static const std::vector<dense_op_kind> kinds = {
        DENSE_OP_RMS_NORM,      DENSE_OP_ROPE,     DENSE_OP_ATTN_DECODE,     DENSE_OP_GDN_DECODE,
        DENSE_OP_CONV1D_CAUSAL, DENSE_OP_SWIGLU,   DENSE_OP_L2_NORM,         DENSE_OP_GATED_RMS_NORM,
        DENSE_OP_GDN_GATES,     DENSE_OP_KV_STORE, DENSE_OP_CHECK_FINITE,   DENSE_OP_ARGMAX,
        DENSE_OP_TOP_K};
    return kinds;
}

// Mutations every op must refuse.
std::vector<Mutation> common_mutations() {
    return {
        {"src0 on the CPU", [](Fixture& f) { f.src[0].device_kind = DENSE_DEVICE_CPU; }, "src0"},
        {"NULL src0 data", [](Fixture& f) { f.src[0].data = nullptr; }, "src0"},
        {"dst0 on another device", [](Fixture& f) { f.dst[0].device_index = 1; }, "different CUDA devices"},
        {"src0 of type bf16", [](Fixture& f) { f.src[0].type = DENSE_TYPE_BF16; }, "src0"},
        {"src0 is 4-D", [](Fixture& f) { f.src[0].ne[3] = 2; }, "src0"},
        {"src0 has a zero dimension", [](Fixture& f) { f.src[0].ne[1] = 0; }, "src0"},
        {"dst0 misaligned", [](Fixture& f) { f.dst[0].data = static_cast<char*>(f.dst[0].data) + 1; }, "dst"},
        {"one source too many (attention: 6, neither 4 nor 5)", [](Fixture& f) { f.src.push_back(f.src[0]); },
         "source(s)"},
        {"no destination", [](Fixture& f) { f.dst.clear(); }, "destination(s)"},
        {"NULL src array",
         [](Fixture& f) {
             f.finish();
             f.src.clear();
             f.call.src = nullptr;
         },
         "NULL"},
        {"op kind routed to the wrong impl", [](Fixture& f) { f.call.op_kind = DENSE_OP_GEMV_Q; }, "routed"},
        {"call struct too small", [](Fixture& f) { f.call.hdr.struct_size = 8; }, "struct_size"},
        {"call of another ABI major", [](Fixture& f) { f.call.hdr.abi_major = 2; }, "ABI major", DENSE_E_ABI},
    };
}

// Mutations of one op's own rules (shapes, strides, aliasing, params).
std::vector<Mutation> op_mutations(dense_op_kind kind) {
    auto params_mutations = [](const char* name) {
        return std::vector<Mutation>{
            {"NULL params", [](Fixture& f) { f.params = nullptr; }, name},
            {"params struct too small", [](Fixture& f) { f.params->struct_size = 4; }, "struct_size"},
            {"params of another ABI major", [](Fixture& f) { f.params->abi_major = 3; }, "ABI major"},
        };
    };
    std::vector<Mutation> m;
    switch (kind) {
        case DENSE_OP_RMS_NORM:
            m = params_mutations("dense_norm_params");
            m.push_back({"weight length differs", [](Fixture& f) { f.src[1].ne[0] = 255; }, "src1 (weight)"});
            m.push_back({"dst rows differ", [](Fixture& f) { f.dst[0].ne[1] = 23; }, "dst"});
            m.push_back({"x row stride below the row", [](Fixture& f) { f.src[0].nb[1] = 1000; }, "src0 (x)"});
            m.push_back({"x row stride not a multiple of 4", [](Fixture& f) { f.src[0].nb[1] = 2050; }, "src0 (x)"});
            m.push_back({"nb[0] not the element size", [](Fixture& f) { f.src[0].nb[0] = 8; }, "src0 (x)"});
            m.push_back({"dst partly overlaps x",
                         [](Fixture& f) { f.dst[0].data = static_cast<char*>(f.src[0].data) + 64; }, "partly overlaps"});
            m.push_back({"dst overlaps the weight", [](Fixture& f) { f.dst[0].data = f.src[1].data; }, "src1 (weight)"});
            m.push_back({"negative eps", [](Fixture& f) { f.norm.eps = -1.0f; }, "eps"});
            m.push_back({"NaN eps", [](Fixture& f) { f.norm.eps = std::nanf(""); }, "eps"});
            break;
        case DENSE_OP_L2_NORM:
            m = params_mutations("dense_norm_params");
            m.push_back({"in place with another stride", [](Fixture& f) { f.dst[0].nb[1] = 1024; }, "partly overlaps"});
            m.push_back({"dst of type f16", [](Fixture& f) { f.dst[0].type = DENSE_TYPE_F16; }, "dst"});
            break;
        case DENSE_OP_GATED_RMS_NORM:
            m = params_mutations("dense_norm_params");
            m.push_back({"x strided (must be contiguous)", [](Fixture& f) { f.src[0].nb[1] = 1024; }, "src0 (x)"});
            m.push_back({"z rows differ", [](Fixture& f) { f.src[1].ne[1] = 47; }, "src1 (z)"});
            m.push_back({"in place (not allowed)", [](Fixture& f) { f.dst[0] = f.src[0]; }, "overlaps src0 (x)"});
            m.push_back({"dst overlaps z", [](Fixture& f) { f.dst[0].data = f.src[1].data; }, "src1 (z)"});
            break;
        case DENSE_OP_ROPE:
            m = params_mutations("dense_rope_params");
            m.push_back({"position not i32", [](Fixture& f) { f.src[1].type = DENSE_TYPE_F32; }, "src1 (position)"});
            m.push_back({"position has 2 elements", [](Fixture& f) { f.src[1].ne[0] = 2; }, "src1 (position)"});
            m.push_back({"odd n_rot", [](Fixture& f) { f.rope.n_rot = 63; }, "n_rot"});
            m.push_back({"n_rot > head_dim", [](Fixture& f) { f.rope.n_rot = 258; }, "n_rot"});
            m.push_back({"unknown mode", [](Fixture& f) { f.rope.mode = 0; }, "mode"});
            m.push_back({"zero freq_base", [](Fixture& f) { f.rope.freq_base = 0.0f; }, "freq_base"});
            m.push_back({"infinite freq_scale", [](Fixture& f) { f.rope.freq_scale = INFINITY; }, "freq_scale"});
            m.push_back({"dst overlaps the position", [](Fixture& f) { f.dst[0].data = f.src[1].data; },
                         "src1 (position)"});
            break;
        case DENSE_OP_KV_STORE:
            m.push_back({"k strided (must be contiguous)", [](Fixture& f) { f.src[0].nb[1] = 2048; }, "src0 (k)"});
            m.push_back({"v heads differ", [](Fixture& f) { f.src[1].ne[1] = 3; }, "src1 (v)"});
            m.push_back({"cache of type bf16", [](Fixture& f) { f.dst[0].type = DENSE_TYPE_BF16; }, "dst0 (K cache)"});
            m.push_back({"cache head_dim differs", [](Fixture& f) { f.dst[1].ne[0] = 128; }, "dst1 (V cache)"});
            m.push_back({"cache not contiguous", [](Fixture& f) { f.dst[0].nb[2] += 2; }, "dst0 (K cache)"});
            m.push_back({"caches differ in type",
                         [](Fixture& f) {
                             f.dst[1].type = DENSE_TYPE_F32;
                             f.dst[1].nb[0] = 4;
                             f.dst[1].nb[1] = 1024;
                             f.dst[1].nb[2] = 4096;
                             f.dst[1].nb[3] = 4096 * 32768;
                         },
                         "differs from dst0"});
            m.push_back({"caches differ in n_ctx", [](Fixture& f) { f.dst[1].ne[2] = 100; }, "differs from dst0"});
            m.push_back({"K and V cache are one buffer", [](Fixture& f) { f.dst[1].data = f.dst[0].data; },
                         "dst1 (V cache) overlaps dst0"});
            m.push_back({"position is f32", [](Fixture& f) { f.src[2].type = DENSE_TYPE_F32; }, "src2 (position)"});
            break;
        case DENSE_OP_ATTN_DECODE:
            m = params_mutations("dense_attn_params");
            m.push_back({"Hq not a multiple of Hkv",
                         [](Fixture& f) {
                             for (int i : {0, 4}) f.src[static_cast<std::size_t>(i)].ne[1] = 22;
                             f.dst[0].ne[1] = 22;
                         },
                         "not a multiple"});
            m.push_back({"K cache head_dim differs from q", [](Fixture& f) { f.src[1].ne[0] = 128; }, "src1 (K cache)"});
            m.push_back({"V cache n_ctx differs", [](Fixture& f) { f.src[2].ne[2] = 1000; }, "src2 (V cache)"});
            m.push_back({"V cache heads differ", [](Fixture& f) { f.src[2].ne[1] = 2; }, "src2 (V cache)"});
            m.push_back({"n_kv not i32", [](Fixture& f) { f.src[3].type = DENSE_TYPE_F32; }, "src3 (n_kv)"});
            m.push_back({"gate rows differ", [](Fixture& f) { f.src[4].ne[1] = 23; }, "src4 (gate)"});
            m.push_back({"dst strided (must be contiguous)", [](Fixture& f) { f.dst[0].nb[1] = 2048; }, "dst"});
            m.push_back({"dst overlaps q", [](Fixture& f) { f.dst[0].data = f.src[0].data; }, "src0 (q)"});
            m.push_back({"dst overlaps the gate", [](Fixture& f) { f.dst[0].data = f.src[4].data; }, "src4 (gate)"});
            m.push_back({"infinite scale", [](Fixture& f) { f.attn.scale = INFINITY; }, "scale"});
            m.push_back({"NULL workspace", [](Fixture& f) { f.call.workspace = nullptr; }, "workspace is NULL",
                         DENSE_E_INVALID_ARGUMENT, true});
            m.push_back({"workspace too small", [](Fixture& f) { f.call.workspace_bytes = 1024; }, "workspace is smaller",
                         DENSE_E_INVALID_ARGUMENT, true});
            m.push_back({"workspace misaligned",
                         [](Fixture& f) { f.call.workspace = static_cast<char*>(f.call.workspace) + 2; }, "aligned",
                         DENSE_E_INVALID_ARGUMENT, true});
            m.push_back({"head_dim too large for shared memory",
                         [](Fixture& f) {
                             for (std::size_t i : {0u, 4u}) f.src[i].ne[0] = 8000;
                             f.src[0].nb[1] = f.src[4].nb[1] = 8000 * 4;
                             for (std::size_t i : {1u, 2u}) f.src[i] = cache(static_cast<int>(i), DENSE_TYPE_F16, 8000, 4, 10);
                             f.dst[0].ne[0] = 8000;
                             f.dst[0].nb[1] = 8000 * 4;
                         },
                         "beyond this pack", DENSE_E_UNSUPPORTED});
            break;
        case DENSE_OP_CONV1D_CAUSAL:
            m = params_mutations("dense_conv_params");
            m.push_back({"kernel width 1",
                         [](Fixture& f) {
                             f.src[1] = plain(1, DENSE_TYPE_F32, 1, 10240);
                         },
                         "kernel width"});
            m.push_back({"taps channels differ", [](Fixture& f) { f.src[1].ne[1] = 10239; }, "src1 (taps)"});
            m.push_back({"state_in has the wrong width", [](Fixture& f) { f.src[2].ne[0] = 4; }, "src2 (state_in)"});
            m.push_back({"state_out partly overlaps state_in",
                         [](Fixture& f) { f.dst[1].data = static_cast<char*>(f.src[2].data) + 12; },
                         "partly overlaps src2 (state_in)"});
            m.push_back({"y overlaps x", [](Fixture& f) { f.dst[0].data = f.src[0].data; }, "dst0 (y) overlaps src0 (x)"});
            m.push_back({"y overlaps state_out", [](Fixture& f) { f.dst[0].data = f.dst[1].data; }, "dst0 (y)"});
            break;
        case DENSE_OP_GDN_GATES:
            m.push_back({"a shorter", [](Fixture& f) { f.src[1].ne[0] = 47; }, "src1 (a)"});
            m.push_back({"A is f16", [](Fixture& f) { f.src[3].type = DENSE_TYPE_F16; }, "src3 (A)"});
            m.push_back({"decay shorter", [](Fixture& f) { f.dst[1].ne[0] = 47; }, "dst1 (decay)"});
            m.push_back({"beta in place of b (not allowed)", [](Fixture& f) { f.dst[0].data = f.src[0].data; },
                         "dst0 (beta) overlaps src0 (b)"});
            m.push_back({"decay overlaps beta", [](Fixture& f) { f.dst[1].data = f.dst[0].data; }, "dst1 (decay)"});
            break;
        case DENSE_OP_GDN_DECODE:
            m = params_mutations("dense_gdn_params");
            m.push_back({"Hv not a multiple of Hk",
                         [](Fixture& f) {
                             f.src[2].ne[1] = 47;
                         },
                         "not a multiple"});
            m.push_back({"k head dim differs", [](Fixture& f) { f.src[1].ne[0] = 64; }, "src1 (k)"});
            m.push_back({"beta shorter", [](Fixture& f) { f.src[3].ne[0] = 47; }, "src3 (beta)"});
            m.push_back({"state_in row is not dk*dv", [](Fixture& f) { f.src[5].ne[0] = 128 * 127; },
                         "src5 (state_in)"});
            m.push_back({"state_out strided", [](Fixture& f) { f.dst[1].nb[1] += 4; }, "dst1 (state_out)"});
            m.push_back({"o strided", [](Fixture& f) { f.dst[0].nb[1] = 1024; }, "dst0 (o)"});
            m.push_back({"o overlaps the state",
                         [](Fixture& f) { f.dst[0].data = f.src[5].data; }, "dst0 (o) overlaps src5 (state_in)"});
            m.push_back({"state_out partly overlaps state_in",
                         [](Fixture& f) { f.dst[1].data = static_cast<char*>(f.src[5].data) + 4; },
                         "partly overlaps src5 (state_in)"});
            m.push_back({"o overlaps v", [](Fixture& f) { f.dst[0].data = f.src[2].data; }, "src2 (v)"});
            m.push_back({"NaN scale", [](Fixture& f) { f.gdn.scale = std::nanf(""); }, "scale"});
            break;
        case DENSE_OP_SWIGLU:
            m.push_back({"up shorter", [](Fixture& f) { f.src[1].ne[0] = 17407; }, "src1 (up)"});
            m.push_back({"in place (not allowed)", [](Fixture& f) { f.dst[0] = f.src[0]; }, "overlaps src0 (gate)"});
            m.push_back({"dst overlaps up", [](Fixture& f) { f.dst[0].data = f.src[1].data; }, "src1 (up)"});
            m.push_back({"gate is 2-D", [](Fixture& f) { f.src[0] = plain(0, DENSE_TYPE_F32, 8704, 2); }, "src0 (gate)"});
            break;
        case DENSE_OP_CHECK_FINITE:
            m.push_back({"status is f32", [](Fixture& f) { f.dst[0].type = DENSE_TYPE_F32; }, "dst (status)"});
            m.push_back({"status is {2}", [](Fixture& f) { f.dst[0].ne[0] = 2; }, "dst (status)"});
            m.push_back({"status inside x", [](Fixture& f) { f.dst[0].data = f.src[0].data; }, "overlaps src0 (x)"});
            m.push_back({"x is 2-D strided", [](Fixture& f) { f.src[0] = plain(0, DENSE_TYPE_F32, 512, 10, 600); },
                         "src0 (x)"});
            break;
        case DENSE_OP_ARGMAX:
            m.push_back({"index is f32", [](Fixture& f) { f.dst[0].type = DENSE_TYPE_F32; }, "dst (index)"});
            m.push_back({"index is {2}", [](Fixture& f) { f.dst[0].ne[0] = 2; }, "dst (index)"});
            m.push_back({"index inside x", [](Fixture& f) { f.dst[0].data = f.src[0].data; }, "overlaps src0 (x)"});
            m.push_back({"x is 2-D", [](Fixture& f) { f.src[0] = plain(0, DENSE_TYPE_F32, 2048, 2); }, "src0 (x)"});
            m.push_back({"no workspace", [](Fixture& f) { f.call.workspace = nullptr; }, "workspace is NULL",
                         DENSE_E_INVALID_ARGUMENT, true});
            m.push_back({"workspace one part short", [](Fixture& f) { f.call.workspace_bytes = 127 * 12; },
                         "workspace is smaller", DENSE_E_INVALID_ARGUMENT, true});
            m.push_back({"workspace misaligned",
                         [](Fixture& f) { f.call.workspace = static_cast<char*>(f.call.workspace) + 4; },
                         "not aligned to 8 bytes", DENSE_E_INVALID_ARGUMENT, true});
            break;
        case DENSE_OP_TOP_K:
            m.push_back({"k = 0", [](Fixture& f) { f.dst[0].ne[0] = f.dst[1].ne[0] = 0; }, "dst0 (ids)"});
            m.push_back({"k = 65",
                         [](Fixture& f) { f.dst = {plain(1, DENSE_TYPE_I32, 65), plain(2, DENSE_TYPE_F32, 65)}; },
                         "dst0 (ids): TOP_K keeps 1 to 64"});
            m.push_back({"ids are f32", [](Fixture& f) { f.dst[0].type = DENSE_TYPE_F32; }, "dst0 (ids)"});
            m.push_back({"values are i32", [](Fixture& f) { f.dst[1].type = DENSE_TYPE_I32; }, "dst1 (values)"});
            m.push_back({"values shorter", [](Fixture& f) { f.dst[1].ne[0] = 39; }, "dst1 (values)"});
            m.push_back({"values over ids", [](Fixture& f) { f.dst[1].data = f.dst[0].data; },
                         "dst1 (values) overlaps dst0 (ids)"});
            m.push_back({"ids inside x", [](Fixture& f) { f.dst[0].data = f.src[0].data; }, "overlaps src0 (x)"});
            m.push_back({"x is 2-D", [](Fixture& f) { f.src[0] = plain(0, DENSE_TYPE_F32, 2048, 2); }, "src0 (x)"});
            m.push_back({"no workspace", [](Fixture& f) { f.call.workspace = nullptr; }, "workspace is NULL",
                         DENSE_E_INVALID_ARGUMENT, true});
            m.push_back({"workspace one list short", [](Fixture& f) { f.call.workspace_bytes = 60 * 40 * 8; },
                         "workspace is smaller", DENSE_E_INVALID_ARGUMENT, true});
            m.push_back({"workspace misaligned",
                         [](Fixture& f) { f.call.workspace = static_cast<char*>(f.call.workspace) + 4; },
                         "not aligned to 8 bytes", DENSE_E_INVALID_ARGUMENT, true});
            break;
        default:
            break;
    }
    // The ops with a token axis (ABI 1.10) read T from src0's ne[2]; a src0 of 2 tokens beside views
    // of one is refused where the first other view disagrees. The others are 2-D only.
    const char* first_disagreeing = kind == DENSE_OP_ROPE             ? "src1 (position)"
                                    : kind == DENSE_OP_GDN_DECODE     ? "src1 (k)"
                                    : kind == DENSE_OP_L2_NORM        ? "dst"
                                    : kind == DENSE_OP_KV_STORE       ? "src1 (v)"
                                    : kind == DENSE_OP_ATTN_DECODE    ? "src3 (n_kv)"
                                                                      : "src0";
    m.push_back({"src0 is 3-D (2 tokens, the other views 1)", [](Fixture& f) { f.src[0].ne[2] = 2; },
                 first_disagreeing});
    return m;
}

class CudaActivationOps : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (built_cuda_packs().empty()) GTEST_SKIP() << no_cuda_packs_reason();
        for (const CudaPackLib& lib : built_cuda_packs())
            if (lib.name == GetParam()) lib_ = &lib;
        ASSERT_NE(lib_, nullptr) << GetParam() << " was not built although other CUDA packs were";
        ASSERT_TRUE(lib_->usable()) << lib_->load_error;
        ASSERT_EQ(lib_->init(host_.api(), &pack_), DENSE_OK) << host_.log_text();
    }
    void TearDown() override {
        if (pack_ != nullptr) lib_->release(pack_);
    }

    const dense_op_impl& impl(dense_op_kind kind, dense_type_id fused_act = DENSE_TYPE_NONE) {
        const dense_op_impl* i = host_.find_op(kind, DENSE_TYPE_NONE, fused_act);
        if (i == nullptr) throw std::runtime_error("no impl of op " + std::to_string(kind));
        return *i;
    }

    const CudaPackLib* lib_ = nullptr;
    RecordingHost host_;
    dense_pack* pack_ = nullptr;
};

bool fuses_quantize(dense_op_kind kind) {
    return kind == DENSE_OP_RMS_NORM || kind == DENSE_OP_GATED_RMS_NORM || kind == DENSE_OP_SWIGLU;
}

// One plain impl per activation op, plus one with a Q8_32 copy of the output (act_type Q8_32) for
// the ops that produce GEMV inputs (dense_abi.h, "fused quantization").
TEST_P(CudaActivationOps, RegistersOneImplPerActivationOp) {
    for (const dense_op_kind kind : activation_kinds()) {
        int n = 0, fused = 0;
        for (const auto& op : host_.ops())
            if (op.impl.op_kind == kind) {
                ++(op.impl.act_type == DENSE_TYPE_NONE ? n : fused);
                EXPECT_EQ(op.impl.weight_type, DENSE_TYPE_NONE) << op.name;
                EXPECT_TRUE(op.impl.act_type == DENSE_TYPE_NONE ||
                            (fuses_quantize(kind) && op.impl.act_type == DENSE_TYPE_Q8_32))
                    << op.name << " act " << op.impl.act_type;
                EXPECT_EQ(op.impl.device_kind, DENSE_DEVICE_CUDA) << op.name;
                EXPECT_NE(op.impl.supports, nullptr) << op.name;
                EXPECT_NE(op.impl.run, nullptr) << op.name;
                EXPECT_EQ(op.name.rfind(GetParam() + ".", 0), 0u) << op.name;
                EXPECT_EQ(op.impl.workspace_bytes != nullptr,
                      kind == DENSE_OP_ATTN_DECODE || kind == DENSE_OP_TOP_K || kind == DENSE_OP_ARGMAX)
                    << op.name;
            }
        EXPECT_EQ(n, 1) << "op kind " << kind;
        EXPECT_EQ(fused, fuses_quantize(kind) ? 1 : 0) << "op kind " << kind;
    }
}

// The fused variants: the plain call plus dst1, a Q8_32 {N} view of the whole (contiguous) output.
TEST_P(CudaActivationOps, FusedQuantizeCallsAreCheckedLikeTheirOutput) {
    auto q8_32 = [](int slot, int64_t n) {
        dense_tensor_view v{};
        v.data = fake(slot);
        v.type = DENSE_TYPE_Q8_32;
        v.device_kind = DENSE_DEVICE_CUDA;
        v.ne[0] = n;
        v.ne[1] = v.ne[2] = v.ne[3] = 1;
        v.nb[0] = 40;
        v.nb[1] = v.nb[2] = v.nb[3] = n / 32 * 40;
        return v;
    };
    struct Case {
        dense_op_kind kind;
        std::function<void(Fixture&)> shape;  // makes dst0 contiguous where the plain fixture is not
        int64_t n;                            // elements of dst0
    };
    const Case cases[] = {
        {DENSE_OP_RMS_NORM, [](Fixture& f) { f.src[0] = plain(0, DENSE_TYPE_F32, 5120); f.src[1] = plain(1, DENSE_TYPE_F32, 5120);
                                             f.dst[0] = plain(2, DENSE_TYPE_F32, 5120); }, 5120},
        {DENSE_OP_GATED_RMS_NORM, [](Fixture&) {}, 128 * 48},
        {DENSE_OP_SWIGLU, [](Fixture&) {}, 0},
    };
    for (const Case& k : cases) {
        const dense_op_impl& i = impl(k.kind, DENSE_TYPE_Q8_32);
        auto make = [&](Fixture& f) {
            k.shape(f);
            const int64_t n = k.n > 0 ? k.n : f.dst[0].ne[0] * f.dst[0].ne[1];
            f.dst.push_back(q8_32(9, n));
            f.finish();
        };
        {
            Fixture f(k.kind);
            make(f);
            host_.clear_logs();
            EXPECT_EQ(i.supports(i.user, &f.call), 1u) << i.name << "\n" << host_.log_text();
            const dense_op_impl& plain_impl = impl(k.kind);
            EXPECT_EQ(plain_impl.supports(plain_impl.user, &f.call), 0u) << "the plain impl takes no dst1";
        }
        struct Broken {
            std::string what, names;
            std::function<void(Fixture&)> apply;
        };
        const Broken broken[] = {
            {"no dst1", "destination", [](Fixture& f) { f.dst.pop_back(); }},
            {"dst1 not q8_32", "dst1", [](Fixture& f) { f.dst[1].type = DENSE_TYPE_Q8_0; }},
            {"dst1 one block short", "dst1", [](Fixture& f) { f.dst[1].ne[0] -= 32; f.dst[1].nb[1] -= 40; }},
            {"dst1 overlaps dst", "dst1", [](Fixture& f) { f.dst[1].data = f.dst[0].data; }},
            {"dst1 overlaps src0", "dst1", [](Fixture& f) { f.dst[1].data = f.src[0].data; }},
            {"dst1 on the host", "dst1", [](Fixture& f) { f.dst[1].device_kind = DENSE_DEVICE_CPU; }},
        };
        for (const Broken& b : broken) {
            Fixture f(k.kind);
            make(f);
            b.apply(f);
            f.finish();
            const std::string label = std::string(i.name) + ": " + b.what;
            host_.clear_logs();
            EXPECT_EQ(i.supports(i.user, &f.call), 0u) << label;
            EXPECT_EQ(i.run(i.user, &f.call), DENSE_E_INVALID_ARGUMENT) << label;
            ASSERT_EQ(host_.logs().size(), 1u) << label << "\n" << host_.log_text();
            EXPECT_NE(host_.logs()[0].message.find(b.names), std::string::npos) << label << ": " << host_.logs()[0].message;
        }
    }
    {  // a norm over rows that are not 32-element blocks cannot carry a Q8_32 copy
        Fixture f(DENSE_OP_GATED_RMS_NORM);
        // (36 x 48 = 1728 elements are 54 whole blocks, but blocks would straddle rows.)
        f.src[0] = plain(0, DENSE_TYPE_F32, 36, 48);
        f.src[1] = plain(1, DENSE_TYPE_F32, 36, 48);
        f.src[2] = plain(2, DENSE_TYPE_F32, 36);
        f.dst[0] = plain(3, DENSE_TYPE_F32, 36, 48);
        f.dst.push_back(q8_32(9, 36 * 48));
        f.finish();
        const dense_op_impl& i = impl(DENSE_OP_GATED_RMS_NORM, DENSE_TYPE_Q8_32);
        host_.clear_logs();
        EXPECT_EQ(i.run(i.user, &f.call), DENSE_E_INVALID_ARGUMENT);
        ASSERT_EQ(host_.logs().size(), 1u) << host_.log_text();
        EXPECT_NE(host_.logs()[0].message.find("32-element blocks"), std::string::npos) << host_.log_text();
    }
}

TEST_P(CudaActivationOps, WellFormedCallsAreSupported) {
    for (const dense_op_kind kind : activation_kinds()) {
        Fixture f(kind);
        const dense_op_impl& i = impl(kind);
        EXPECT_EQ(i.supports(i.user, &f.finish()), 1u) << i.name << "\n" << host_.log_text();
    }
    // The variants the ABI allows: attention without the gate, F32 caches, out-of-place norms/rope,
    // ping-pong states.
    {
        Fixture f(DENSE_OP_ATTN_DECODE);
        f.src.pop_back();
        f.src[1] = cache(1, DENSE_TYPE_F32, 256, 4, 32768);
        f.src[2] = cache(2, DENSE_TYPE_F32, 256, 4, 32768);
        const dense_op_impl& i = impl(DENSE_OP_ATTN_DECODE);
        EXPECT_EQ(i.supports(i.user, &f.finish()), 1u) << "ungated, f32 caches";
    }
    {
        Fixture f(DENSE_OP_ROPE);
        f.src[0] = plain(0, DENSE_TYPE_F32, 256, 24, 512);
        f.dst[0] = plain(2, DENSE_TYPE_F32, 256, 24, 300);
        const dense_op_impl& i = impl(DENSE_OP_ROPE);
        EXPECT_EQ(i.supports(i.user, &f.finish()), 1u) << "rope strided out of place";
    }
    {
        Fixture f(DENSE_OP_GDN_DECODE);
        f.dst[1] = f.src[5];  // state in place
        const dense_op_impl& i = impl(DENSE_OP_GDN_DECODE);
        EXPECT_EQ(i.supports(i.user, &f.finish()), 1u) << "gdn state in place";
    }
    {
        Fixture f(DENSE_OP_CONV1D_CAUSAL);
        f.dst[1] = plain(4, DENSE_TYPE_F32, 3, 10240);  // ping-pong
        const dense_op_impl& i = impl(DENSE_OP_CONV1D_CAUSAL);
        EXPECT_EQ(i.supports(i.user, &f.finish()), 1u) << "conv state ping-pong";
    }
    EXPECT_TRUE(host_.logs().empty()) << host_.log_text();
}

TEST_P(CudaActivationOps, MalformedCallsAreRefusedWithOneLogLineNamingTheView) {
    for (const dense_op_kind kind : activation_kinds()) {
        const dense_op_impl& i = impl(kind);
        auto mutations = common_mutations();
        for (Mutation& m : op_mutations(kind)) mutations.push_back(std::move(m));
        for (const Mutation& m : mutations) {
            Fixture f(kind);
            f.finish();
            m.apply(f);
            if (m.what != "NULL src array") f.finish();
            const std::string label = std::string(i.name) + ": " + m.what;
            host_.clear_logs();
            EXPECT_EQ(i.supports(i.user, &f.call), m.supported_until_run ? 1u : 0u) << label;
            if (i.workspace_bytes != nullptr && !m.supported_until_run) {
                EXPECT_EQ(i.workspace_bytes(i.user, &f.call), 0u) << label;
            }
            EXPECT_TRUE(host_.logs().empty()) << "supports() and workspace_bytes() must not log: " << host_.log_text();
            EXPECT_EQ(i.run(i.user, &f.call), m.expected) << label;
            ASSERT_EQ(host_.logs().size(), 1u) << label << ": expected exactly one log line\n" << host_.log_text();
            EXPECT_EQ(host_.logs()[0].level, DENSE_LOG_ERROR) << label;
            const std::string& line = host_.logs()[0].message;
            EXPECT_NE(line.find(i.name), std::string::npos) << label << ": " << line;
            EXPECT_NE(line.find(m.names), std::string::npos) << label << ": '" << line << "' does not name '" << m.names
                                                             << "'";
        }
        EXPECT_EQ(i.run(i.user, nullptr), DENSE_E_INVALID_ARGUMENT) << i.name;
        EXPECT_EQ(i.supports(i.user, nullptr), 0u) << i.name;
    }
}

TEST_P(CudaActivationOps, AttentionWorkspaceFollowsTheContextLength) {
    const dense_op_impl& i = impl(DENSE_OP_ATTN_DECODE);
    struct Case {
        int64_t n_ctx;
        uint64_t bytes;
    };
    // Up to 64 positions: one single-pass partition, no partials. Beyond: ceil(n_ctx / 64)
    // partitions, at most (the blocks the grid aims at) / (4 KV heads x 1 head block), each with
    // hq * (head_dim + 2) floats of partials. The grid aims at 264 blocks on sm_90 (one wave of two
    // per SM on an H200, target_tuning.hpp), 512 on sm_120: at most 66 / 128 partitions.
    const uint64_t per_partition = 24ull * 258 * 4;
    const uint64_t max_parts = GetParam() == "cuda-sm90" ? 66 : 128;
    for (const Case& k : {Case{1, 0}, Case{64, 0}, Case{65, 2 * per_partition}, Case{1025, 17 * per_partition},
                          Case{8192, max_parts * per_partition}, Case{32768, max_parts * per_partition},
                          Case{262144, max_parts * per_partition}}) {
        Fixture f(DENSE_OP_ATTN_DECODE);
        f.src[1].ne[2] = f.src[2].ne[2] = k.n_ctx;
        f.src[1].nb[3] = f.src[2].nb[3] = f.src[1].nb[2] * k.n_ctx;
        EXPECT_EQ(i.workspace_bytes(i.user, &f.finish()), k.bytes) << "n_ctx " << k.n_ctx;
    }
    // A call whose struct ends before the workspace fields reads them as absent.
    Fixture f(DENSE_OP_ATTN_DECODE);
    f.finish();
    f.call.hdr.struct_size = static_cast<uint32_t>(offsetof(dense_op_call, workspace));
    host_.clear_logs();
    EXPECT_EQ(i.run(i.user, &f.call), DENSE_E_INVALID_ARGUMENT);
    ASSERT_EQ(host_.logs().size(), 1u) << host_.log_text();
    EXPECT_NE(host_.logs()[0].message.find("workspace is NULL"), std::string::npos) << host_.logs()[0].message;
}

// TOP_K's kernels pass 64 group maxima, a count and a list of up to 4,096 keys through the workspace.
TEST_P(CudaActivationOps, TopKWorkspaceIsTheGroupMaximaAndOneList) {
    const dense_op_impl& i = impl(DENSE_OP_TOP_K);
    struct Case {
        int64_t n, k;
        uint64_t bytes;
    };
    // 64 maxima, the count, and a list of 4,096 keys from byte 1,024: the same for every n and k.
    for (const Case& c : {Case{248320, 40, 33792}, Case{248320, 64, 33792}, Case{4096, 1, 33792},
                          Case{4097, 1, 33792}, Case{1, 64, 33792}, Case{151936, 40, 33792}}) {
        Fixture f(DENSE_OP_TOP_K);
        f.src[0] = plain(0, DENSE_TYPE_F32, c.n);
        f.dst = {plain(1, DENSE_TYPE_I32, c.k), plain(2, DENSE_TYPE_F32, c.k)};
        EXPECT_EQ(i.workspace_bytes(i.user, &f.finish()), c.bytes) << "n " << c.n << ", k " << c.k;
    }
    Fixture f(DENSE_OP_TOP_K);
    f.dst[1].type = DENSE_TYPE_I32;  // refused: no workspace either
    EXPECT_EQ(i.workspace_bytes(i.user, &f.finish()), 0u);
    EXPECT_TRUE(host_.logs().empty()) << host_.log_text();
}

TEST_P(CudaActivationOps, WithoutAGpuAValidCallFailsWithOneLogLine) {
    if (probe_gpu().found) GTEST_SKIP() << "a GPU is present; the GPU tests run these ops for real";
    for (const dense_op_kind kind : activation_kinds()) {
        Fixture f(kind);
        const dense_op_impl& i = impl(kind);
        host_.clear_logs();
        EXPECT_EQ(i.run(i.user, &f.finish()), DENSE_E_DEVICE) << i.name;
        EXPECT_EQ(host_.logs().size(), 1u) << i.name << "\n" << host_.log_text();
    }
}

INSTANTIATE_TEST_SUITE_P(Packs, CudaActivationOps, ::testing::ValuesIn(cuda_pack_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                             std::string n = p.param;
                             for (char& c : n)
                                 if (c == '-') c = '_';
                             return n;
                         });

}  // namespace
}  // namespace dense::test::cuda
