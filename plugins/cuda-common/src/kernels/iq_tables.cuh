// The IQ codebooks and sign tables. The header is generated from plugins/quant-tables/*.txt (the
// same numbers cpu-ref compiles). Under nvcc each translation unit that includes this gets its own
// read-only copy in device memory, read through the normal cached global-load path (grid lookups
// diverge across a warp, which would serialise __constant__ accesses). Under a host compiler
// (tests) they are plain static const arrays.
#pragma once

#if defined(__CUDACC__)
#define DENSE_QUANT_TABLE_QUALIFIER static __device__ const
#endif
#include "dense_quant_tables.h"
#undef DENSE_QUANT_TABLE_QUALIFIER
