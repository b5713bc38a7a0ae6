#include "synth/shape.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace dense::synth {
namespace {

[[noreturn]] void usage(const std::string& what) { throw Error(ErrorKind::Usage, "synth: " + what); }

// Each named shape exercises something different; all matrix inner dims (n_embd, n_ff,
// n_head*head_dim, ssm inner size) are multiples of 256 so every quant format can store them.
Shape shape_27b() {
    Shape s;
    s.name = "27b";
    s.n_embd = 5120, s.n_layer = 64, s.n_ff = 17408, s.n_head = 24, s.n_head_kv = 4, s.head_dim = 256;
    s.n_rot = 64, s.ssm_state = 128, s.ssm_groups = 16, s.ssm_heads = 48, s.ssm_conv = 4;
    s.full_attn_interval = 4, s.context_length = 262144, s.vocab_size = 248320;  // the HF padded vocab
    return s;
}

// CI: 8 layers (2 of each kind at least), GQA 2, value-head ratio 2, real vocabulary.
Shape shape_tiny() {
    Shape s;
    s.name = "tiny";
    s.n_embd = 256, s.n_layer = 8, s.n_ff = 512, s.n_head = 4, s.n_head_kv = 2, s.head_dim = 64;
    s.n_rot = 16, s.ssm_state = 64, s.ssm_groups = 2, s.ssm_heads = 4, s.ssm_conv = 4;
    s.full_attn_interval = 4, s.context_length = 32768;
    return s;
}

// GQA 4, value-head ratio 2, three full-attention layers.
Shape shape_small() {
    Shape s;
    s.name = "small";
    s.n_embd = 512, s.n_layer = 12, s.n_ff = 1536, s.n_head = 8, s.n_head_kv = 2, s.head_dim = 64;
    s.n_rot = 16, s.ssm_state = 64, s.ssm_groups = 4, s.ssm_heads = 8, s.ssm_conv = 4;
    s.full_attn_interval = 4, s.context_length = 32768;
    return s;
}

// Wide rows and multi-query attention (one KV head for 16 query heads), head_dim 128, value-head
// ratio 3 (as the 27B), n_ff not a power of two.
Shape shape_wide() {
    Shape s;
    s.name = "wide";
    s.n_embd = 1024, s.n_layer = 8, s.n_ff = 2816, s.n_head = 16, s.n_head_kv = 1, s.head_dim = 128;
    s.n_rot = 32, s.ssm_state = 128, s.ssm_groups = 2, s.ssm_heads = 6, s.ssm_conv = 4;
    s.full_attn_interval = 4, s.context_length = 32768;
    return s;
}

// Narrow and deep: 24 layers with a full-attention interval of 3, no GQA (2/2 heads) at the 27B's
// head_dim 256 / n_rot 64, one key head for 4 value heads.
Shape shape_deep() {
    Shape s;
    s.name = "deep";
    s.n_embd = 256, s.n_layer = 24, s.n_ff = 768, s.n_head = 2, s.n_head_kv = 2, s.head_dim = 256;
    s.n_rot = 64, s.ssm_state = 128, s.ssm_groups = 1, s.ssm_heads = 4, s.ssm_conv = 4;
    s.full_attn_interval = 3, s.context_length = 32768;
    return s;
}

void require_positive(uint32_t v, const char* flag) {
    if (v == 0) usage(std::string(flag) + " must be at least 1");
}

}  // namespace

std::vector<uint32_t> Shape::full_attention_layers() const {
    std::vector<uint32_t> out;
    for (uint32_t il = 0; il < n_layer; ++il)
        if (is_full_attention(il)) out.push_back(il);
    return out;
}

std::vector<std::string> named_shapes() { return {"27b", "tiny", "small", "wide", "deep"}; }

Shape named_shape(std::string_view name) {
    if (name == "27b") return shape_27b();
    if (name == "tiny") return shape_tiny();
    if (name == "small") return shape_small();
    if (name == "wide") return shape_wide();
    if (name == "deep") return shape_deep();
    std::string known;
    for (const auto& n : named_shapes()) known += (known.empty() ? "" : ", ") + n;
    usage("unknown shape '" + std::string(name) + "' (known: " + known + ")");
}

