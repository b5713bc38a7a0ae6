// Pair launches of one format in two summation orders (gemv_pair.cuh): a streamed matrix beside
// small ones of its own format, as in a file quantized to one type throughout (Q4_K attention q
// with its 1024-row k and v; Q4_K qkv with the 48-row beta and alpha). Q8_0 with Q8_0 is in
// gemv_pair_q8_0.cu.
#include "kernels/gemv_dot_iq4.cuh"
#include "kernels/gemv_dot_q4_k.cuh"
#include "kernels/gemv_dot_q5_k.cuh"
#include "kernels/gemv_dot_q6_k.cuh"
#include "kernels/gemv_pair.cuh"

#include <dense/abi/dense_abi.h>

namespace dense::cuda {

const GemvPair* gemv_pairs_same_format(int& count) {
    static const GemvPair pairs[] = {
        DENSE_GEMV_PAIR(Q4_KDot, Q4_KDot, DENSE_TYPE_Q4_K, DENSE_TYPE_Q4_K),
        DENSE_GEMV_PAIR(Q5_KDot, Q5_KDot, DENSE_TYPE_Q5_K, DENSE_TYPE_Q5_K),
        DENSE_GEMV_PAIR(Q6_KDot, Q6_KDot, DENSE_TYPE_Q6_K, DENSE_TYPE_Q6_K),
        DENSE_GEMV_PAIR(IQ4_XSDot, IQ4_XSDot, DENSE_TYPE_IQ4_XS, DENSE_TYPE_IQ4_XS),
    };
    count = gemv::kPairLaunches ? static_cast<int>(sizeof pairs / sizeof pairs[0]) : 0;
    return pairs;
}

}  // namespace dense::cuda
