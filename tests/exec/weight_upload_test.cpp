// The weight upload without a GPU: a stand-in DeviceMemory that says it is a CUDA device but keeps
// its "device" bytes in host memory and records every copy. On a synthetic model with an MTP head
// written to a real file (so its tensors live in a file mapping):
//   - every used tensor arrives intact at an aligned arena address; no MTP byte is ever copied
//   - the copies go in batches with a device sync after each, and the uploaded pages leave the
//     process (and the page cache) batch by batch
//   - releasing changes no result: a cpu-ref session computes the same logits before and after
//   - on the CPU nothing is copied or released: the weights are the mapping itself
#include "common/page_residency.hpp"
#include "exec/resident_memory.hpp"
#include "exec/session_fixture.hpp"
#include "exec/weight_store.hpp"
#include "gguf/mapped_file.hpp"
#include "synth/synth_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <new>
#include <set>

namespace dense::exec {
namespace {

class RecordingGpuMemory final : public DeviceMemory {
public:
    struct Copy {
        const std::byte* src;
        uint64_t bytes;
        size_t batch;  // how many syncs came before it
    };
    ~RecordingGpuMemory() override {
        for (void* p : blocks_) ::operator delete[](p, std::align_val_t{256});
    }
    dense_device_kind kind() const noexcept override { return DENSE_DEVICE_CUDA; }
    std::string label() const override { return "recording-gpu"; }
    void* alloc(uint64_t bytes, const std::string&) override {
        void* p = ::operator new[](bytes + 256, std::align_val_t{256});
        std::memset(p, 0, bytes + 256);
        blocks_.push_back(p);
        total_ += bytes;
        return p;
    }
    void zero(void* dst, uint64_t bytes) override { std::memset(dst, 0, bytes); }
    void to_device(void* dst, const void* src, uint64_t bytes) override {
        std::memcpy(dst, src, bytes);
        copies.push_back({static_cast<const std::byte*>(src), bytes, syncs});
    }
    void to_host(void* dst, const void* src, uint64_t bytes) override { std::memcpy(dst, src, bytes); }
    void sync() override { ++syncs; }
    void copy(void* dst, const void* src, uint64_t bytes) override { std::memmove(dst, src, bytes); }
    void* stream() const noexcept override { return nullptr; }
    uint64_t allocated_bytes() const noexcept override { return total_; }

