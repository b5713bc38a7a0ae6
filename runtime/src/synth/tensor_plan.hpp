// The tensor table of a synthetic qwen35 file: every tensor models/qwen35.yaml expects for a shape
// (names, ggml ne shapes, types from the mix, how its values are drawn), in file order. Dims that a
// format's block size does not divide are reported here, before anything is written.
#pragma once

#include "synth/mix.hpp"
#include "synth/shape.hpp"

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dense::synth {

// How a tensor's values are drawn (see synth_model.hpp for the distributions).
enum class Init {
    Matrix,    // random blocks, mean 0, std 1/sqrt(ne[0])
    NormOne,   // 1 + N(0, 0.1^2): RMSNorm weights stored with Qwen3.5's +1 already added
    SsmNorm,   // 1 + N(0, 0.1^2): the gated norm weight (stored raw, the same draw keeps it near 1)
    SsmA,      // -exp(N(0, 0.5^2)): negative, so the decay exp(g) stays in (0, 1)
    DtBias,    // N(0, 0.5^2)
    Conv,      // N(0, 0.5^2): 4 taps of variance 1/4 keep the conv output at the input's scale
};

struct PlannedTensor {
    std::string name;
    std::string role;      // the model description's role: "ffn_gate", "ssm_a", ...
    int64_t layer = -1;    // -1 for global tensors
    std::vector<int64_t> ne;
    dense_type_id type = DENSE_TYPE_F32;
    Init init = Init::Matrix;
    std::string in_dim;    // which dimension ne[0] is ("n_embd", "n_ff", ...), for messages
};

// Throws dense::Error(Usage) "tensor <name>: ne[0] = <dim> = <n> is not a multiple of <k>, the block
// size of <type>" for the first matrix its format cannot store.
std::vector<PlannedTensor> plan_tensors(const Shape& shape, uint64_t n_vocab, const Mix& mix);

}  // namespace dense::synth
