#include "synth/tensor_plan.hpp"

#include "core/error.hpp"
#include "core/type_table.hpp"

namespace dense::synth {
namespace {

class Planner {
public:
    Planner(const Shape& s, const Mix& m) : shape_(s), mix_(m) {}

    void matrix(const std::string& name, const std::string& role, int64_t layer, int64_t in, const char* in_dim,
                int64_t out) {
        PlannedTensor t;
        t.name = name, t.role = role, t.layer = layer, t.ne = {in, out}, t.init = Init::Matrix, t.in_dim = in_dim;
        t.type = mix_.seed_iq4 ? seed_iq4_type(shape_, role, layer) : mix_.uniform;
        const TypeInfo* info = global_type_table().find(t.type);
        if (info == nullptr) throw Error(ErrorKind::Internal, "synth: type id " + std::to_string(t.type) + " unknown");
        if (in % info->block_elements != 0)
            throw Error(ErrorKind::Usage, "synth: tensor " + name + ": ne[0] = " + in_dim + " = " + std::to_string(in) +
                                              " is not a multiple of " + std::to_string(info->block_elements) +
                                              ", the block size of " + info->name + " (mix " + mix_.name + ")");
        out_.push_back(std::move(t));
    }

    void vector(const std::string& name, const std::string& role, int64_t layer, std::vector<int64_t> ne, Init init,
                const char* in_dim) {
        PlannedTensor t;
        t.name = name, t.role = role, t.layer = layer, t.ne = std::move(ne), t.type = DENSE_TYPE_F32, t.init = init;
        t.in_dim = in_dim;
        out_.push_back(std::move(t));
    }

    std::vector<PlannedTensor> take() { return std::move(out_); }

private:
    const Shape& shape_;
    const Mix& mix_;
    std::vector<PlannedTensor> out_;
};

std::string blk(int64_t il, const char* what) { return "blk." + std::to_string(il) + "." + what; }

void full_attention_tensors(Planner& p, const Shape& s, int64_t il) {
    const int64_t embd = s.n_embd, hd = s.head_dim;
    p.matrix(blk(il, "attn_q.weight"), "attn_q", il, embd, "n_embd", 2 * int64_t{s.n_head} * hd);
    p.matrix(blk(il, "attn_k.weight"), "attn_k", il, embd, "n_embd", int64_t{s.n_head_kv} * hd);
    p.matrix(blk(il, "attn_v.weight"), "attn_v", il, embd, "n_embd", int64_t{s.n_head_kv} * hd);
    p.matrix(blk(il, "attn_output.weight"), "attn_output", il, int64_t{s.n_head} * hd, "n_head*head_dim", embd);
    p.vector(blk(il, "attn_q_norm.weight"), "attn_q_norm", il, {hd}, Init::NormOne, "head_dim");
    p.vector(blk(il, "attn_k_norm.weight"), "attn_k_norm", il, {hd}, Init::NormOne, "head_dim");
}

void recurrent_tensors(Planner& p, const Shape& s, int64_t il) {
    const int64_t embd = s.n_embd, heads = s.ssm_heads;
    p.matrix(blk(il, "attn_qkv.weight"), "attn_qkv", il, embd, "n_embd", s.conv_dim());
    p.matrix(blk(il, "attn_gate.weight"), "attn_gate", il, embd, "n_embd", s.ssm_inner());
    p.matrix(blk(il, "ssm_beta.weight"), "ssm_beta", il, embd, "n_embd", heads);
    p.matrix(blk(il, "ssm_alpha.weight"), "ssm_alpha", il, embd, "n_embd", heads);
    p.vector(blk(il, "ssm_dt.bias"), "ssm_dt_bias", il, {heads}, Init::DtBias, "ssm_heads");
    p.vector(blk(il, "ssm_a"), "ssm_a", il, {heads}, Init::SsmA, "ssm_heads");
    p.vector(blk(il, "ssm_conv1d.weight"), "ssm_conv1d", il, {s.ssm_conv, s.conv_dim()}, Init::Conv, "ssm_conv");
    p.vector(blk(il, "ssm_norm.weight"), "ssm_norm", il, {s.ssm_state}, Init::SsmNorm, "ssm_state");
    p.matrix(blk(il, "ssm_out.weight"), "ssm_out", il, s.ssm_inner(), "ssm_inner", embd);
}

void ffn_tensors(Planner& p, const Shape& s, int64_t il) {
    const int64_t embd = s.n_embd, ff = s.n_ff;
    p.vector(blk(il, "post_attention_norm.weight"), "post_attention_norm", il, {embd}, Init::NormOne, "n_embd");
    p.matrix(blk(il, "ffn_gate.weight"), "ffn_gate", il, embd, "n_embd", ff);
    p.matrix(blk(il, "ffn_up.weight"), "ffn_up", il, embd, "n_embd", ff);
    p.matrix(blk(il, "ffn_down.weight"), "ffn_down", il, ff, "n_ff", embd);
}

}  // namespace

std::vector<PlannedTensor> plan_tensors(const Shape& s, uint64_t n_vocab, const Mix& mix) {
    Planner p(s, mix);
    const int64_t embd = s.n_embd, vocab = static_cast<int64_t>(n_vocab);
    p.matrix("token_embd.weight", "token_embd", -1, embd, "n_embd", vocab);
    p.vector("output_norm.weight", "output_norm", -1, {embd}, Init::NormOne, "n_embd");
    if (!s.tied) p.matrix("output.weight", "output", -1, embd, "n_embd", vocab);
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        const int64_t il = l;
        p.vector(blk(il, "attn_norm.weight"), "attn_norm", il, {embd}, Init::NormOne, "n_embd");
        if (s.is_full_attention(l))
            full_attention_tensors(p, s, il);
        else
            recurrent_tensors(p, s, il);
        ffn_tensors(p, s, il);
    }
    if (s.mtp) {  // block n_layer: a full-attention block plus the next-token projection and its norms
        const int64_t il = s.n_layer;
        p.vector(blk(il, "attn_norm.weight"), "attn_norm", il, {embd}, Init::NormOne, "n_embd");
        full_attention_tensors(p, s, il);
        ffn_tensors(p, s, il);
        p.matrix(blk(il, "nextn.eh_proj.weight"), "eh_proj", il, 2 * embd, "2*n_embd", embd);
        p.vector(blk(il, "nextn.enorm.weight"), "enorm", il, {embd}, Init::NormOne, "n_embd");
        p.vector(blk(il, "nextn.hnorm.weight"), "hnorm", il, {embd}, Init::NormOne, "n_embd");
    }
    return p.take();
}

}  // namespace dense::synth