    std::vector<Copy> copies;
    size_t syncs = 0;

private:
    std::vector<void*> blocks_;
    uint64_t total_ = 0;
};

// A tiny qwen35 with an MTP block, on disk (flushed, so the page cache may drop it) and mapped. The
// file is unlinked at once: the mapping and its descriptor keep it alive, and nothing is left behind.
std::unique_ptr<test::Model> mapped_mtp_model() {
    synth::SynthRequest r;
    synth::ShapeOverrides o;
    o.mtp = true;
    o.vocab_size = 2048;
    r.shape = synth::make_shape("tiny", o);
    r.mix = synth::parse_mix("seed-iq4");
    r.vocab = test::data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
    r.threads = 2;
    const auto dir = test::scratch_dir("weight-upload");
    const auto path = dir / "tiny-mtp.gguf";
    synth::SynthModel(r).write(path);
    test::flush_file(path);
    auto m = test::bind_file(gguf::GgufFile::open(path));
    std::filesystem::remove_all(dir);
    return m;
}

// Where the test files live (tmpfs or a disk), asked of the directory the files were in.
bool page_cache_is_the_file() { return test::page_cache_is_the_file(std::filesystem::temp_directory_path()); }

std::set<const gguf::TensorInfo*> mtp_tensors(const model::BoundModel& m) {
    std::set<const gguf::TensorInfo*> out;
    for (const auto& block : m.skipped_blocks)
        for (const auto& [role, t] : block.tensors) out.insert(t);
    return out;
}

// [first byte of the first used tensor, last byte of the last) in the mapping.
std::span<const std::byte> used_range(const model::BoundModel& m) {
    const auto used = used_tensors(m);
    const auto* first = used.front()->data.data();
    const auto* last = used.back()->data.data() + used.back()->n_bytes;
    return {first, static_cast<size_t>(last - first)};
}

void touch(std::span<const std::byte> b) {
    volatile std::byte sink{};
    for (size_t i = 0; i < b.size(); i += 512) sink = b[i];
    (void)sink;
}

TEST(WeightUpload, EveryUsedTensorArrivesAlignedAndTheMtpHeadNever) {
    const auto m = mapped_mtp_model();
    const auto mtp = mtp_tensors(m->bound);
    ASSERT_FALSE(mtp.empty()) << "the test model must have an MTP head";
    RecordingGpuMemory gpu;
    const WeightStore store(m->bound, gpu, uint64_t{256} << 10);

    uint64_t used_bytes = 0;
    for (const auto* t : used_tensors(m->bound)) {
        const void* p = store.pointer(t);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kWeightAlign, 0u) << t->name;
        EXPECT_EQ(std::memcmp(p, t->data.data(), t->n_bytes), 0) << t->name << " arrived different";
        used_bytes += t->n_bytes;
    }
    uint64_t copied = 0;
    for (const auto& c : gpu.copies) {
        copied += c.bytes;
        for (const auto* t : mtp)
            EXPECT_FALSE(c.src < t->data.data() + t->n_bytes && t->data.data() < c.src + c.bytes)
                << "a copy read the MTP tensor " << t->name;
    }
    EXPECT_EQ(copied, used_bytes) << "each used byte copied once";
    for (const auto* t : mtp) EXPECT_THROW((void)store.pointer(t), Error) << t->name << " must not be placed";
}

TEST(WeightUpload, BatchesEndInASyncAndTheirPagesLeaveTheProcess) {
    const auto m = mapped_mtp_model();
    const auto range = used_range(m->bound);
    ASSERT_GT(range.size(), size_t{2} << 20) << "the test wants many 128 KiB batches";
    touch(range);  // as a cold start would after reading: all resident
    ASSERT_EQ(test::pages_mapped(range.data(), range.size()), test::page_span(range.data(), range.size()).second);

    RecordingGpuMemory gpu;
    const uint64_t batch = uint64_t{128} << 10;
    const WeightStore store(m->bound, gpu, batch);
    const size_t batches = plan_upload(used_tensors(m->bound), batch).batches.size();
    ASSERT_GE(batches, 16u);
    EXPECT_EQ(gpu.syncs, batches) << "one device sync per batch, before its pages are released";
    ASSERT_FALSE(gpu.copies.empty());
    EXPECT_EQ(gpu.copies.back().batch, batches - 1);

    // Every whole page between the first and the last used byte is gone from the process (partial
    // pages at the two ends may stay: they are shared with bytes that are not weights).
    const size_t page = test::page_bytes();
    const auto* inner = reinterpret_cast<const std::byte*>(
        (reinterpret_cast<uintptr_t>(range.data()) + page - 1) / page * page);
    const size_t inner_len = (range.size() - static_cast<size_t>(inner - range.data())) / page * page;
    EXPECT_EQ(test::pages_mapped(inner, inner_len), 0u) << "uploaded pages still in the process";
    EXPECT_GE(store.released_bytes(), inner_len);
    EXPECT_LE(store.released_bytes(), range.size() + page);
    // The page cache drops whole folios only (up to a few MiB with large folios): one astride the
    // range's first byte, shared with bytes that are not weights, may stay. Hence the 5 %.
    if (!page_cache_is_the_file()) {
        EXPECT_LE(test::pages_cached(inner, inner_len), inner_len / page / 20)
            << "uploaded pages still in the page cache";
    }
    EXPECT_GT(store.resident_after_upload(), 0u);
}

TEST(WeightUpload, KeepPageCacheReleasesTheProcessPagesOnly) {
    if (page_cache_is_the_file()) GTEST_SKIP() << "the scratch dir is tmpfs: kept and dropped page cache look the same";
    const auto m = mapped_mtp_model();
    const auto range = used_range(m->bound);
    touch(range);
    const size_t page = test::page_bytes();
    const auto* inner = reinterpret_cast<const std::byte*>(
        (reinterpret_cast<uintptr_t>(range.data()) + page - 1) / page * page);
    const size_t inner_len = (range.size() - static_cast<size_t>(inner - range.data())) / page * page;
    ASSERT_EQ(test::pages_cached(inner, inner_len), inner_len / page);

    RecordingGpuMemory gpu;
    const WeightStore store(m->bound, gpu, uint64_t{128} << 10, /*drop_page_cache=*/false);
    EXPECT_EQ(test::pages_mapped(inner, inner_len), 0u) << "uploaded pages still in the process";
    EXPECT_EQ(test::pages_cached(inner, inner_len), inner_len / page) << "keep_page_cache dropped the page cache";
}

TEST(WeightUpload, ReleasingTheMappingChangesNoResult) {
    const auto m = mapped_mtp_model();
    const std::vector<int32_t> tokens{1, 17, 300, 42};
    auto logits_of = [&] {
        auto s = test::make_session(*m, 16);
        for (size_t i = 0; i + 1 < tokens.size(); ++i) s->step(tokens[i], false);
        s->step(tokens.back(), true);
        return std::vector<float>(s->logits().begin(), s->logits().end());
    };
    const auto before = logits_of();
    {
        RecordingGpuMemory gpu;
        const WeightStore store(m->bound, gpu, uint64_t{1} << 20);
        ASSERT_GT(store.released_bytes(), 0u);
    }
    const auto after = logits_of();  // the CPU reads the released pages: faulted back in from the file
    ASSERT_EQ(before.size(), after.size());
    ASSERT_FALSE(before.empty());
    EXPECT_TRUE(std::all_of(before.begin(), before.end(), [](float v) { return std::isfinite(v); }));
    EXPECT_EQ(std::memcmp(before.data(), after.data(), before.size() * sizeof(float)), 0);
}

TEST(WeightUpload, OnTheCpuTheWeightsAreTheMappingAndStayResident) {
    const auto m = mapped_mtp_model();
    const auto range = used_range(m->bound);
    touch(range);
    const size_t resident = test::pages_mapped(range.data(), range.size());
    auto host = make_host_memory();
    const WeightStore store(m->bound, *host);
    for (const auto* t : used_tensors(m->bound)) EXPECT_EQ(store.pointer(t), t->data.data()) << t->name;
    EXPECT_EQ(host->allocated_bytes(), 0u) << "nothing copied";
    EXPECT_EQ(store.uploaded_bytes(), 0u);
    EXPECT_EQ(store.released_bytes(), 0u);
    EXPECT_EQ(test::pages_mapped(range.data(), range.size()), resident) << "the CPU reads these: never release them";
}

TEST(WeightUpload, AModelParsedFromMemoryIsUploadedAndLeftAlone) {
    // No file mapping behind the tensors: nothing may be released (MADV_DONTNEED would zero the bytes).
    synth::SynthRequest r;
    synth::ShapeOverrides o;
    o.vocab_size = 1024;
    r.shape = synth::make_shape("tiny", o);
    r.mix = synth::parse_mix("q8_0");
    r.vocab = test::data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
    r.threads = 2;
    const auto bytes = synth::SynthModel(r).write_to_bytes();
    const auto copy = bytes;
    const auto m = test::bind_file(gguf::GgufFile::parse(bytes, "in-memory"));
    RecordingGpuMemory gpu;
    const WeightStore store(m->bound, gpu, uint64_t{64} << 10);
    EXPECT_EQ(store.released_bytes(), 0u);
    EXPECT_EQ(bytes, copy) << "memory that is not a file mapping was changed";
    for (const auto* t : used_tensors(m->bound))
        EXPECT_EQ(std::memcmp(store.pointer(t), t->data.data(), t->n_bytes), 0) << t->name;
}

}  // namespace
}  // namespace dense::exec
