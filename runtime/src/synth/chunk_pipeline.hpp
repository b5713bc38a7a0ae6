// Generates the big tensors of a synthetic file in parallel, ahead of the (sequential) GGUF writer.
//
// Each tensor is cut into units of whole blocks (about 4 MiB); unit k of tensor t is generated from
// its own RNG stream seeded by (seed, stream id of t, k), so the bytes do not depend on the number of
// threads. Worker threads claim units in file order and fill a ring of buffers (2 per thread); the
// writer's fill callbacks copy them out in the same order and free each buffer once it is consumed.
// Memory stays bounded (~8 MiB per thread) however large the file.
#pragma once

#include "synth/block_fill.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace dense::synth {

struct PipelineTensor {
    BlockRecipe recipe;
    uint64_t n_blocks = 0;
    uint64_t stream = 0;  // seeds its units' RNG streams (synth uses the tensor's index in the file)
};

class ChunkPipeline {
public:
    static constexpr uint64_t kUnitBytes = uint64_t{4} << 20;

    // Starts no thread yet: the first read() does.
    ChunkPipeline(std::vector<PipelineTensor> tensors, uint64_t seed, unsigned threads);
    ~ChunkPipeline();
    ChunkPipeline(const ChunkPipeline&) = delete;
    ChunkPipeline& operator=(const ChunkPipeline&) = delete;

    // Copies bytes [offset, offset + out.size()) of tensor `t` (index into the constructor's list) into
    // `out`. Calls must walk the tensors in order, each from offset 0 to its end without gaps (the
    // order GgufWriter calls fill functions in); anything else throws dense::Error(Internal).
    void read(size_t t, uint64_t offset, std::span<std::byte> out);

    // Blocks per unit of a tensor of this format (a fixed function of the format, never of threads).
    static uint64_t unit_blocks(const BlockRecipe& recipe) noexcept;

private:
    struct Unit {
        size_t tensor = 0;
        uint64_t index = 0;        // unit number inside its tensor
        uint64_t first_block = 0;
        uint64_t n_blocks = 0;
    };

    void start();
    void worker();
    void generate(const Unit& u, std::vector<std::byte>& buffer) const;

    std::vector<PipelineTensor> tensors_;
    std::vector<Unit> units_;
    std::vector<size_t> first_unit_;  // per tensor
    uint64_t seed_;
    unsigned n_threads_;

    std::mutex mutex_;
    std::condition_variable ready_cv_, free_cv_;
    std::vector<std::vector<std::byte>> slots_;
    std::vector<int64_t> slot_unit_;  // the unit a slot holds, ready to copy; -1 = none
    size_t next_unit_ = 0;            // next unit a worker claims
    size_t consumed_ = 0;             // units fully copied out (in order)
    bool stop_ = false;
    std::exception_ptr error_;
    std::vector<std::thread> workers_;

    // Consumer-side position check (read() is only ever called from the writer's thread).
    size_t expect_tensor_ = 0;
    uint64_t expect_offset_ = 0;
};

}  // namespace dense::synth
