// Every malformed call of every cpu-ref op (activation ops, EMBED_ROW with its row input, GEMV_Q with
// its params) is refused through the pack's C entry points: DENSE_E_INVALID_ARGUMENT, exactly one
// ERROR log line naming the impl, nothing written, and supports() answering 0 without logging for
// everything knowable before the call runs (1 for bad values of the I32 inputs, which are read only
// when the call runs). Each op starts from a well-formed call (which must succeed) and applies one
// mutation at a time: generic ones to every view and to the params, then op-specific ones.
#include "cpu-ref/op_reference.hpp"
#include "cpu-ref/ops_pack_support.hpp"

#include <deque>
#include <functional>

namespace {

using namespace dense;
using namespace dense::test;

// Owns every buffer a call points into, so a refusal can be checked to have written nothing.
struct Arena {
    std::deque<std::vector<float>> buffers;

    float* floats(std::size_t n, std::mt19937_64& rng) {
        buffers.push_back(opref::uniform(n, rng));
        return buffers.back().data();
    }
    int32_t* i32(int32_t value) {
        buffers.emplace_back(1);
        std::memcpy(buffers.back().data(), &value, 4);
        return reinterpret_cast<int32_t*>(buffers.back().data());
    }
    void* bytes(std::size_t n) {  // zero-filled, float-aligned
        buffers.emplace_back((n + 3) / 4, 0.0f);
        return buffers.back().data();
    }
    std::vector<std::vector<float>> snapshot() const { return {buffers.begin(), buffers.end()}; }
    bool same_as(const std::vector<std::vector<float>>& s) const {
        if (s.size() != buffers.size()) return false;
        for (std::size_t i = 0; i < s.size(); ++i)
            if (std::memcmp(s[i].data(), buffers[i].data(), s[i].size() * sizeof(float)) != 0) return false;
        return true;
    }
};

// A call under construction: views, params as raw bytes (so mutations can corrupt the header).
struct Spec {
    dense_op_kind kind = 0;
    dense_type_id weight = DENSE_TYPE_NONE, act = DENSE_TYPE_NONE;  // the impl's key
    std::vector<dense_tensor_view> src, dst;
    alignas(8) unsigned char params[64] = {};
    bool has_params = false;
    bool null_src_array = false, null_dst_array = false;
    bool last_src_optional = false;  // dropping it leaves a valid call

    template <class P>
    void set_params(const P& p) {
        static_assert(sizeof(P) <= sizeof(params));
        std::memcpy(params, &p, sizeof p);
        has_params = true;
    }
    template <class P>
    P get_params() const {
        P p;
        std::memcpy(&p, params, sizeof p);
        return p;
    }
    template <class P, class F>
    void edit_params(F f) {
        P p = get_params<P>();
        f(p);
        set_params(p);
    }
    dense_abi_header header() const {
        dense_abi_header h;
        std::memcpy(&h, params, sizeof h);
        return h;
    }
    void set_header(const dense_abi_header& h) { std::memcpy(params, &h, sizeof h); }

