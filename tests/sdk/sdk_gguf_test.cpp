// dense/sdk/gguf.hpp (the header-only GGUF reader/writer pack tools get with the installed SDK)
// against the runtime's own GgufWriter / GgufFile: what one writes, the other must read identically,
// and a tensor retyped to a pack format must resolve through the dense.type.<id> key.
#include "common/test_paths.hpp"
#include "core/type_table.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <dense/sdk/gguf.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

namespace sg = dense::sdk::gguf;
using dense::gguf::GgufFile;
using dense::gguf::GgufWriter;

std::vector<std::byte> random_bytes(std::mt19937_64& rng, size_t n) {
    std::vector<std::byte> v(n);
    for (auto& b : v) b = static_cast<std::byte>(rng() & 0xFF);
    return v;
}

std::vector<std::byte> read_all(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    std::vector<std::byte> out(text.size());
    std::memcpy(out.data(), text.data(), text.size());
    return out;
}

std::vector<std::byte> to_bytes(std::span<const std::byte> s) { return {s.begin(), s.end()}; }

// A file written by the runtime's writer: KVs of several types (alignment 64), F32 / Q8_0 / F16 tensors.
struct Source {
    std::filesystem::path path;
    std::vector<std::vector<std::byte>> data;  // per tensor, in order
};

Source write_source(const std::string& tag, uint64_t seed) {
    std::mt19937_64 rng(seed);
    GgufWriter w;
    w.set_alignment(64);
    w.add_string("general.architecture", "qwen35");
    w.add_u32("qwen35.block_count", 3);
    w.add_f32("qwen35.rope.freq_base", 1e7f);
    const std::vector<std::string> tokens = {"a", "bc", "\xC3\xA9", ""};
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    const std::vector<int32_t> ints = {1, -2, 3};
    w.add_array<int32_t>("test.ints", ints);
    w.add_bool("test.flag", true);
    Source s;
    const struct {
        const char* name;
        dense_type_id type;
        std::vector<int64_t> ne;
        size_t bytes;
    } tensors[] = {
        {"a.weight", DENSE_TYPE_F32, {64, 3}, 64 * 3 * 4},
        {"b.weight", DENSE_TYPE_Q8_0, {128, 5}, 4 * 34 * 5},
        {"c.weight", DENSE_TYPE_F16, {7}, 14},
    };
    for (const auto& t : tensors) {
        s.data.push_back(random_bytes(rng, t.bytes));
        w.add_tensor(t.name, t.type, t.ne, s.data.back());
    }
    s.path = dense::test::scratch_dir("sdk-gguf") / (tag + ".gguf");
    w.write_to_file(s.path);
    return s;
}

TEST(SdkGguf, ReadsWhatTheRuntimeWrites) {
    const Source src = write_source("read", 11);
    const sg::File f = sg::File::read(src.path);
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), 64u);
    ASSERT_EQ(f.kvs().size(), 7u);  // general.alignment comes first
    EXPECT_EQ(f.kvs()[0].key, "general.alignment");
    EXPECT_EQ(f.get_string("general.architecture"), "qwen35");
    EXPECT_EQ(f.get_string("qwen35.block_count"), std::nullopt);  // not a STRING
    EXPECT_EQ(f.find_kv("tokenizer.ggml.tokens")->type, sg::kArray);
    ASSERT_EQ(f.tensors().size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(to_bytes(f.tensor_data(f.tensors()[i])), src.data[i]) << i;
    EXPECT_EQ(f.tensors()[1].ne, (std::vector<int64_t>{128, 5}));
    EXPECT_EQ(f.tensors()[1].type, static_cast<uint32_t>(DENSE_TYPE_Q8_0));
    EXPECT_EQ(f.tensors()[2].n_elements(), 7);
}

TEST(SdkGguf, CopyIsByteIdentical) {
    const Source src = write_source("copy", 12);
    const sg::File f = sg::File::read(src.path);
    sg::Writer w(f.alignment());
    for (const auto& kv : f.kvs()) w.add_kv(kv);
    for (const auto& t : f.tensors()) w.add_tensor(t.name, t.type, t.ne, f.tensor_data(t));
    const auto out = dense::test::scratch_dir("sdk-gguf") / "copy-out.gguf";
    w.write(out);
    EXPECT_EQ(read_all(out), read_all(src.path));
}

