// Reading the real GGUF files in tests/data (written by llama.cpp's tools / make_tiny.py), and
// mmap error handling.
#include "common/test_paths.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace dense::gguf {
namespace {

std::filesystem::path vocab_path() { return test::data_dir() / "vocab" / "ggml-vocab-qwen35.gguf"; }
std::filesystem::path tiny_path() { return test::data_dir() / "golden-tiny" / "tiny-qwen35-f32.gguf"; }

// Copies every KV and tensor of `f` through the writer.
std::vector<std::byte> rewrite(const GgufFile& f) {
    GgufWriter w;
    for (const auto& kv : f.kvs()) w.add_value(std::string(kv.key), kv.value);
    for (const auto& t : f.tensors())
        w.add_tensor(std::string(t.name), t.type, std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), t.data);
    return w.write_to_bytes();
}

TEST(GgufRealFiles, VocabOnlyQwen35) {
    const GgufFile f = GgufFile::open(vocab_path());
    EXPECT_EQ(f.version(), 3u);
    EXPECT_TRUE(f.tensors().empty());
    EXPECT_EQ(f.get_string("general.architecture"), "qwen2");
    EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(f.get_string("tokenizer.ggml.pre"), "qwen35");
    const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    ASSERT_EQ(tokens.size(), 151936u);
    EXPECT_EQ(tokens[0], "!");          // byte-level BPE: the first tokens are the printable bytes
    EXPECT_EQ(tokens[32], "A");
    EXPECT_EQ(f.get_string_array("tokenizer.ggml.merges").size(), 151387u);
    EXPECT_EQ(f.get_i32_array("tokenizer.ggml.token_type").size(), 151936u);
    EXPECT_LE(f.data_start(), f.file_size());
    EXPECT_EQ(f.alignment(), kDefaultAlignment);
    // Every string view lies inside the mapping.
    const auto* begin = reinterpret_cast<const char*>(f.bytes().data());
    for (auto t : tokens) {
        ASSERT_GE(t.data(), begin);
        ASSERT_LE(t.data() + t.size(), begin + f.file_size());
    }
}

TEST(GgufRealFiles, TinyQwen35) {
    const GgufFile f = GgufFile::open(tiny_path());
    EXPECT_EQ(f.path(), tiny_path().string());
    ASSERT_EQ(f.tensors().size(), 109u);
    EXPECT_EQ(f.get_string("general.architecture"), "qwen35");
    EXPECT_EQ(f.get_u32("qwen35.block_count"), 8u);
    EXPECT_EQ(f.get_u32("qwen35.embedding_length"), 64u);
    EXPECT_EQ(f.get_f32("qwen35.attention.layer_norm_rms_epsilon"), 1e-6f);
    EXPECT_EQ(f.get_f32("qwen35.rope.freq_base"), 10000.0f);
    EXPECT_EQ(f.get_i32_array("qwen35.rope.dimension_sections"), (std::vector<int32_t>{11, 11, 10, 0}));
    EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 300u);
    EXPECT_EQ(f.get_string_array("tokenizer.ggml.merges").size(), 0u);
    EXPECT_FALSE(f.get_bool("tokenizer.ggml.add_bos_token"));

    const TensorInfo* emb = f.find_tensor("token_embd.weight");
    ASSERT_NE(emb, nullptr);
    EXPECT_EQ(emb->type, DENSE_TYPE_F32);
    EXPECT_EQ(emb->n_dims, 2u);
    EXPECT_EQ(emb->ne, (std::array<int64_t, 4>{64, 300, 1, 1}));
    EXPECT_EQ(emb->n_bytes, 64u * 300u * 4u);
    EXPECT_EQ(emb->offset, 0u);
    EXPECT_EQ(f.find_tensor("blk.7.attn_q.weight")->ne[1], 32 * 6 * 2);
    EXPECT_EQ(f.find_tensor("blk.0.ssm_a")->n_dims, 1u);
    EXPECT_EQ(f.find_tensor("blk.3.ssm_a"), nullptr);  // full-attention layer

    uint64_t expected = 0;
    for (const auto& t : f.tensors()) {
        EXPECT_EQ(t.type, DENSE_TYPE_F32) << t.name;
        EXPECT_EQ(t.offset, expected) << t.name;
        EXPECT_EQ(t.file_offset, f.data_start() + t.offset);
        EXPECT_EQ(t.file_offset % 32, 0u);
        EXPECT_EQ(t.data.data(), f.bytes().data() + t.file_offset);
        EXPECT_EQ(t.data.size(), t.n_bytes);
        expected += (t.n_bytes + 31) / 32 * 32;
    }
    EXPECT_EQ(f.data_start() + expected, f.file_size());
    // ssm_a is -exp(N(0, 0.5)): strictly negative, finite.
    const TensorInfo* a = f.find_tensor("blk.0.ssm_a");
    for (int64_t i = 0; i < a->ne[0]; ++i) {
        float v;
        std::memcpy(&v, a->data.data() + i * 4, 4);
        EXPECT_TRUE(std::isfinite(v) && v < 0.0f) << v;
    }
}