    dense_op_call call() const {
        auto c = dense::sdk::make_struct<dense_op_call>();
        c.op_kind = kind;
        c.n_src = static_cast<uint32_t>(src.size());
        c.src = null_src_array ? nullptr : src.data();
        c.n_dst = static_cast<uint32_t>(dst.size());
        c.dst = null_dst_array ? nullptr : dst.data();
        c.params = has_params ? static_cast<const void*>(params) : nullptr;
        return c;
    }
};

enum class When { Static, AtRun };  // refused by supports() too / only when the call runs

struct Mutation {
    std::string what;
    std::function<void(Spec&, Arena&)> apply;
    When when = When::Static;
};

// ---- the well-formed calls (small shapes; the results are tested elsewhere) ----------------------

Spec rms_norm(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_RMS_NORM;
    s.src = {f32(a.floats(3 * 12, rng), 8, 3, 12), f32(a.floats(8, rng), 8)};
    s.dst = {f32(a.floats(24, rng), 8, 3)};
    s.set_params(norm_params(1e-6f));
    return s;
}
Spec l2_norm(Arena& a, std::mt19937_64& rng) {  // in place
    Spec s;
    s.kind = DENSE_OP_L2_NORM;
    float* x = a.floats(3 * 8, rng);
    s.src = {f32(x, 8, 3)};
    s.dst = {f32(x, 8, 3)};
    s.set_params(norm_params(1e-6f));
    return s;
}
Spec gated_rms_norm(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_GATED_RMS_NORM;
    s.src = {f32(a.floats(24, rng), 8, 3), f32(a.floats(24, rng), 8, 3), f32(a.floats(8, rng), 8)};
    s.dst = {f32(a.floats(24, rng), 8, 3)};
    s.set_params(norm_params(1e-6f));
    return s;
}
Spec swiglu(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_SWIGLU;
    s.src = {f32(a.floats(16, rng), 16), f32(a.floats(16, rng), 16)};
    s.dst = {f32(a.floats(16, rng), 16)};
    return s;
}
Spec rope(Arena& a, std::mt19937_64& rng) {  // in place on strided heads
    Spec s;
    s.kind = DENSE_OP_ROPE;
    float* x = a.floats(3 * 16, rng);
    s.src = {f32(x, 8, 3, 16), i32(a.i32(5))};
    s.dst = {f32(x, 8, 3, 16)};
    s.set_params(rope_params(4, 10000.0f));
    return s;
}
Spec kv_store(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_KV_STORE;
    s.src = {f32(a.floats(16, rng), 8, 2), f32(a.floats(16, rng), 8, 2), i32(a.i32(1))};
    s.dst = {cache(a.bytes(8 * 2 * 4 * 2), DENSE_TYPE_F16, 8, 2, 4), cache(a.bytes(8 * 2 * 4 * 2), DENSE_TYPE_F16, 8, 2, 4)};
    return s;
}
Spec attn_decode(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_ATTN_DECODE;
    float* qg = a.floats(6 * 16, rng);
    s.src = {f32(qg, 8, 6, 16), cache(a.bytes(8 * 2 * 4 * 2), DENSE_TYPE_F16, 8, 2, 4),
             cache(a.bytes(8 * 2 * 4 * 2), DENSE_TYPE_F16, 8, 2, 4), i32(a.i32(3)), f32(qg + 8, 8, 6, 16)};
    s.dst = {f32(a.floats(48, rng), 8, 6)};
    s.set_params(attn_params(0.35f));
    s.last_src_optional = true;
    return s;
}
Spec conv1d(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_CONV1D_CAUSAL;
    s.src = {f32(a.floats(6, rng), 6), f32(a.floats(24, rng), 4, 6), f32(a.floats(18, rng), 3, 6)};
    s.dst = {f32(a.floats(6, rng), 6), f32(a.floats(18, rng), 3, 6)};
    s.set_params(conv_params(true));
    return s;
}
Spec gdn_gates(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_GDN_GATES;
    s.src = {f32(a.floats(6, rng), 6), f32(a.floats(6, rng), 6), f32(a.floats(6, rng), 6), f32(a.floats(6, rng), 6)};
    s.dst = {f32(a.floats(6, rng), 6), f32(a.floats(6, rng), 6)};
    return s;
}
Spec gdn_decode(Arena& a, std::mt19937_64& rng) {  // dk 4, dv 3, Hk 2, Hv 6; q/k/v inside one vector
    Spec s;
    s.kind = DENSE_OP_GDN_DECODE;
    float* qkv = a.floats(2 * 8 + 18, rng);
    s.src = {f32(qkv, 4, 2), f32(qkv + 8, 4, 2), f32(qkv + 16, 3, 6), f32(a.floats(6, rng), 6), f32(a.floats(6, rng), 6),
             f32(a.floats(72, rng), 12, 6)};
    s.dst = {f32(a.floats(18, rng), 3, 6), f32(a.floats(72, rng), 12, 6)};
    s.set_params(gdn_params(0.5f));
    return s;
}
// d 8, Hq 4 (strided: the query halves of query+gate slices), Hkv 2, n_rot 4, F16 caches of 4 slots.
Spec attn_prep(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_ATTN_PREP;
    s.src = {f32(a.floats(4 * 16, rng), 8, 4, 16), f32(a.floats(16, rng), 8, 2), f32(a.floats(16, rng), 8, 2),
             f32(a.floats(8, rng), 8),             f32(a.floats(8, rng), 8),    i32(a.i32(1))};
    s.dst = {f32(a.floats(32, rng), 8, 4), f32(a.floats(16, rng), 8, 2),
             cache(a.bytes(8 * 2 * 4 * 2), DENSE_TYPE_F16, 8, 2, 4), cache(a.bytes(8 * 2 * 4 * 2), DENSE_TYPE_F16, 8, 2, 4)};
    auto p = dense::sdk::make_struct<dense_attn_prep_params>();
    p.eps = 1e-6f;
    p.n_rot = 4;
    p.mode = DENSE_ROPE_NEOX;
    p.freq_base = 10000.0f;
    p.freq_scale = 1.0f;
    s.set_params(p);
    return s;
}
// dk 4, dv 3, Hk 2, Hv 6, 3 taps: 2 * 2 * 4 + 6 * 3 = 34 channels.
Spec gdn_step(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_GDN_STEP;
    s.src = {f32(a.floats(34, rng), 34),     f32(a.floats(3 * 34, rng), 3, 34), f32(a.floats(2 * 34, rng), 2, 34),
             f32(a.floats(6, rng), 6),       f32(a.floats(6, rng), 6),          f32(a.floats(6, rng), 6),
             f32(a.floats(6, rng), 6),       f32(a.floats(72, rng), 12, 6)};
    s.dst = {f32(a.floats(34, rng), 34), f32(a.floats(2 * 34, rng), 2, 34), f32(a.floats(6, rng), 6),
             f32(a.floats(6, rng), 6),   f32(a.floats(18, rng), 3, 6),      f32(a.floats(72, rng), 12, 6)};
    s.set_params(gdn_step_params(0.5f, 1e-6f));
    return s;
}
Spec check_finite(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_CHECK_FINITE;
    s.src = {f32(a.floats(10, rng), 10)};
    s.dst = {i32(a.i32(0))};
    return s;
}
Spec argmax(Arena& a, std::mt19937_64& rng) {
    Spec s;
    s.kind = DENSE_OP_ARGMAX;
    s.src = {f32(a.floats(10, rng), 10)};
    s.dst = {i32(a.i32(0))};
    return s;
}
Spec top_k(Arena& a, std::mt19937_64& rng) {  // the 3 best of 10
    Spec s;
    s.kind = DENSE_OP_TOP_K;
    s.src = {f32(a.floats(10, rng), 10)};
    s.dst = {i32s(static_cast<int32_t*>(a.bytes(3 * 4)), 3), f32(a.floats(3, rng), 3)};
    return s;
}
Spec embed_row(Arena& a, std::mt19937_64& rng) {  // F32 table {8, 5}, row from src1
    Spec s;
    s.kind = DENSE_OP_EMBED_ROW;
    s.weight = DENSE_TYPE_F32;
    s.src = {f32(a.floats(40, rng), 8, 5), i32(a.i32(2))};
    s.dst = {f32(a.floats(8, rng), 8)};
    return s;
}
Spec gemv_accumulate(Arena& a, std::mt19937_64& rng) {  // F32 weight {8, 4}, F32 activation
    Spec s;
    s.kind = DENSE_OP_GEMV_Q;
    s.weight = s.act = DENSE_TYPE_F32;
    s.src = {f32(a.floats(32, rng), 8, 4), f32(a.floats(8, rng), 8)};
    s.dst = {f32(a.floats(4, rng), 4)};
    auto p = dense::sdk::make_struct<dense_gemv_params>();
    p.accumulate = 1;
    s.set_params(p);
    return s;
}

// ---- mutations ------------------------------------------------------------------------------------

dense_tensor_view& view_at(Spec& s, bool is_dst, std::size_t i) {
    return is_dst ? s.dst[i] : s.src[i];
}

// Applied to every view of every op: each makes the call malformed whatever the op.
std::vector<Mutation> view_mutations(const Spec& good) {
    std::vector<Mutation> out;
    for (bool is_dst : {false, true}) {
        const std::size_t n = is_dst ? good.dst.size() : good.src.size();
        for (std::size_t i = 0; i < n; ++i) {
            const std::string who = std::string(is_dst ? "dst" : "src") + std::to_string(i);
            out.push_back({who + " type bf16", [=](Spec& s, Arena&) { view_at(s, is_dst, i).type = DENSE_TYPE_BF16; }});
            out.push_back({who + " type q4_k", [=](Spec& s, Arena&) { view_at(s, is_dst, i).type = DENSE_TYPE_Q4_K; }});
            out.push_back({who + " on a CUDA device",
                           [=](Spec& s, Arena&) { view_at(s, is_dst, i).device_kind = DENSE_DEVICE_CUDA; }});
            out.push_back({who + " data NULL", [=](Spec& s, Arena&) { view_at(s, is_dst, i).data = nullptr; }});
            out.push_back({who + " ne[3] = 2", [=](Spec& s, Arena&) { view_at(s, is_dst, i).ne[3] = 2; }});
            out.push_back({who + " ne[1] = 0", [=](Spec& s, Arena&) { view_at(s, is_dst, i).ne[1] = 0; }});
            out.push_back({who + " ne[0] = -4", [=](Spec& s, Arena&) { view_at(s, is_dst, i).ne[0] = -4; }});
            out.push_back({who + " nb[0] doubled", [=](Spec& s, Arena&) { view_at(s, is_dst, i).nb[0] *= 2; }});
            out.push_back({who + " data misaligned by one byte", [=](Spec& s, Arena&) {
                               auto& v = view_at(s, is_dst, i);
                               v.data = static_cast<unsigned char*>(v.data) + 1;
                           }});
        }
    }
    return out;
}

std::vector<Mutation> envelope_mutations(const Spec& good) {
    std::vector<Mutation> out;
    if (!good.last_src_optional)
        out.push_back({"one source fewer", [](Spec& s, Arena&) { s.src.pop_back(); }});
    out.push_back({"one source more", [](Spec& s, Arena&) { s.src.push_back(s.src[0]); }});
    out.push_back({"one destination fewer", [](Spec& s, Arena&) { s.dst.pop_back(); }});
    out.push_back({"one destination more", [](Spec& s, Arena&) { s.dst.push_back(s.dst[0]); }});
    out.push_back({"src array NULL", [](Spec& s, Arena&) { s.null_src_array = true; }});
    out.push_back({"dst array NULL", [](Spec& s, Arena&) { s.null_dst_array = true; }});
    const bool needs_params = good.has_params && good.kind != DENSE_OP_GEMV_Q;  // GEMV_Q's are optional
    if (needs_params) out.push_back({"params NULL", [](Spec& s, Arena&) { s.has_params = false; }});
    if (good.has_params) {
        out.push_back({"params struct_size = header only", [](Spec& s, Arena&) {
                           auto h = s.header();
                           h.struct_size = sizeof(dense_abi_header);
                           s.set_header(h);
                       }});
        out.push_back({"params struct_size = 0", [](Spec& s, Arena&) {
                           auto h = s.header();
                           h.struct_size = 0;
                           s.set_header(h);
                       }});
        out.push_back({"params of another ABI major", [](Spec& s, Arena&) {
                           auto h = s.header();
                           h.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR + 1);
                           s.set_header(h);
                       }});
    }
    return out;
}

