// RMS_NORM, L2_NORM, GATED_RMS_NORM: one thread block per row (grid-stride over rows) for rows of
// fewer than 2048 elements, several blocks per row for longer ones (norm_spread_rows_kernel).
//
// Each thread sums the squares of its (up to 8) consecutive elements with fused multiply-adds, then a
// fixed-order block tree adds the partials (fp32 throughout). Error of the sum of squares (all terms
// positive): <= (n / blockDim + log2(blockDim) + 1) * 2^-24 relative, i.e. < 2e-6 for n = 5120 with
// 640 threads; the scale 1/sqrt(.) adds 2 roundings, each output 2-3 more (x*s, *w, *silu(z)).
// cpu-ref does the whole row in double with one final rounding; the tests allow 2e-6 relative
// (measured worst on an H200: 3e-7).
//
// In place (y == x, same stride): every element is read and written by the same thread, and the
// writes come after the block reduction's barriers, so no thread reads an element another has
// already overwritten.
#include "kernels/launch_chain.cuh"
#include "kernels/act_common.cuh"
#include "kernels/act_step_math.cuh"
#include "kernels/act_launchers.hpp"
#include "kernels/q8_32_block.cuh"

#include <cstdint>

namespace dense::cuda::act {
namespace {

enum class NormKind { Rms, L2, GatedRms };

// Elements a thread keeps in registers: thread t holds elements [8 t, 8 t + 8) of a row of fewer than
// kNormSpreadMinRow elements, read with all its loads in flight at once (16-byte loads where the row is
// 16-byte aligned). A strided loop issues them one latency after another: that made a 5120 RMS norm
// take ~9 us on an H200. Consecutive elements per thread also put a Q8_32 block in 4 lanes, so the
// quantized copy takes 2-level shuffle trees for 8 blocks at once (q8_32_block.cuh) instead of 8
// warp-wide quantizations in a row: the norm + quantize is on the token step's critical path (one
// block per row, ~4.2 us of marginal cost per node on an H200 with the warp-wide layout, session 21).
inline constexpr int kPer = 8;

// The end of a norm for one thread's octet at i0 of row r: o = x * scale (* w) (* silu(z)), stored, and
// quantized when the call has a quantized copy. 4 lanes hold one Q8_32 block of the contiguous output
// (n % 32 == 0 with a quantized copy, so a group is wholly inside or wholly past the row); every lane
// of the block's warps must call this (the quantizer's shuffles; blockDim is a multiple of 32).
template <NormKind K>
__device__ __forceinline__ void finish_octet(const NormArgs& a, int64_t r, int64_t i0, float scale, const float (&v)[kPer],
                                             const float (&w)[kPer], const float (&g)[kPer], float* y, bool vec_y) {
    float o[kPer];
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
        o[j] = v[j] * scale;
        if constexpr (K != NormKind::L2) o[j] *= w[j];
        if constexpr (K == NormKind::GatedRms) o[j] *= silu_f(g[j]);
    }
    store_octet(y, i0, a.n, vec_y, o);
    if (a.quantized.base != nullptr) quantize_q8_32_octets(o, i0 < a.n, (r * a.n + i0) / 32, a.quantized);
}

template <NormKind K>
__global__ void norm_rows_kernel(NormArgs a) {
    __shared__ float scratch[33];
    const int t = static_cast<int>(threadIdx.x);
    const int64_t i0 = static_cast<int64_t>(t) * kPer;
    // Rows start 16-byte aligned when the base is and the row strides are multiples of 4 floats.
    const bool vec_w = aligned16(a.w);
    const bool vec_x = aligned16(a.x) && a.x_stride % 4 == 0 && a.x_tstride % 4 == 0;
    const bool vec_y = aligned16(a.y) && a.y_stride % 4 == 0 && a.y_tstride % 4 == 0;
    const bool vec_z = K == NormKind::GatedRms && aligned16(a.z) && a.z_stride % 4 == 0;
    // The norm weight is immutable: read it before waiting for the kernel before (launch_chain.cuh),
    // so its load overlaps that kernel's tail.
    float w[kPer];
    if constexpr (K != NormKind::L2) {
        load_octet(a.w, i0, a.n, vec_w, w);
    } else {
#pragma unroll
        for (int j = 0; j < kPer; ++j) w[j] = 1.0f;
    }
    wait_for_producers();  // nothing an earlier kernel writes is touched before this
    allow_consumers();

    const float n_f = static_cast<float>(a.n);
    for (int64_t r = blockIdx.x; r < a.rows * a.tokens; r += gridDim.x) {
        const int64_t tok = r / a.rows, rr = r - tok * a.rows;  // tok = 0 but for L2_NORM's token axis
        const float* x = a.x + tok * a.x_tstride + rr * a.x_stride;
        float* y = a.y + tok * a.y_tstride + rr * a.y_stride;
        float v[kPer];
        load_octet(x, i0, a.n, vec_x, v);
        float g[kPer];
        if constexpr (K == NormKind::GatedRms) load_octet(a.z + r * a.z_stride, i0, a.n, vec_z, g);
        const float ss = block_sum(octet_sum_of_squares(v), scratch);
        const float scale = K == NormKind::L2 ? l2_scale(ss, a.eps) : rms_scale(ss, n_f, a.eps);
        finish_octet<K>(a, r, i0, scale, v, w, g, y, vec_y);
    }
}

// Rows of kNormSpreadMinRow elements or more (the 27B's 5120-wide RMS norms, 129 a token): one row over
// several blocks. With one block a row, a 5120-element norm + quantize was ~10,000 warp instructions on
// one SM (20 warps on its 4 schedulers) and cost 4.2 us of an 8.2 ms token on an H100 (session 34's
// probe), issue- and latency-bound while the other SMs idled. Here every block of a row sums the
// squares of the WHOLE row (20 KB from L2: cheap) in one canonical order, so all of them get the same
// bits of the scale without talking to each other, then normalizes and quantizes only its own share
// of the row (blockIdx.y of gridDim.y shares, octets of 8 consecutive elements a thread).
//
// The canonical sum (the same for every block count, so in place and out of place agree bit for bit):
// kSpreadThreads threads; thread t adds the squares of the float4 chunks t, t + T, t + 2T, ... into
// eight accumulators (chunk parity x component, fused multiply-adds), combines them in a fixed 3-level
// tree, then the fixed block tree. Error of the sum of squares (all terms positive): <= (n / (8 T) + 3 +
// log2 T + 1) * 2^-24 relative: 9.5e-7 at n = 5120, 1.7e-6 at 17408 (about the square root of that in
// practice); the scale halves it, the last roundings add ~4 x 6e-8: inside the tests' 2e-6 per element.
//
// In place (y is x): other blocks would still be reading the row while this one writes, so the launcher
// gives such a row one block (gridDim.y = 1): its writes come after the block's barriers.
inline constexpr int kSpreadThreads = 128;
inline constexpr int kSpreadBatch = 16;  // float4 chunks a thread has in flight: n <= 8192 in one batch

// A thread's kSpreadBatch chunks of 4 elements from `first` on, kSpreadThreads * 4 elements apart, zeros
// past n. kVec: 16-byte loads (the row is 16-byte aligned and n % 4 == 0, so a chunk is wholly inside or
// past the row); the two forms are separate loops so that the one taken carries no per-chunk branches.
template <bool kVec>
__device__ __forceinline__ void load_chunks(const float* p, int64_t first, int64_t n, float4 (&c)[kSpreadBatch]) {
#pragma unroll
    for (int k = 0; k < kSpreadBatch; ++k) {
        const int64_t i = first + int64_t{k} * kSpreadThreads * 4;
        if constexpr (kVec) {
            c[k] = i < n ? *reinterpret_cast<const float4*>(p + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        } else {
            c[k].x = i < n ? p[i] : 0.0f;
            c[k].y = i + 1 < n ? p[i + 1] : 0.0f;
            c[k].z = i + 2 < n ? p[i + 2] : 0.0f;
            c[k].w = i + 3 < n ? p[i + 3] : 0.0f;
        }
    }
}

template <NormKind K>
__global__ void __launch_bounds__(kSpreadThreads) norm_spread_rows_kernel(NormArgs a) {
    __shared__ float scratch[33];
    const int t = static_cast<int>(threadIdx.x);
    const int64_t share = blockIdx.y, shares = gridDim.y;
    const int64_t octet0 = (share * kSpreadThreads + t) * kPer;   // this thread's first octet of the row
    const int64_t octet_step = shares * kSpreadThreads * kPer;    // and the distance to its next one
    const bool vec_w = aligned16(a.w);
    const bool vec_x = aligned16(a.x) && a.x_stride % 4 == 0 && a.x_tstride % 4 == 0;
    const bool vec_y = aligned16(a.y) && a.y_stride % 4 == 0 && a.y_tstride % 4 == 0;
    const bool vec_z = K == NormKind::GatedRms && aligned16(a.z) && a.z_stride % 4 == 0;
    // The first octet's weights before the wait (immutable; launch_chain.cuh).
    float w0[kPer];
    if constexpr (K != NormKind::L2) load_octet(a.w, octet0, a.n, vec_w, w0);
    wait_for_producers();
    allow_consumers();

    const float n_f = static_cast<float>(a.n);
    const int64_t rows = a.rows * a.tokens;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        int64_t tok = 0, rr = r;
        if (a.tokens > 1) {  // L2_NORM's token axis only: no 64-bit division on the decode path
            tok = r / a.rows;
            rr = r - tok * a.rows;
        }
        const float* x = a.x + tok * a.x_tstride + rr * a.x_stride;
        float* y = a.y + tok * a.y_tstride + rr * a.y_stride;
        // This thread's first octet of its share, loaded with the sum's chunks so both latencies overlap.
        float v0[kPer];
        load_octet(x, octet0, a.n, vec_x, v0);
        float acc[2][4] = {};
        for (int64_t base = 0; base < a.n; base += int64_t{kSpreadBatch} * kSpreadThreads * 4) {
            float4 c[kSpreadBatch];
            if (vec_x && a.n % 4 == 0)
                load_chunks<true>(x, base + int64_t{t} * 4, a.n, c);
            else
                load_chunks<false>(x, base + int64_t{t} * 4, a.n, c);
#pragma unroll
            for (int k = 0; k < kSpreadBatch; ++k) {
                float(&s)[4] = acc[k % 2];
                s[0] = __fmaf_rn(c[k].x, c[k].x, s[0]);
                s[1] = __fmaf_rn(c[k].y, c[k].y, s[1]);
                s[2] = __fmaf_rn(c[k].z, c[k].z, s[2]);
                s[3] = __fmaf_rn(c[k].w, c[k].w, s[3]);
            }
        }
        const float mine = ((acc[0][0] + acc[0][1]) + (acc[0][2] + acc[0][3])) +
                           ((acc[1][0] + acc[1][1]) + (acc[1][2] + acc[1][3]));
        const float ss = block_sum(mine, scratch);
        const float scale = K == NormKind::L2 ? l2_scale(ss, a.eps) : rms_scale(ss, n_f, a.eps);
        // Octet loop with a block-uniform trip count (the quantizer's shuffles need whole warps).
        for (int64_t first = share * kSpreadThreads * kPer; first < a.n; first += octet_step) {
            const int64_t i0 = first + int64_t{t} * kPer;
            float v[kPer], w[kPer], g[kPer];
            const bool first_octet = first == share * kSpreadThreads * kPer;
            if (first_octet) {
#pragma unroll
                for (int j = 0; j < kPer; ++j) v[j] = v0[j];
            } else {
                load_octet(x, i0, a.n, vec_x, v);
            }
            if constexpr (K != NormKind::L2) {
                if (first_octet) {
#pragma unroll
                    for (int j = 0; j < kPer; ++j) w[j] = w0[j];
                } else {
                    load_octet(a.w, i0, a.n, vec_w, w);
                }
            }
            if constexpr (K == NormKind::GatedRms) load_octet(a.z + r * a.z_stride, i0, a.n, vec_z, g);
            finish_octet<K>(a, r, i0, scale, v, w, g, y, vec_y);
        }
    }
}

template <NormKind K>
cudaError_t launch(const NormArgs& a, cudaStream_t stream) {
    if (a.n <= 0 || a.rows <= 0 || a.tokens <= 0) return cudaSuccess;
    const int64_t rows = a.rows * a.tokens;
    const unsigned blocks = static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks);
    if (a.n < kNormSpreadMinRow) {
        (void)launch_chained(norm_rows_kernel<K>, blocks, norm_threads_for_row(a.n), 0, stream, a);
    } else {
        const int64_t per_block = int64_t{kSpreadThreads} * kPer;
        // In place is the only overlap the calls' contracts admit (pack-common's check_alias_or_disjoint:
        // dst is src0's very view, or apart from every input), so y == x says it.
        const int64_t shares = a.y == a.x ? 1 : (a.n + per_block - 1) / per_block;
        if (shares > 65535) return cudaErrorInvalidValue;  // rows of more than 67M elements
        (void)launch_chained(norm_spread_rows_kernel<K>, dim3(blocks, static_cast<unsigned>(shares)), kSpreadThreads,
                             0, stream, a);
    }
    return cudaGetLastError();
}

}  // namespace

int norm_threads_for_row(int64_t n) {
    int64_t t = ((n + kPer - 1) / kPer + 31) / 32 * 32;
    if (t < 32) t = 32;
    if (t > 1024) t = 1024;
    return static_cast<int>(t);
}

cudaError_t launch_rms_norm(const NormArgs& a, cudaStream_t stream) {
    return launch<NormKind::Rms>(a, stream);
}

cudaError_t launch_l2_norm(const NormArgs& a, cudaStream_t stream) {
    return launch<NormKind::L2>(a, stream);
}

cudaError_t launch_gated_rms_norm(const NormArgs& a, cudaStream_t stream) {
    return launch<NormKind::GatedRms>(a, stream);
}

}  // namespace dense::cuda::act
