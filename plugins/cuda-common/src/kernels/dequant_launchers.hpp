// Host entry points of the dequantization kernels, one per storable format (defined in the
// dequant_*.cu files, one file per format family). Plain C++: the op layer (.cpp, compiled by g++)
// calls them through the format table in formats.cpp.
//
// Contract: n_elements >= 0 and a multiple of the format's block size; src holds the blocks, dst
// room for n_elements floats, both device memory of the current device. The launch is enqueued on
// `stream` (no host synchronisation); the return value is cudaGetLastError() after the launch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dense::cuda {

// EMBED_ROW with the row index in device memory (src1 I32 {1}): the kernel reads the index, so a
// captured graph serves every token. row == nullptr: decode src as given.
struct RowSelect {
    const int32_t* row = nullptr;  // device pointer to the row index
    int64_t row_bytes = 0;         // bytes per table row
    int64_t n_rows = 0;            // rows in the table; an index outside [0, n_rows) decodes to NaN
};

using DequantizeLauncher = cudaError_t (*)(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);

cudaError_t launch_dequantize_f32(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_f16(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_bf16(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_q8_0(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_q2_k(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_q3_k(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_q4_k(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_q5_k(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_q6_k(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_iq2_xs(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_iq2_s(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_iq3_xxs(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_iq3_s(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_iq4_nl(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);
cudaError_t launch_dequantize_iq4_xs(const void* src, float* dst, int64_t n_elements, cudaStream_t stream, RowSelect select);

}  // namespace dense::cuda
