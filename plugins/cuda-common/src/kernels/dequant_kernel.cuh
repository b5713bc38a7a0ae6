// One generic dequantization kernel, instantiated once per format by the dequant_*.cu files.
//
// A format decoder (decode_*.cuh) is a struct with
//   kBlockElems, kBlockBytes   the block layout of spec/quant-formats.md
//   kItemElems                 how many consecutive elements one decode() call yields
//                              (8 for quantized formats: a natural group in all of them; 1 for floats)
//   decode(block, item, out)   writes elements [item*kItemElems, (item+1)*kItemElems) of the block
// Each thread decodes whole items, so consecutive threads write consecutive 32-byte runs.
#pragma once

#include "kernels/launch_chain.cuh"
#include "kernels/decode_common.cuh"
#include "kernels/dequant_launchers.hpp"
#include "target_tuning.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace dense::cuda {

template <class Fmt>
__global__ void __launch_bounds__(tuning::kDequantThreads)
    dequantize_kernel(const uint8_t* __restrict__ src, float* __restrict__ dst, int64_t n_items, bool vector_stores,
                      RowSelect select) {
    wait_for_producers();  // launch_chain.cuh: nothing an earlier kernel writes is touched before
    allow_consumers();

    constexpr int kItemsPerBlock = Fmt::kBlockElems / Fmt::kItemElems;
    static_assert(Fmt::kBlockElems % Fmt::kItemElems == 0, "an item must not straddle blocks");
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    if (select.row != nullptr) {
        const int64_t r = *select.row;
        if (r < 0 || r >= select.n_rows) {  // the host checked the token; never read outside the table
            for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_items; i += stride)
                for (int k = 0; k < Fmt::kItemElems; ++k) dst[i * Fmt::kItemElems + k] = __int_as_float(0x7FC00000);
            return;
        }
        src += r * select.row_bytes;
    }
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_items; i += stride) {
        const int64_t block = i / kItemsPerBlock;
        const int item = static_cast<int>(i - block * kItemsPerBlock);
        float v[Fmt::kItemElems];
        Fmt::decode(src + block * Fmt::kBlockBytes, item, v);
        float* out = dst + i * Fmt::kItemElems;
        if constexpr (Fmt::kItemElems % 4 == 0) {
            if (vector_stores) {
#pragma unroll
                for (int k = 0; k < Fmt::kItemElems; k += 4)
                    reinterpret_cast<float4*>(out)[k / 4] = make_float4(v[k], v[k + 1], v[k + 2], v[k + 3]);
                continue;
            }
        }
#pragma unroll
        for (int k = 0; k < Fmt::kItemElems; ++k) out[k] = v[k];
    }
}

// Enqueues the decoding of n_elements (a multiple of Fmt::kBlockElems, checked by the caller) from
// src to dst on `stream`. Returns cudaGetLastError() after the launch; no host synchronisation.
template <class Fmt>
cudaError_t launch_dequantize(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select) {
    if (n_elements <= 0) return cudaSuccess;
    const int64_t n_items = n_elements / Fmt::kItemElems;
    const int64_t wanted = (n_items + tuning::kDequantThreads - 1) / tuning::kDequantThreads;
    const int64_t cap = tuning::kDequantMaxBlocks;
    const unsigned blocks = static_cast<unsigned>(wanted < cap ? wanted : cap);
    const bool vector_stores = (reinterpret_cast<uintptr_t>(dst) % 16u) == 0;
    (void)launch_chained(dequantize_kernel<Fmt>, blocks, tuning::kDequantThreads, 0, stream, static_cast<const uint8_t*>(src), dst,
                                                                           n_items, vector_stores, select);
    return cudaGetLastError();
}

}  // namespace dense::cuda
