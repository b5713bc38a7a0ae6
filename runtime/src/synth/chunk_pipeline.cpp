#include "synth/chunk_pipeline.hpp"

#include "core/error.hpp"
#include "synth/rng.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace dense::synth {

uint64_t ChunkPipeline::unit_blocks(const BlockRecipe& recipe) noexcept {
    return std::max<uint64_t>(1, kUnitBytes / recipe.block_bytes);
}

ChunkPipeline::ChunkPipeline(std::vector<PipelineTensor> tensors, uint64_t seed, unsigned threads)
    : tensors_(std::move(tensors)), seed_(seed), n_threads_(std::max(1u, threads)) {
    for (size_t t = 0; t < tensors_.size(); ++t) {
        first_unit_.push_back(units_.size());
        const uint64_t per = unit_blocks(tensors_[t].recipe);
        for (uint64_t b = 0, k = 0; b < tensors_[t].n_blocks; b += per, ++k)
            units_.push_back(Unit{t, k, b, std::min(per, tensors_[t].n_blocks - b)});
    }
    first_unit_.push_back(units_.size());
}

ChunkPipeline::~ChunkPipeline() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    free_cv_.notify_all();
    ready_cv_.notify_all();
    for (auto& w : workers_) w.join();
}

void ChunkPipeline::start() {
    const size_t n_slots = std::max<size_t>(2, 2 * size_t{n_threads_});
    slots_.resize(n_slots);
    slot_unit_.assign(n_slots, -1);
    const unsigned n = static_cast<unsigned>(std::min<size_t>(n_threads_, std::max<size_t>(1, units_.size())));
    workers_.reserve(n);
    for (unsigned i = 0; i < n; ++i) workers_.emplace_back([this] { worker(); });
}

void ChunkPipeline::generate(const Unit& u, std::vector<std::byte>& buffer) const {
    const PipelineTensor& t = tensors_[u.tensor];
    buffer.resize(u.n_blocks * t.recipe.block_bytes);
    Rng rng(stream_seed(seed_, t.stream, u.index));
    fill_blocks(t.recipe, rng, buffer.data(), u.n_blocks);
}

void ChunkPipeline::worker() {
    const size_t n_slots = slots_.size();
    for (;;) {
        size_t u = 0;
        {
            std::unique_lock lock(mutex_);
            free_cv_.wait(lock, [&] { return stop_ || next_unit_ >= units_.size() || next_unit_ < consumed_ + n_slots; });
            if (stop_ || next_unit_ >= units_.size()) return;
            u = next_unit_++;
        }
        const size_t slot = u % n_slots;
        try {
            generate(units_[u], slots_[slot]);  // the slot is ours until the consumer frees it
        } catch (...) {
            std::lock_guard lock(mutex_);
            if (!error_) error_ = std::current_exception();
            stop_ = true;
            ready_cv_.notify_all();
            free_cv_.notify_all();
            return;
        }
        {
            std::lock_guard lock(mutex_);
            slot_unit_[slot] = static_cast<int64_t>(u);
        }
        ready_cv_.notify_all();
    }
}

void ChunkPipeline::read(size_t t, uint64_t offset, std::span<std::byte> out) {
    bool in_order = t < tensors_.size() && t >= expect_tensor_ && offset == (t == expect_tensor_ ? expect_offset_ : 0);
    for (size_t skipped = expect_tensor_; in_order && skipped < t; ++skipped)  // only empty tensors may be skipped
        in_order = expect_offset_ == 0 && tensors_[skipped].n_blocks == 0;
    if (!in_order)
        throw Error(ErrorKind::Internal, "synth: tensor data requested out of order (tensor " + std::to_string(t) +
                                             " offset " + std::to_string(offset) + ")");
    if (workers_.empty()) start();
    const uint64_t block_bytes = tensors_[t].recipe.block_bytes;
    const uint64_t unit_bytes = unit_blocks(tensors_[t].recipe) * block_bytes;
    const size_t n_slots = slots_.size();
    size_t done = 0;
    while (done < out.size()) {
        const uint64_t pos = offset + done;
        const size_t u = first_unit_[t] + static_cast<size_t>(pos / unit_bytes);
        if (u >= first_unit_[t + 1])
            throw Error(ErrorKind::Internal, "synth: read past the end of tensor " + std::to_string(t));
        const size_t slot = u % n_slots;
        {
            std::unique_lock lock(mutex_);
            ready_cv_.wait(lock, [&] { return error_ || stop_ || slot_unit_[slot] == static_cast<int64_t>(u); });
            if (error_) std::rethrow_exception(error_);
            if (slot_unit_[slot] != static_cast<int64_t>(u)) throw Error(ErrorKind::Internal, "synth: pipeline stopped");
        }
        const uint64_t in_unit = pos % unit_bytes;
        const std::vector<std::byte>& buf = slots_[slot];
        const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size() - done, buf.size() - in_unit));
        std::memcpy(out.data() + done, buf.data() + in_unit, n);
        done += n;
        if (in_unit + n == buf.size()) {  // unit fully consumed: hand its slot back to the workers
            {
                std::lock_guard lock(mutex_);
                slot_unit_[slot] = -1;
                consumed_ = u + 1;
            }
            free_cv_.notify_all();
        }
    }
    const uint64_t total = tensors_[t].n_blocks * block_bytes;
    expect_offset_ = offset + out.size();
    expect_tensor_ = t;
    if (expect_offset_ == total) {
        expect_tensor_ = t + 1;
        expect_offset_ = 0;
    }
}

}  // namespace dense::synth