void set_i32(Spec& s, std::size_t src_index, int32_t value) {
    std::memcpy(s.src[src_index].data, &value, 4);
}

// Overlap: dst i moved to start one element into src j (same shape, so only the overlap is wrong).
Mutation shifted_into(std::size_t dst_i, std::size_t src_j, int64_t by_elements = 1) {
    return {"dst" + std::to_string(dst_i) + " overlaps src" + std::to_string(src_j), [=](Spec& s, Arena&) {
                s.dst[dst_i].data = static_cast<float*>(s.src[src_j].data) + by_elements;
            }};
}

std::vector<Mutation> specific_mutations(dense_op_kind kind) {
    std::vector<Mutation> m;
    auto norm_eps = [](float eps) {
        return [=](Spec& s, Arena&) { s.edit_params<dense_norm_params>([=](auto& p) { p.eps = eps; }); };
    };
    switch (kind) {
        case DENSE_OP_RMS_NORM:
            m.push_back({"weight shorter than a row", [](Spec& s, Arena&) { s.src[1].ne[0] = 7; }});
            m.push_back({"dst rows closer than a row", [](Spec& s, Arena&) { s.dst[0].nb[1] = 4 * 4; }});
            m.push_back({"dst row stride not a multiple of 4", [](Spec& s, Arena&) { s.dst[0].nb[1] = 8 * 4 + 2; }});
            m.push_back(shifted_into(0, 0));
            m.push_back({"dst same data but another stride", [](Spec& s, Arena&) {
                             s.dst[0].data = s.src[0].data;
                             s.dst[0].nb[1] = 8 * 4;
                         }});
            m.push_back({"dst is the weight", [](Spec& s, Arena&) {
                             s.dst[0].data = s.src[1].data;
                             s.dst[0].ne[1] = 1;
                         }});
            m.push_back({"eps negative", norm_eps(-1e-6f)});
            m.push_back({"eps NaN", norm_eps(std::nanf(""))});
            break;
        case DENSE_OP_L2_NORM:
            m.push_back(shifted_into(0, 0, 3));
            m.push_back({"eps infinite", norm_eps(std::numeric_limits<float>::infinity())});
            m.push_back({"x with a negative row stride", [](Spec& s, Arena&) { s.src[0].nb[1] = -32; }});
            break;
        case DENSE_OP_GATED_RMS_NORM:
            m.push_back({"x strided (must be contiguous)", [](Spec& s, Arena& a) {
                             std::mt19937_64 r(1);
                             s.src[0] = f32(a.floats(3 * 12, r), 8, 3, 12);
                         }});
            m.push_back({"dst in place on x (not allowed)", [](Spec& s, Arena&) { s.dst[0] = s.src[0]; }});
            m.push_back({"z has other rows", [](Spec& s, Arena&) { s.src[1].ne[1] = 2; }});
            m.push_back({"weight of another length", [](Spec& s, Arena&) { s.src[2].ne[0] = 4; }});
            break;
        case DENSE_OP_SWIGLU:
            m.push_back({"up shorter", [](Spec& s, Arena&) { s.src[1].ne[0] = 15; }});
            m.push_back({"dst is gate (not allowed)", [](Spec& s, Arena&) { s.dst[0] = s.src[0]; }});
            m.push_back({"2-D gate", [](Spec& s, Arena&) {
                             s.src[0].ne[0] = 8;
                             s.src[0].ne[1] = 2;
                         }});
            break;
        case DENSE_OP_ROPE: {
            auto rp = [](auto f) { return [=](Spec& s, Arena&) { s.edit_params<dense_rope_params>(f); }; };
            m.push_back({"n_rot odd", rp([](auto& p) { p.n_rot = 3; })});
            m.push_back({"n_rot > head_dim", rp([](auto& p) { p.n_rot = 10; })});
            m.push_back({"n_rot 0", rp([](auto& p) { p.n_rot = 0; })});
            m.push_back({"mode 0 (not NeoX)", rp([](auto& p) { p.mode = 0; })});
            m.push_back({"freq_base 0", rp([](auto& p) { p.freq_base = 0.0f; })});
            m.push_back({"freq_scale NaN", rp([](auto& p) { p.freq_scale = std::nanf(""); })});
            m.push_back({"position as F32", [](Spec& s, Arena&) { s.src[1].type = DENSE_TYPE_F32; }});
            m.push_back({"position of two elements", [](Spec& s, Arena&) { s.src[1].ne[0] = 2; }});
            m.push_back({"dst of other shape", [](Spec& s, Arena&) { s.dst[0].ne[1] = 2; }});
            m.push_back({"negative position", [](Spec& s, Arena&) { set_i32(s, 1, -1); }, When::AtRun});
            break;
        }
        case DENSE_OP_KV_STORE:
            m.push_back({"position = n_ctx", [](Spec& s, Arena&) { set_i32(s, 2, 4); }, When::AtRun});
            m.push_back({"position -1", [](Spec& s, Arena&) { set_i32(s, 2, -1); }, When::AtRun});
            m.push_back({"V cache f32, K cache f16", [](Spec& s, Arena& a) {
                             s.dst[1] = cache(a.bytes(8 * 2 * 4 * 4), DENSE_TYPE_F32, 8, 2, 4);
                         }});
            m.push_back({"V cache shorter", [](Spec& s, Arena&) { s.dst[1].ne[2] = 3; }});
            m.push_back({"K cache with other heads", [](Spec& s, Arena&) {
                             s.dst[0].ne[1] = 4;
                             s.dst[0].ne[2] = 2;
                             s.dst[0].nb[2] = s.dst[0].nb[1] * 4;
                         }});
            m.push_back({"k strided (must be contiguous)", [](Spec& s, Arena& a) {
                             std::mt19937_64 r(2);
                             s.src[0] = f32(a.floats(32, r), 8, 2, 16);
                         }});
            m.push_back({"K cache not contiguous", [](Spec& s, Arena&) { s.dst[0].nb[2] += 2; }});
            m.push_back({"both caches the same memory", [](Spec& s, Arena&) { s.dst[1] = s.dst[0]; }});
            m.push_back({"v of other heads", [](Spec& s, Arena&) { s.src[1].ne[1] = 1; }});
            break;
        case DENSE_OP_ATTN_DECODE:
            m.push_back({"n_kv 0", [](Spec& s, Arena&) { set_i32(s, 3, 0); }, When::AtRun});
            m.push_back({"n_kv > n_ctx", [](Spec& s, Arena&) { set_i32(s, 3, 5); }, When::AtRun});
            m.push_back({"Hq not a multiple of Hkv", [](Spec& s, Arena&) {
                             for (auto* v : {&s.src[0], &s.src[4], &s.dst[0]}) v->ne[1] = 5;
                         }});
            m.push_back({"V cache f32, K cache f16", [](Spec& s, Arena& a) {
                             s.src[2] = cache(a.bytes(8 * 2 * 4 * 4), DENSE_TYPE_F32, 8, 2, 4);
                         }});
            m.push_back({"cache head dim differs from q", [](Spec& s, Arena&) {
                             s.src[1].ne[0] = 4;
                             s.src[1].nb[1] = 8;
                             s.src[1].nb[2] = 16;
                         }});
            m.push_back({"dst strided (must be contiguous)", [](Spec& s, Arena& a) {
                             std::mt19937_64 r(3);
                             s.dst[0] = f32(a.floats(6 * 16, r), 8, 6, 16);
                         }});
            m.push_back(shifted_into(0, 0, 0));
            m.push_back({"gate of other heads", [](Spec& s, Arena&) { s.src[4].ne[1] = 3; }});
            m.push_back({"n_kv as F32", [](Spec& s, Arena&) { s.src[3].type = DENSE_TYPE_F32; }});
            m.push_back({"scale NaN", [](Spec& s, Arena&) {
                             s.edit_params<dense_attn_params>([](auto& p) { p.scale = std::nanf(""); });
                         }});
            break;
        case DENSE_OP_CONV1D_CAUSAL:
            m.push_back({"kernel width 1", [](Spec& s, Arena&) { s.src[1].ne[0] = 1; }});
            m.push_back({"state of another width", [](Spec& s, Arena&) { s.src[2].ne[0] = 2; }});
            m.push_back({"taps of other channels", [](Spec& s, Arena&) { s.src[1].ne[1] = 5; }});
            m.push_back({"state_out partly over state_in", [](Spec& s, Arena&) {
                             s.dst[1].data = static_cast<float*>(s.src[2].data) + 3;
                         }});
            m.push_back({"y over x (not allowed)", [](Spec& s, Arena&) { s.dst[0] = s.src[0]; }});
            m.push_back({"y over state_out", [](Spec& s, Arena&) { s.dst[0].data = s.dst[1].data; }});
            break;
        case DENSE_OP_GDN_GATES:
            m.push_back({"beta in place over b (not allowed)", [](Spec& s, Arena&) { s.dst[0] = s.src[0]; }});
            m.push_back({"A shorter", [](Spec& s, Arena&) { s.src[3].ne[0] = 5; }});
            m.push_back({"decay over beta", [](Spec& s, Arena&) { s.dst[1] = s.dst[0]; }});
            break;
        case DENSE_OP_GDN_DECODE:
            m.push_back({"Hv not a multiple of Hk", [](Spec& s, Arena&) {
                             for (auto* v : {&s.src[2], &s.src[3], &s.src[4], &s.src[5], &s.dst[0], &s.dst[1]})
                                 v->ne[v == &s.src[3] || v == &s.src[4] ? 0 : 1] = 5;
                         }});
            m.push_back({"state rows not dk*dv", [](Spec& s, Arena&) {
                             s.src[5].ne[0] = 9;
                             s.src[5].nb[1] = 36;
                         }});
            m.push_back({"k of other dk", [](Spec& s, Arena&) { s.src[1].ne[0] = 3; }});
            m.push_back({"o strided (must be contiguous)", [](Spec& s, Arena& a) {
                             std::mt19937_64 r(4);
                             s.dst[0] = f32(a.floats(6 * 5, r), 3, 6, 5);
                         }});
            m.push_back({"state_out partly over state_in", [](Spec& s, Arena&) {
                             s.dst[1].data = static_cast<float*>(s.src[5].data) + 12;
                         }});
            m.push_back({"o over v", [](Spec& s, Arena&) { s.dst[0].data = s.src[2].data; }});
            m.push_back({"scale infinite", [](Spec& s, Arena&) {
                             s.edit_params<dense_gdn_params>([](auto& p) { p.scale = std::numeric_limits<float>::infinity(); });
                         }});
            break;
        case DENSE_OP_GDN_STEP:
            m.push_back({"delta state rows not a multiple of dv", [](Spec& s, Arena&) {
                             for (auto* v : {&s.src[7], &s.dst[5]}) {
                                 v->ne[0] = 10;
                                 v->nb[1] = 40;
                             }
                         }});
            m.push_back({"channels not 2 Hk dk + Hv dv for dk = 3", [](Spec& s, Arena&) {
                             for (auto* v : {&s.src[7], &s.dst[5]}) {
                                 v->ne[0] = 9;
                                 v->nb[1] = 36;
                             }
                         }});
            m.push_back({"Hv of b differs from the states'", [](Spec& s, Arena&) { s.src[3].ne[0] = 5; }});
            m.push_back({"y over x", [](Spec& s, Arena&) { s.dst[0].data = s.src[0].data; }});
            m.push_back({"delta state_out is state_in", [](Spec& s, Arena&) { s.dst[5].data = s.src[7].data; }});
            m.push_back({"conv state_out is state_in", [](Spec& s, Arena&) { s.dst[1].data = s.src[2].data; }});
            m.push_back({"o over beta", [](Spec& s, Arena&) { s.dst[4].data = s.dst[2].data; }});
            m.push_back({"scale infinite", [](Spec& s, Arena&) {
                             s.edit_params<dense_gdn_step_params>(
                                 [](auto& p) { p.scale = std::numeric_limits<float>::infinity(); });
                         }});
            m.push_back({"eps negative", [](Spec& s, Arena&) {
                             s.edit_params<dense_gdn_step_params>([](auto& p) { p.l2_eps = -1.0f; });
                         }});
            break;
        case DENSE_OP_ATTN_PREP: {
            auto pp = [](auto f) { return [=](Spec& s, Arena&) { s.edit_params<dense_attn_prep_params>(f); }; };
            m.push_back({"n_rot odd", pp([](auto& p) { p.n_rot = 3; })});
            m.push_back({"n_rot > d", pp([](auto& p) { p.n_rot = 10; })});
            m.push_back({"mode 0 (not NeoX)", pp([](auto& p) { p.mode = 0; })});
            m.push_back({"eps negative", pp([](auto& p) { p.eps = -1.0f; })});
            m.push_back({"freq_base 0", pp([](auto& p) { p.freq_base = 0.0f; })});
            m.push_back({"position -1", [](Spec& s, Arena&) { set_i32(s, 5, -1); }, When::AtRun});
            m.push_back({"position = n_ctx", [](Spec& s, Arena&) { set_i32(s, 5, 4); }, When::AtRun});
            m.push_back({"q_out strided (must be contiguous)", [](Spec& s, Arena& a) {
                             std::mt19937_64 r(5);
                             s.dst[0] = f32(a.floats(64, r), 8, 4, 16);
                         }});
            m.push_back({"k_out over k", [](Spec& s, Arena&) { s.dst[1].data = s.src[1].data; }});
            m.push_back({"V cache f32, K cache f16", [](Spec& s, Arena& a) {
                             s.dst[3] = cache(a.bytes(8 * 2 * 4 * 4), DENSE_TYPE_F32, 8, 2, 4);
                         }});
            m.push_back({"v of other heads", [](Spec& s, Arena&) { s.src[2].ne[1] = 1; }});
            m.push_back({"k norm weight shorter", [](Spec& s, Arena&) { s.src[4].ne[0] = 4; }});
            break;
        }
        case DENSE_OP_CHECK_FINITE:
            m.push_back({"status word as F32", [](Spec& s, Arena&) { s.dst[0].type = DENSE_TYPE_F32; }});
            m.push_back({"x 2-D", [](Spec& s, Arena&) {
                             s.src[0].ne[0] = 5;
                             s.src[0].ne[1] = 2;
                         }});
            m.push_back({"status inside x", [](Spec& s, Arena&) { s.dst[0].data = s.src[0].data; }});
            break;
        case DENSE_OP_ARGMAX:
            m.push_back({"index as F32", [](Spec& s, Arena&) { s.dst[0].type = DENSE_TYPE_F32; }});
            m.push_back({"x 2-D", [](Spec& s, Arena&) {
                             s.src[0].ne[0] = 5;
                             s.src[0].ne[1] = 2;
                         }});
            m.push_back({"x empty", [](Spec& s, Arena&) { s.src[0].ne[0] = 0; }});
            m.push_back({"index inside x", [](Spec& s, Arena&) { s.dst[0].data = s.src[0].data; }});
            m.push_back({"two indices", [](Spec& s, Arena&) { s.dst.push_back(s.dst[0]); }});
            break;
        case DENSE_OP_TOP_K: {
            // k in both destinations (the values' extent follows it).
            const auto keep = [](int64_t k) {
                return [=](Spec& s, Arena& a) {
                    s.dst[0] = i32s(static_cast<int32_t*>(a.bytes(static_cast<std::size_t>(k) * 4)), k);
                    s.dst[1] = f32(static_cast<float*>(a.bytes(static_cast<std::size_t>(k) * 4)), k);
                };
            };
            m.push_back({"k = 0", [](Spec& s, Arena&) { s.dst[0].ne[0] = s.dst[1].ne[0] = 0; }});
            m.push_back({"k = 65 (past DENSE_TOP_K_MAX)", keep(65)});
            m.push_back({"ids as F32", [](Spec& s, Arena&) { s.dst[0].type = DENSE_TYPE_F32; }});
            m.push_back({"values as I32", [](Spec& s, Arena&) { s.dst[1].type = DENSE_TYPE_I32; }});
            m.push_back({"x as I32", [](Spec& s, Arena&) { s.src[0].type = DENSE_TYPE_I32; }});
            m.push_back({"values shorter than ids", [](Spec& s, Arena&) { s.dst[1].ne[0] = 2; }});
            m.push_back({"x 2-D", [](Spec& s, Arena&) {
                             s.src[0].ne[0] = 5;
                             s.src[0].ne[1] = 2;
                         }});
            m.push_back({"ids 2-D", [](Spec& s, Arena&) {
                             s.dst[0].ne[0] = 1;
                             s.dst[0].ne[1] = 3;
                         }});
            m.push_back({"x empty", [](Spec& s, Arena&) { s.src[0].ne[0] = 0; }});
            m.push_back({"ids inside x", [](Spec& s, Arena&) { s.dst[0].data = s.src[0].data; }});
            m.push_back({"values inside x", [](Spec& s, Arena&) {
                             s.dst[1].data = static_cast<float*>(s.src[0].data) + 7;
                         }});
            m.push_back({"values over ids", [](Spec& s, Arena&) {
                             s.dst[1].data = static_cast<int32_t*>(s.dst[0].data) + 2;
                         }});
            m.push_back({"no values", [](Spec& s, Arena&) { s.dst.pop_back(); }});
            break;
        }
        case DENSE_OP_EMBED_ROW:
            m.push_back({"row -1", [](Spec& s, Arena&) { set_i32(s, 1, -1); }, When::AtRun});
            m.push_back({"row = vocab", [](Spec& s, Arena&) { set_i32(s, 1, 5); }, When::AtRun});
            m.push_back({"row as F32", [](Spec& s, Arena&) { s.src[1].type = DENSE_TYPE_F32; }});
            m.push_back({"no row input and no params", [](Spec& s, Arena&) { s.src.pop_back(); }});
            m.push_back({"no row input, params row out of range", [](Spec& s, Arena&) {
                             s.src.pop_back();
                             auto p = dense::sdk::make_struct<dense_embed_row_params>();
                             p.row = 5;
                             s.set_params(p);
                         }});
            m.push_back({"dst of other length", [](Spec& s, Arena&) { s.dst[0].ne[0] = 4; }});
            break;
        case DENSE_OP_GEMV_Q:
            m.push_back({"dst is the activation", [](Spec& s, Arena&) { s.dst[0].data = s.src[1].data; }});
            m.push_back({"activation shorter", [](Spec& s, Arena&) { s.src[1].ne[0] = 4; }});
            break;
        default:
            break;
    }
    return m;
}

