// Everything one dense_pack_init creates; dense_pack.user points here and dense_pack_release
// deletes it. The op contexts live in a vector reserved up front: the host keeps pointers to them
// (dense_op_impl.user), so they never move.
#pragma once

#include "formats.hpp"

#include <dense/abi/dense_abi.h>
#include <dense/sdk/pack.hpp>

#include <string>
#include <vector>

namespace dense::cuda {

struct PackState;

// What one registered op implementation needs at call time.
struct OpContext {
    const PackState* pack = nullptr;
    const CudaFormat* format = nullptr;
    dense_op_kind kind = 0;
    std::string name;  // "cuda-sm90.dequantize.q4_k": the impl name and the log prefix
};

struct PackState {
    explicit PackState(dense::sdk::Host h) : host(h) {}

    dense::sdk::Host host;
    std::string name;     // DENSE_CUDA_PACK_NAME
    std::string version;  // dense_pack.version
    dense_pack pack{};
    dense_device_api device{};
    std::vector<OpContext> ops;
};

}  // namespace dense::cuda