Shape make_shape(std::string_view name, const ShapeOverrides& o) {
    Shape s = named_shape(name);
    const auto apply = [](uint32_t& field, const std::optional<uint32_t>& v) {
        if (v) field = *v;
    };
    if (o.head_dim && !o.n_rot) s.n_rot = std::max(2u, (*o.head_dim / 4) & ~1u);
    apply(s.n_embd, o.n_embd);
    apply(s.n_layer, o.n_layer);
    apply(s.n_ff, o.n_ff);
    apply(s.n_head, o.n_head);
    apply(s.n_head_kv, o.n_head_kv);
    apply(s.head_dim, o.head_dim);
    apply(s.n_rot, o.n_rot);
    apply(s.ssm_state, o.ssm_state);
    apply(s.ssm_groups, o.ssm_groups);
    apply(s.ssm_heads, o.ssm_heads);
    apply(s.vocab_size, o.vocab_size);
    apply(s.full_attn_interval, o.full_attn_interval);
    apply(s.context_length, o.context_length);
    s.tied = s.tied || o.tied;
    s.mtp = s.mtp || o.mtp;
    validate(s);
    return s;
}

void validate(const Shape& s) {
    require_positive(s.n_embd, "--n-embd");
    require_positive(s.n_layer, "--n-layer");
    require_positive(s.n_ff, "--n-ff");
    require_positive(s.n_head, "--n-head");
    require_positive(s.n_head_kv, "--n-head-kv");
    require_positive(s.head_dim, "--head-dim");
    require_positive(s.ssm_state, "--ssm-state");
    require_positive(s.ssm_groups, "--ssm-groups");
    require_positive(s.ssm_heads, "--ssm-heads");
    require_positive(s.full_attn_interval, "--full-attn-interval");
    require_positive(s.context_length, "--context-length");
    if (s.n_head % s.n_head_kv != 0)
        usage("--n-head " + std::to_string(s.n_head) + " is not a multiple of --n-head-kv " + std::to_string(s.n_head_kv));
    if (s.n_rot < 2 || s.n_rot % 2 != 0 || s.n_rot > s.head_dim)
        usage("--n-rot " + std::to_string(s.n_rot) + " must be even and in [2, head_dim = " + std::to_string(s.head_dim) + "]");
    if (s.ssm_heads % s.ssm_groups != 0)
        usage("--ssm-heads " + std::to_string(s.ssm_heads) + " is not a multiple of --ssm-groups " +
              std::to_string(s.ssm_groups));
    if (s.ssm_conv < 2) usage("ssm conv kernel must be at least 2");
    // The largest tensor dims must fit the int64 products the writer and binder form; with uint32
    // dims that only fails for absurd values, but the ssm sizes multiply two flags.
    if (uint64_t{s.ssm_heads} * s.ssm_state > UINT32_MAX || uint64_t{s.ssm_groups} * s.ssm_state * 2 + s.ssm_inner() > UINT32_MAX)
        usage("--ssm-heads x --ssm-state is too large");
    if (uint64_t{s.n_head} * s.head_dim * 2 > UINT32_MAX) usage("--n-head x --head-dim is too large");
}

std::array<int32_t, 4> rope_sections(uint32_t n_rot) {
    // The 27B's sections [11, 11, 10, 0] over 32 pairs, scaled to n_rot/2 pairs.
    constexpr std::array<int, 3> ref{11, 11, 10};
    const int pairs = static_cast<int>(n_rot / 2);
    std::array<int32_t, 4> out{0, 0, 0, 0};
    std::array<double, 3> frac{};
    int used = 0;
    for (size_t i = 0; i < 3; ++i) {
        const double exact = static_cast<double>(pairs) * ref[i] / 32.0;
        out[i] = static_cast<int32_t>(std::floor(exact));
        frac[i] = exact - out[i];
        used += out[i];
    }
    while (used < pairs) {  // largest remainder first; ties go to the lower section
        size_t best = 0;
        for (size_t i = 1; i < 3; ++i)
            if (frac[i] > frac[best]) best = i;
        out[best] += 1;
        frac[best] = -1.0;
        ++used;
    }
    return out;
}

std::string describe(const Shape& s) {
    const auto fa = s.full_attention_layers().size();
    std::ostringstream o;
    o << "n_embd " << s.n_embd << ", " << s.n_layer << " layers (" << (s.n_layer - fa) << " recurrent + " << fa
      << " full attention, interval " << s.full_attn_interval << ")" << (s.mtp ? " + MTP block" : "") << ", n_ff "
      << s.n_ff << ", heads " << s.n_head << "/" << s.n_head_kv << " x " << s.head_dim << " (n_rot " << s.n_rot
      << "), ssm state " << s.ssm_state << " groups " << s.ssm_groups << " heads " << s.ssm_heads << " inner "
      << s.ssm_inner() << " conv " << s.ssm_conv << (s.tied ? ", tied LM head" : "");
    return o.str();
}

}  // namespace dense::synth