TEST(SdkGguf, RetypedTensorResolvesThroughTheDenseTypeKey) {
    const Source src = write_source("retype", 13);
    const sg::File f = sg::File::read(src.path);
    // A pack format "sdktest.q4" (64 elements in 36 bytes), known to a private type table as a
    // pack would register it; its run-time id there need not be 1024.
    dense::TypeTable table;
    (void)table.register_runtime("sdktest.other", 32, 18, DENSE_TYPE_Q8_0);
    const dense_type_id q4 = table.register_runtime("sdktest.q4", 64, 36, DENSE_TYPE_F32);
    ASSERT_NE(q4, sg::kFirstPackTypeId);

    std::mt19937_64 rng(14);
    const auto a_q4 = random_bytes(rng, 36 * 3);  // a.weight {64, 3}: one block per row
    sg::Writer w(f.alignment());
    for (const auto& kv : f.kvs()) w.add_kv(kv);
    const uint32_t file_id = sg::kFirstPackTypeId + 7;
    w.set_pack_type(file_id, {"sdktest.q4", {64, 36}});
    w.add_tensor("a.weight", file_id, {64, 3}, a_q4);
    w.add_tensor("b.weight", DENSE_TYPE_Q8_0, {128, 5}, f.tensor_data(f.tensors()[1]));
    w.add_tensor("c.weight", DENSE_TYPE_F16, {7}, f.tensor_data(f.tensors()[2]));
    const auto out = dense::test::scratch_dir("sdk-gguf") / "retyped.gguf";
    w.write(out);

    const GgufFile g = GgufFile::open(out, table);
    ASSERT_EQ(g.tensors().size(), 3u);
    const auto* a = g.find_tensor("a.weight");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->type, q4);
    EXPECT_EQ(a->file_type_id, file_id);
    EXPECT_EQ(to_bytes(a->data), a_q4);
    EXPECT_EQ(to_bytes(g.find_tensor("b.weight")->data), src.data[1]);
    EXPECT_EQ(to_bytes(g.find_tensor("c.weight")->data), src.data[2]);
    EXPECT_EQ(g.get_string("dense.type." + std::to_string(file_id)), "sdktest.q4");
    EXPECT_EQ(g.get_u32("qwen35.block_count"), 3u);
    EXPECT_EQ(g.get_string_array("tokenizer.ggml.tokens").size(), 4u);
    EXPECT_EQ(g.alignment(), 64u);

    // The SDK reader reads it back too, given the format's block.
    const sg::File again = sg::File::read(out, {{"sdktest.q4", {64, 36}}});
    EXPECT_EQ(to_bytes(again.tensor_data(*again.find_tensor("a.weight"))), a_q4);
    // Without it, the message names the tensor and the format.
    try {
        (void)sg::File::read(out);
        FAIL() << "read a pack tensor of unknown size";
    } catch (const sg::Error& e) {
        EXPECT_NE(std::string(e.what()).find("'a.weight' has pack type 'sdktest.q4'"), std::string::npos) << e.what();
    }
    // The runtime without the format refuses it, naming the format.
    try {
        (void)GgufFile::open(out, dense::TypeTable{});
        FAIL() << "opened a pack tensor without its format";
    } catch (const dense::Error& e) {
        EXPECT_NE(std::string(e.what()).find("sdktest.q4"), std::string::npos) << e.what();
    }
}

TEST(SdkGguf, WriterRefusesMisuse) {
    sg::Writer w;
    EXPECT_THROW(sg::Writer(48), sg::Error);
    const std::vector<std::byte> four(4);
    EXPECT_THROW(w.add_tensor("x", DENSE_TYPE_F32, {2}, four), sg::Error);            // 8 bytes needed
    EXPECT_THROW(w.add_tensor("x", DENSE_TYPE_Q8_0, {16}, four), sg::Error);          // not a block multiple
    EXPECT_THROW(w.add_tensor("x", sg::kFirstPackTypeId, {1}, four), sg::Error);      // unknown pack id
    EXPECT_THROW(w.set_pack_type(12, {"a.b", {1, 4}}), sg::Error);                    // below 1024
    EXPECT_THROW(w.set_pack_type(sg::kFirstPackTypeId, {"plain", {1, 4}}), sg::Error);  // not namespaced
    w.add_tensor("x", DENSE_TYPE_F32, {1}, four);
    EXPECT_THROW(w.add_tensor("x", DENSE_TYPE_F32, {1}, four), sg::Error);  // twice
    w.add_string("k", "v");
    EXPECT_THROW(w.add_u32("k", 1), sg::Error);
    EXPECT_THROW(w.add_u32("general.alignment", 64), sg::Error);  // differs from the writer's 32
}

TEST(SdkGguf, ReaderRefusesBrokenFiles) {
    const Source src = write_source("broken", 15);
    auto bytes = read_all(src.path);
    const auto dir = dense::test::scratch_dir("sdk-gguf");
    auto write = [&](const std::string& name, const std::vector<std::byte>& b) {
        std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
        return dir / name;
    };
    // Cut inside the metadata, inside the data, and a wrong magic.
    EXPECT_THROW(sg::File::read(write("cut-meta.gguf", {bytes.begin(), bytes.begin() + 40})), sg::Error);
    EXPECT_THROW(sg::File::read(write("cut-data.gguf", {bytes.begin(), bytes.end() - 100})), sg::Error);
    auto magic = bytes;
    magic[0] = std::byte{'X'};
    EXPECT_THROW(sg::File::read(write("magic.gguf", magic)), sg::Error);
    EXPECT_THROW(sg::File::read(dir / "does-not-exist.gguf"), sg::Error);
}

}  // namespace
