// The upload plan: which tensors a GPU session uploads (never the MTP head's), their aligned arena
// offsets, and batches that cover every byte exactly once, splitting tensors larger than a batch.
#include "exec/session_fixture.hpp"
#include "exec/upload_plan.hpp"
#include "synth/synth_model.hpp"

#include <gtest/gtest.h>

#include <set>

namespace dense::exec {
namespace {

std::vector<gguf::TensorInfo> fake_tensors(const std::vector<uint64_t>& sizes, std::vector<std::byte>& backing) {
    uint64_t total = 0;
    for (auto s : sizes) total += s;
    backing.assign(total, std::byte{0});
    std::vector<gguf::TensorInfo> out(sizes.size());
    uint64_t off = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        out[i].file_offset = off;
        out[i].n_bytes = sizes[i];
        out[i].data = std::span<const std::byte>(backing).subspan(off, sizes[i]);
        off += sizes[i];
    }
    return out;
}

// Every byte of every tensor lands exactly once at its tensor's arena offset + its index.
void expect_exact_cover(const UploadPlan& plan, uint64_t batch_bytes) {
    std::map<const gguf::TensorInfo*, uint64_t> arena_of(plan.placements.begin(), plan.placements.end());
    std::map<const gguf::TensorInfo*, uint64_t> next;  // next expected tensor byte
    uint64_t moved = 0;
    for (size_t b = 0; b < plan.batches.size(); ++b) {
        const auto& batch = plan.batches[b];
        uint64_t sum = 0;
        for (const auto& p : batch.pieces) {
            ASSERT_TRUE(arena_of.count(p.tensor));
            EXPECT_EQ(p.tensor_offset, next[p.tensor]) << "pieces of a tensor in order, without gaps or overlaps";
            EXPECT_EQ(p.arena_offset, arena_of[p.tensor] + p.tensor_offset);
            EXPECT_GT(p.bytes, 0u);
            next[p.tensor] += p.bytes;
            sum += p.bytes;
        }
        EXPECT_EQ(sum, batch.bytes);
        EXPECT_LE(batch.bytes, batch_bytes);
        if (b + 1 < plan.batches.size()) {
            EXPECT_EQ(batch.bytes, batch_bytes) << "only the last batch is short";
        }
        moved += sum;
    }
    for (const auto& [t, off] : plan.placements) {
        EXPECT_EQ(next[t], t->n_bytes);
        EXPECT_EQ(off % kWeightAlign, 0u);
    }
    EXPECT_EQ(moved, plan.tensor_bytes);
}

TEST(UploadPlan, BatchesCoverEveryByteOnceAndSplitLargeTensors) {
    std::vector<std::byte> backing;
    const auto tensors = fake_tensors({100, 5000, 1, 300, 2048, 7}, backing);
    std::vector<const gguf::TensorInfo*> ptrs;
    for (const auto& t : tensors) ptrs.push_back(&t);
    const uint64_t batch = 1024;
    const auto plan = plan_upload(ptrs, batch);
    expect_exact_cover(plan, batch);
    EXPECT_EQ(plan.tensor_bytes, 100u + 5000 + 1 + 300 + 2048 + 7);
    EXPECT_EQ(plan.arena_bytes, 256u + 5120 + 256 + 512 + 2048 + 256);
    EXPECT_EQ(plan.batches.size(), (plan.tensor_bytes + batch - 1) / batch);
    // The 5000-byte tensor spans several batches.
    int pieces_of_big = 0;
    for (const auto& b : plan.batches)
        for (const auto& p : b.pieces) pieces_of_big += p.tensor == &tensors[1];
    EXPECT_GE(pieces_of_big, 5);

    const auto one = plan_upload(ptrs, uint64_t{64} << 20);
    ASSERT_EQ(one.batches.size(), 1u) << "a small model is one batch";
    EXPECT_EQ(one.batches[0].pieces.size(), tensors.size());
    EXPECT_TRUE(plan_upload({}, 1024).batches.empty());
    EXPECT_THROW(plan_upload(ptrs, 0), Error);
}

TEST(UploadPlan, UsedTensorsLeaveTheMtpHeadOut) {
    synth::SynthRequest r;
    synth::ShapeOverrides o;
    o.mtp = true;
    o.vocab_size = 1024;
    r.shape = synth::make_shape("tiny", o);
    r.mix = synth::parse_mix("seed-iq4");
    r.vocab = test::data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
    r.threads = 2;
    const auto bytes = synth::SynthModel(r).write_to_bytes();
    const auto m = test::bind_file(gguf::GgufFile::parse(bytes, "synth-mtp"));
    ASSERT_FALSE(m->bound.skipped_blocks.empty()) << "synth --mtp must give the model an MTP block";

    std::set<const gguf::TensorInfo*> mtp;
    for (const auto& block : m->bound.skipped_blocks)
        for (const auto& [role, t] : block.tensors) mtp.insert(t);
    ASSERT_GE(mtp.size(), 3u);  // at least eh_proj, enorm, hnorm (plus the block's attention tensors)
    for (const auto* t : mtp) EXPECT_NE(t->name.find("blk.8."), std::string_view::npos) << t->name;

    const auto used = used_tensors(m->bound);
    std::set<const gguf::TensorInfo*> used_set(used.begin(), used.end());
    EXPECT_EQ(used_set.size(), used.size()) << "each tensor once";
    for (const auto* t : used) EXPECT_FALSE(mtp.count(t)) << t->name << " belongs to the MTP head";
    // Everything else in the file is used: the trunk and the globals.
    EXPECT_EQ(used.size() + mtp.size(), m->file.tensors().size());
    for (size_t i = 1; i < used.size(); ++i) EXPECT_LT(used[i - 1]->file_offset, used[i]->file_offset);
}

}  // namespace
}  // namespace dense::exec
