// The dimensions of a synthetic qwen35 model: named shapes (27b = the real Qwen3.5-27B, tiny for CI,
// small / wide / deep for conformance tests of different widths, head counts, GQA and value-head
// ratios) and the flags that override single dimensions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dense::synth {

struct Shape {
    std::string name;  // the named shape it came from ("custom" details live in the dims)
    uint32_t n_embd = 0;
    uint32_t n_layer = 0;  // trunk layers (the MTP block, if any, comes on top)
    uint32_t n_ff = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t head_dim = 0;
    uint32_t n_rot = 0;
    uint32_t ssm_state = 0;   // d_k = d_v of the Gated DeltaNet heads
    uint32_t ssm_groups = 0;  // key heads
    uint32_t ssm_heads = 0;   // value heads (ssm.time_step_rank)
    uint32_t ssm_conv = 4;
    uint32_t full_attn_interval = 4;
    uint32_t context_length = 0;
    uint32_t vocab_size = 0;  // 0: exactly the vocabulary file's tokens
    float rope_base = 1e7f;
    float rms_eps = 1e-6f;
    bool tied = false;  // no output.weight: the LM head is token_embd
    bool mtp = false;   // append the MTP block (block n_layer, nextn_predict_layers = 1)

    uint32_t ssm_inner() const noexcept { return ssm_heads * ssm_state; }
    uint32_t key_dim() const noexcept { return ssm_groups * ssm_state; }
    uint32_t conv_dim() const noexcept { return 2 * key_dim() + ssm_inner(); }
    uint32_t block_count() const noexcept { return n_layer + (mtp ? 1u : 0u); }
    // Layer il of the trunk is full attention iff (il + 1) % full_attn_interval == 0 (the rule
    // models/qwen35.yaml applies when the file has no recurrent_layers array; synth writes none).
    bool is_full_attention(uint32_t il) const noexcept { return (il + 1) % full_attn_interval == 0; }
    std::vector<uint32_t> full_attention_layers() const;
};

// Overrides from the command line; unset fields keep the named shape's value.
struct ShapeOverrides {
    std::optional<uint32_t> n_embd, n_layer, n_ff, n_head, n_head_kv, head_dim, n_rot, ssm_state, ssm_groups,
        ssm_heads, vocab_size, full_attn_interval, context_length;
    bool tied = false;
    bool mtp = false;
};

std::vector<std::string> named_shapes();  // "27b", "tiny", "small", "wide", "deep"

// Throws dense::Error(Usage) naming the known shapes for an unknown name.
Shape named_shape(std::string_view name);

// The named shape with overrides applied, then validated. When head_dim is overridden and n_rot is
// not, n_rot follows as head_dim / 4 (Qwen3.5's partial rotary factor 0.25), at least 2.
Shape make_shape(std::string_view name, const ShapeOverrides& overrides);

// The checks models/qwen35.yaml makes, as clear usage errors before anything is written: every dim
// >= 1, n_head a multiple of n_head_kv, n_rot even and in [2, head_dim], ssm_heads a multiple of
// ssm_groups, conv kernel >= 2. Throws dense::Error(Usage) naming the flag.
void validate(const Shape& shape);

// qwen35.rope.dimension_sections for n_rot rotary dims: the 27B's [11, 11, 10, 0] (which sums to
// n_rot/2 = 32 pairs) scaled to n_rot/2 pairs by largest remainder, so it always sums to n_rot/2.
std::array<int32_t, 4> rope_sections(uint32_t n_rot);

// One line: "n_embd 256, 8 layers (6 recurrent + 2 full attention), n_ff 512, ...".
std::string describe(const Shape& shape);

}  // namespace dense::synth
