// Pair launches of a streamed format beside small Q8_0 matrices (gemv_pair.cuh): the 27B's Gated
// DeltaNet list (Q5_K qkv and gate, Q8_0 beta and alpha) and attention list (Q5_K q, Q8_0 k and v)
// are this shape, and llama.cpp's quantizer keeps many small matrices at Q8_0.
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q2_k.cuh"
#include "kernels/gemv_dot_q3_k.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_dot_q8_0.cuh"
#include "kernels/gemv_pair.cuh"

#include <dense/abi/dense_abi.h>

namespace dense::cuda {

const GemvPair* gemv_pairs_with_q8_0(int& count) {
    static const GemvPair pairs[] = {
        DENSE_GEMV_PAIR(Q5_KDot, Q8_0Dot, DENSE_TYPE_Q5_K, DENSE_TYPE_Q8_0),
        DENSE_GEMV_PAIR(Q4_KDot, Q8_0Dot, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_0),
        DENSE_GEMV_PAIR(Q6_KDot, Q8_0Dot, DENSE_TYPE_Q6_K, DENSE_TYPE_Q8_0),
        DENSE_GEMV_PAIR(Q8_0Dot, Q8_0Dot, DENSE_TYPE_Q8_0, DENSE_TYPE_Q8_0),
        DENSE_GEMV_PAIR(IQ4_XSDot, Q8_0Dot, DENSE_TYPE_IQ4_XS, DENSE_TYPE_Q8_0),
        DENSE_GEMV_PAIR(IQ4_NLDot, Q8_0Dot, DENSE_TYPE_IQ4_NL, DENSE_TYPE_Q8_0),
        DENSE_GEMV_PAIR(Q3_KDot, Q8_0Dot, DENSE_TYPE_Q3_K, DENSE_TYPE_Q8_0),
        DENSE_GEMV_PAIR(Q2_KDot, Q8_0Dot, DENSE_TYPE_Q2_K, DENSE_TYPE_Q8_0),
    };
    count = gemv::kPairLaunches ? static_cast<int>(sizeof pairs / sizeof pairs[0]) : 0;
    return pairs;
}

}  // namespace dense::cuda
