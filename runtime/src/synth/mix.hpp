// Which storage format each matrix of a synthetic model gets ("quant mix"). 1-D tensors and
// ssm_conv1d are always F32, whatever the mix.
//
//   seed-iq4   all 12 quant formats in the pattern of a real IQ4 mix (see seed_iq4_type)
//   <type>     one format for every matrix: any storable type name of the type table
//              (q8_0, q2_k ... q6_k, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq4_nl, iq4_xs, f32, f16, bf16)
#pragma once

#include "synth/shape.hpp"

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace dense::synth {

struct Mix {
    std::string name;                             // as given, lower-cased
    bool seed_iq4 = false;
    dense_type_id uniform = DENSE_TYPE_NONE;      // when !seed_iq4
    uint32_t file_type = 0;                       // general.file_type (llama_ftype, informative)
};

// Throws dense::Error(Usage) for an unknown name, an activation-only type (q8_k) or a format synth
// cannot generate, listing the accepted names.
Mix parse_mix(std::string_view name);

// The seed-iq4 format of matrix `role` ("token_embd", "output", "ffn_gate", "attn_q", "ssm_out",
// "eh_proj", ...) of layer `layer` (-1 for global tensors). For the 27b shape (64 layers, full
// attention every 4th) it is exactly:
//   token_embd Q3_K, output Q6_K;
//   ffn_gate / ffn_up IQ4_XS, ffn_down Q4_K, except
//     blk.0 and blk.12 ffn_gate IQ2_XS; blk.13 gate/up/down Q3_K;
//     blk.14-17 gate/up IQ2_S and down IQ3_XXS;
//   recurrent: attn_qkv / attn_gate Q5_K, ssm_alpha / ssm_beta Q8_0, ssm_out Q6_K;
//   full attention: attn_q Q5_K, attn_k / attn_v Q8_0, attn_output IQ3_S, except
//     blk.3 attn_q IQ4_NL, blk.15 attn_q Q2_K, blk.23 and blk.63 attn_v Q6_K;
//   MTP block: as a full-attention block, plus eh_proj Q6_K.
// For N trunk layers and the full-attention layers F[0] < F[1] < ... the special layers are placed
// by the same proportions, pushed apart so that they stay distinct (s(x) = floor(x * N / 64)):
//   IQ2_XS ffn_gate:   layer 0 and b = max(s(12), 1)
//   Q3_K FFN:          layer c = max(s(13), b + 1)
//   IQ2_S / IQ3_XXS:   layers [d, e) with d = max(s(14), c + 1), e = max(s(18), d + 1)
//   IQ4_NL attn_q:     F[0]
//   Q2_K attn_q:       F[min(3, |F|-1)]; if that is F[0] (a single full-attention layer), its attn_k
//   Q6_K attn_v:       F[min(5, |F|-1)] and F[|F|-1]
// (layers >= N are skipped). Every one of the 12 formats therefore appears whenever N >= 4 and there
// is at least one full-attention layer — true for every named shape.
dense_type_id seed_iq4_type(const Shape& shape, std::string_view role, int64_t layer);

}  // namespace dense::synth