// The writer reproduces a file written by another GGUF writer byte for byte.
TEST(GgufRealFiles, WriterReproducesTinyModelExactly) {
    const GgufFile f = GgufFile::open(tiny_path());
    const auto copy = rewrite(f);
    ASSERT_EQ(copy.size(), f.file_size());
    EXPECT_TRUE(std::equal(copy.begin(), copy.end(), f.bytes().begin()));
}

TEST(GgufRealFiles, WriterReproducesVocabMetadata) {
    const GgufFile f = GgufFile::open(vocab_path());
    const auto copy = rewrite(f);
    const GgufFile g = GgufFile::parse(copy, "copy");
    ASSERT_EQ(g.kvs().size(), f.kvs().size());
    for (size_t i = 0; i < f.kvs().size(); ++i) {
        EXPECT_EQ(g.kvs()[i].key, f.kvs()[i].key);
        EXPECT_TRUE(same_value(g.kvs()[i].value, f.kvs()[i].value)) << f.kvs()[i].key;
    }
    // Bytes up to the end of the metadata are identical (the original may carry trailing padding).
    ASSERT_LE(copy.size(), f.file_size());
    EXPECT_TRUE(std::equal(copy.begin(), copy.end(), f.bytes().begin()));
}

TEST(GgufMappedFile, MissingFileIsAnIoErrorNamingPathAndErrno) {
    try {
        (void)GgufFile::open("/nonexistent/dir/model.gguf");
        FAIL() << "opened a missing file";
    } catch (const GgufError& e) {
        FAIL() << e.what();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Io);
        const std::string what = e.what();
        EXPECT_NE(what.find("/nonexistent/dir/model.gguf"), std::string::npos) << what;
        EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
    }
}

TEST(GgufMappedFile, DirectoryIsAnIoError) {
    try {
        MappedFile m(test::data_dir());
        FAIL() << "mapped a directory";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Io);
        EXPECT_NE(std::string(e.what()).find(test::data_dir().string()), std::string::npos);
    }
}

TEST(GgufMappedFile, EmptyAndShortFilesAreFormatErrors) {
    const auto dir = test::scratch_dir("gguf-mmap");
    const auto empty = dir / "empty.gguf";
    { std::ofstream(empty, std::ios::binary); }
    MappedFile m(empty);
    EXPECT_EQ(m.size(), 0u);
    try {
        (void)GgufFile::open(empty);
        FAIL() << "accepted an empty file";
    } catch (const GgufError& e) {
        EXPECT_EQ(e.rule(), Rule::Header);
        EXPECT_EQ(e.path(), empty.string());
    }
    std::filesystem::remove_all(dir);
}

TEST(GgufMappedFile, MoveKeepsTheMapping) {
    MappedFile a(tiny_path());
    const auto* p = a.bytes().data();
    MappedFile b(std::move(a));
    EXPECT_EQ(b.bytes().data(), p);
    EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    GgufFile f = GgufFile::open(tiny_path());
    GgufFile g = std::move(f);
    EXPECT_EQ(g.find_tensor("output.weight")->data.data(), g.bytes().data() + g.find_tensor("output.weight")->file_offset);
}

}  // namespace
}  // namespace dense::gguf