class CpuRefOpsRefusal : public PackHarness {};

TEST_F(CpuRefOpsRefusal, EveryMalformedCallIsRefusedWithOneLogLineAndNoWrite) {
    using Builder = Spec (*)(Arena&, std::mt19937_64&);
    const std::pair<const char*, Builder> builders[] = {
        {"rms_norm", rms_norm},       {"l2_norm", l2_norm},       {"gated_rms_norm", gated_rms_norm},
        {"swiglu", swiglu},           {"rope", rope},             {"kv_store", kv_store},
        {"attn_decode", attn_decode}, {"conv1d_causal", conv1d},  {"gdn_gates", gdn_gates},
        {"gdn_decode", gdn_decode},   {"check_finite", check_finite}, {"embed_row", embed_row},
        {"gemv_q", gemv_accumulate},  {"gdn_step", gdn_step},     {"attn_prep", attn_prep},
        {"argmax", argmax},           {"top_k", top_k}};
    std::mt19937_64 rng(301);
    std::size_t refusals = 0;
    for (const auto& [name, build] : builders) {
        Arena probe;
        const Spec good = build(probe, rng);
        const dense_op_impl* impl = host_.find(good.kind, good.weight, good.act);
        ASSERT_NE(impl, nullptr) << name;
        {
            const auto call = good.call();
            const std::size_t logs = host_.logs.size();
            ASSERT_EQ(impl->supports(impl->user, &call), 1u) << name;
            ASSERT_EQ(run(impl, call), DENSE_OK) << name << ": " << (host_.logs.empty() ? "" : host_.logs.back().second);
            ASSERT_EQ(host_.logs.size(), logs);
        }
        std::vector<Mutation> mutations = envelope_mutations(good);
        for (auto& m : view_mutations(good)) mutations.push_back(std::move(m));
        for (auto& m : specific_mutations(good.kind)) mutations.push_back(std::move(m));
        for (const Mutation& m : mutations) {
            Arena arena;
            Spec bad = build(arena, rng);
            m.apply(bad, arena);
            const auto before = arena.snapshot();
            const auto call = bad.call();
            const std::size_t logs = host_.logs.size();
            EXPECT_EQ(impl->supports(impl->user, &call), m.when == When::Static ? 0u : 1u) << name << ": " << m.what;
            EXPECT_EQ(host_.logs.size(), logs) << name << ": supports() must not log";
            EXPECT_EQ(run(impl, call), DENSE_E_INVALID_ARGUMENT) << name << ": " << m.what;
            ASSERT_EQ(host_.logs.size(), logs + 1) << name << ": " << m.what << ": exactly one log line";
            EXPECT_EQ(host_.logs.back().first, DENSE_LOG_ERROR);
            EXPECT_EQ(host_.logs.back().second.rfind(std::string("cpu-ref.") + name, 0), 0u) << host_.logs.back().second;
            EXPECT_TRUE(arena.same_as(before)) << name << ": " << m.what << ": a refused call wrote something";
            ++refusals;
        }
    }
    EXPECT_GT(refusals, 300u);
}

// The call envelope itself, for one activation op.
TEST_F(CpuRefOpsRefusal, BadEnvelopesAreRefused) {
    std::mt19937_64 rng(302);
    Arena arena;
    const Spec good = swiglu(arena, rng);
    const dense_op_impl* impl = host_.find(DENSE_OP_SWIGLU, DENSE_TYPE_NONE, DENSE_TYPE_NONE);
    ASSERT_NE(impl, nullptr);
    auto call = good.call();
    call.op_kind = DENSE_OP_RMS_NORM;  // routed to the wrong impl
    EXPECT_EQ(run(impl, call), DENSE_E_INVALID_ARGUMENT);
    call = good.call();
    call.hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR + 1);
    EXPECT_EQ(impl->supports(impl->user, &call), 0u);
    EXPECT_EQ(run(impl, call), DENSE_E_ABI);
    call = good.call();
    call.hdr.struct_size = 16;
    EXPECT_EQ(run(impl, call), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(impl->run(impl->user, nullptr), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(impl->supports(impl->user, nullptr), 0u);
    EXPECT_EQ(host_.logs.size(), 4u);
}

}  // namespace
