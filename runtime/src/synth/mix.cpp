#include "synth/mix.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"
#include "synth/block_fill.hpp"

#include <algorithm>
#include <cctype>

namespace dense::synth {
namespace {

// general.file_type values (llama.cpp's llama_ftype): informative only, nothing reads them back.
uint32_t ftype_of(dense_type_id t) {
    switch (t) {
        case DENSE_TYPE_F32: return 0;
        case DENSE_TYPE_F16: return 1;
        case DENSE_TYPE_Q8_0: return 7;
        case DENSE_TYPE_Q2_K: return 10;
        case DENSE_TYPE_Q3_K: return 11;   // Q3_K_S
        case DENSE_TYPE_Q4_K: return 14;   // Q4_K_S
        case DENSE_TYPE_Q5_K: return 16;   // Q5_K_S
        case DENSE_TYPE_Q6_K: return 18;
        case DENSE_TYPE_IQ2_XS: return 20;
        case DENSE_TYPE_IQ3_XXS: return 23;
        case DENSE_TYPE_IQ4_NL: return 25;
        case DENSE_TYPE_IQ3_S: return 26;
        case DENSE_TYPE_IQ2_S: return 28;
        case DENSE_TYPE_IQ4_XS: return 30;
        case DENSE_TYPE_BF16: return 32;
        default: return 0;
    }
}

std::string accepted_names() {
    std::string s = "seed-iq4";
    for (const auto& t : global_type_table().all())
        if (t.builtin && t.storable && can_generate(t.id)) s += ", " + t.name;
    return s;
}

struct SpecialLayers {
    int64_t gate_a = 0, gate_b = 0, q3 = 0, low_begin = 0, low_end = 0;
    int64_t q_nl = -1, q_q2k = -1, v_a = -1, v_b = -1;
    bool q2k_on_k = false;
};

SpecialLayers special_layers(const Shape& s) {
    const int64_t n = s.n_layer;
    const auto scaled = [n](int64_t x) { return x * n / 64; };
    SpecialLayers l;
    l.gate_a = 0;
    l.gate_b = std::max<int64_t>(scaled(12), 1);
    l.q3 = std::max(scaled(13), l.gate_b + 1);
    l.low_begin = std::max(scaled(14), l.q3 + 1);
    l.low_end = std::max(scaled(18), l.low_begin + 1);
    const auto fa = s.full_attention_layers();
    if (!fa.empty()) {
        const size_t last = fa.size() - 1;
        l.q_nl = fa[0];
        l.q_q2k = fa[std::min<size_t>(3, last)];
        l.q2k_on_k = l.q_q2k == l.q_nl;
        l.v_a = fa[std::min<size_t>(5, last)];
        l.v_b = fa[last];
    }
    return l;
}

}  // namespace

Mix parse_mix(std::string_view name) {
    Mix m;
    m.name.assign(name);
    std::transform(m.name.begin(), m.name.end(), m.name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (m.name == "seed-iq4") {
        m.seed_iq4 = true;
        m.file_type = 30;  // MOSTLY_IQ4_XS
        return m;
    }
    const TypeInfo* t = global_type_table().find(m.name);
    if (t == nullptr || !t->builtin || !t->storable || !can_generate(t->id))
        throw Error(ErrorKind::Usage, "synth: unknown mix '" + std::string(name) + "' (accepted: " + accepted_names() + ")");
    m.uniform = t->id;
    m.file_type = ftype_of(t->id);
    return m;
}

dense_type_id seed_iq4_type(const Shape& s, std::string_view role, int64_t layer) {
    const SpecialLayers l = special_layers(s);
    if (role == "token_embd") return DENSE_TYPE_Q3_K;
    if (role == "output") return DENSE_TYPE_Q6_K;
    if (role == "ffn_gate" || role == "ffn_up" || role == "ffn_down") {
        const bool trunk = layer >= 0 && layer < static_cast<int64_t>(s.n_layer);
        if (trunk && layer == l.q3) return DENSE_TYPE_Q3_K;
        if (trunk && layer >= l.low_begin && layer < l.low_end)
            return role == "ffn_down" ? DENSE_TYPE_IQ3_XXS : DENSE_TYPE_IQ2_S;
        if (trunk && role == "ffn_gate" && (layer == l.gate_a || layer == l.gate_b)) return DENSE_TYPE_IQ2_XS;
        return role == "ffn_down" ? DENSE_TYPE_Q4_K : DENSE_TYPE_IQ4_XS;
    }
    if (role == "attn_q") {
        if (layer == l.q_nl) return DENSE_TYPE_IQ4_NL;
        if (layer == l.q_q2k && !l.q2k_on_k) return DENSE_TYPE_Q2_K;
        return DENSE_TYPE_Q5_K;
    }
    if (role == "attn_k") return layer == l.q_q2k && l.q2k_on_k ? DENSE_TYPE_Q2_K : DENSE_TYPE_Q8_0;
    if (role == "attn_v") return layer == l.v_a || layer == l.v_b ? DENSE_TYPE_Q6_K : DENSE_TYPE_Q8_0;
    if (role == "attn_output") return DENSE_TYPE_IQ3_S;
    if (role == "attn_qkv" || role == "attn_gate") return DENSE_TYPE_Q5_K;
    if (role == "ssm_alpha" || role == "ssm_beta") return DENSE_TYPE_Q8_0;
    if (role == "ssm_out" || role == "eh_proj") return DENSE_TYPE_Q6_K;
    throw Error(ErrorKind::Internal, "synth: seed-iq4 has no rule for matrix role '" + std::string(role) + "'");
}

}  // namespace dense::synth
