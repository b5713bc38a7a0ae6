// Strict typed metadata access: exact stored type required, errors name key + expected + actual.
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace dense::gguf {
namespace {

struct Fixture {
    std::vector<std::byte> bytes;
    GgufFile file;
};

Fixture make() {
    GgufWriter w;
    w.add_u8("u8", 200);
    w.add_i8("i8", -100);
    w.add_u16("u16", 60000);
    w.add_i16("i16", -30000);
    w.add_u32("u32", 4000000000u);
    w.add_i32("i32", -2000000000);
    w.add_u64("u64", 1ull << 60);
    w.add_i64("i64", -(1ll << 60));
    w.add_f32("f32", 1e-6f);
    w.add_f64("f64", 3.25);
    w.add_bool("bool", true);
    w.add_string("str", "gpt2");
    const std::array<int32_t, 4> i32s{11, 11, 10, -1};
    w.add_array("i32s", std::span<const int32_t>(i32s));
    const std::array<uint32_t, 2> u32s{7, 0x80000000u};
    w.add_array("u32s", std::span<const uint32_t>(u32s));
    w.add_bool_array("bools", {true, false, true});
    const std::array<float, 2> f32s{0.5f, -2.0f};
    w.add_array("f32s", std::span<const float>(f32s));
    const std::vector<std::string> strs{"a", "", std::string("\xff\x00z", 3)};
    w.add_string_array("strs", strs);
    auto bytes = w.write_to_bytes();
    auto file = GgufFile::parse(bytes, "typed.gguf");
    return {std::move(bytes), std::move(file)};
}

// Runs f, expects dense::Error(Model) whose message contains every part.
template <class F>
void expect_model_error(F&& f, std::initializer_list<std::string_view> parts) {
    try {
        f();
        ADD_FAILURE() << "no error";
    } catch (const GgufError& e) {
        ADD_FAILURE() << "typed access must not raise a format error: " << e.what();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Model) << e.what();
        const std::string what = e.what();
        for (auto p : parts) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
    }
}

TEST(GgufGetters, ExactTypesReadBack) {
    const auto fx = make();
    const GgufFile& f = fx.file;
    EXPECT_EQ(f.get_u8("u8"), 200);
    EXPECT_EQ(f.get_i8("i8"), -100);
    EXPECT_EQ(f.get_u16("u16"), 60000);
    EXPECT_EQ(f.get_i16("i16"), -30000);
    EXPECT_EQ(f.get_u32("u32"), 4000000000u);
    EXPECT_EQ(f.get_i32("i32"), -2000000000);
    EXPECT_EQ(f.get_u64("u64"), 1ull << 60);
    EXPECT_EQ(f.get_i64("i64"), -(1ll << 60));
    EXPECT_EQ(f.get_f32("f32"), 1e-6f);
    EXPECT_EQ(f.get_f64("f64"), 3.25);
    EXPECT_TRUE(f.get_bool("bool"));
    EXPECT_EQ(f.get_string("str"), "gpt2");
    EXPECT_EQ(f.get_i32_array("i32s"), (std::vector<int32_t>{11, 11, 10, -1}));
    EXPECT_EQ(f.get_u32_array("u32s"), (std::vector<uint32_t>{7, 0x80000000u}));
    EXPECT_EQ(f.get_bool_array("bools"), (std::vector<bool>{true, false, true}));
    EXPECT_EQ(f.get_f32_array("f32s"), (std::vector<float>{0.5f, -2.0f}));
    const auto strs = f.get_string_array("strs");
    ASSERT_EQ(strs.size(), 3u);
    EXPECT_EQ(strs[0], "a");
    EXPECT_EQ(strs[1], "");
    EXPECT_EQ(strs[2], std::string_view("\xff\x00z", 3));
    EXPECT_EQ(f.get_array("strs").count, 3u);
}

TEST(GgufGetters, OptionalFormsForAbsentKeys) {
    const auto fx = make();
    const GgufFile& f = fx.file;
    EXPECT_FALSE(f.get_u32_opt("nope"));
    EXPECT_FALSE(f.get_string_opt("nope"));
    EXPECT_FALSE(f.get_i32_array_opt("nope"));
    EXPECT_FALSE(f.get_string_array_opt("nope"));
    EXPECT_EQ(f.get_array_opt("nope"), nullptr);
    EXPECT_EQ(f.get_u32_opt("u32"), 4000000000u);
    EXPECT_EQ(f.find_kv("nope"), nullptr);
    EXPECT_TRUE(f.has("bools"));
}

TEST(GgufGetters, AbsentRequiredKeyIsNamed) {
    const auto fx = make();
    expect_model_error([&] { (void)fx.file.get_u32("qwen35.block_count"); },
                       {"typed.gguf", "required key 'qwen35.block_count' is missing"});
    expect_model_error([&] { (void)fx.file.get_string_array("tokenizer.ggml.tokens"); },
                       {"'tokenizer.ggml.tokens' is missing"});
}

TEST(GgufGetters, WrongScalarTypeNamesKeyExpectedAndActual) {
    const auto fx = make();
    const GgufFile& f = fx.file;
    expect_model_error([&] { (void)f.get_u32("u16"); }, {"typed.gguf", "key 'u16'", "kv[2]", "has type UINT16", "expected UINT32"});
    expect_model_error([&] { (void)f.get_i32("u32"); }, {"key 'u32'", "has type UINT32", "expected INT32"});
    expect_model_error([&] { (void)f.get_f32("f64"); }, {"has type FLOAT64", "expected FLOAT32"});
    expect_model_error([&] { (void)f.get_bool("u8"); }, {"has type UINT8", "expected BOOL"});
    expect_model_error([&] { (void)f.get_string("i32s"); }, {"has type ARRAY of INT32", "expected STRING"});
    // The _opt forms report a wrong type too: only absence is optional.
    expect_model_error([&] { (void)f.get_u32_opt("i32"); }, {"key 'i32'", "expected UINT32"});
}

TEST(GgufGetters, WrongArrayTypes) {
    const auto fx = make();
    const GgufFile& f = fx.file;
    expect_model_error([&] { (void)f.get_i32_array("f32s"); },
                       {"key 'f32s'", "ARRAY of FLOAT32", "expected ARRAY of INT32, UINT32 or BOOL"});
    expect_model_error([&] { (void)f.get_string_array("i32s"); }, {"ARRAY of INT32", "expected ARRAY of STRING"});
    expect_model_error([&] { (void)f.get_f32_array("strs"); }, {"ARRAY of STRING", "expected ARRAY of FLOAT32"});
    expect_model_error([&] { (void)f.get_u32_array("u32"); }, {"has type UINT32", "expected ARRAY of"});
    expect_model_error([&] { (void)f.get_array("str"); }, {"has type STRING", "expected ARRAY"});
}

TEST(GgufGetters, IntegerArraysConvertWhenTheValuesFit) {
    const auto fx = make();
    const GgufFile& f = fx.file;
    EXPECT_EQ(f.get_i32_array("bools"), (std::vector<int32_t>{1, 0, 1}));
    EXPECT_EQ(f.get_u32_array("bools"), (std::vector<uint32_t>{1, 0, 1}));
    EXPECT_EQ(f.get_bool_array("i32s"), (std::vector<bool>{true, true, true, true}));
    expect_model_error([&] { (void)f.get_u32_array("i32s"); }, {"key 'i32s'", "element [3] = -1", "UINT32"});
    expect_model_error([&] { (void)f.get_i32_array("u32s"); }, {"element [1] = 2147483648", "INT32"});
}

TEST(GgufGetters, KvOrderOffsetsAndTypes) {
    const auto fx = make();
    const auto& kvs = fx.file.kvs();
    ASSERT_EQ(kvs.size(), 17u);
    EXPECT_EQ(kvs[0].key, "u8");
    EXPECT_EQ(kvs[0].offset, 24u);
    EXPECT_EQ(kvs[0].type(), ValueType::UInt8);
    EXPECT_EQ(kvs[12].type(), ValueType::Array);
    for (size_t i = 1; i < kvs.size(); ++i) EXPECT_GT(kvs[i].offset, kvs[i - 1].offset);
    // The offset is where the key's length field is: it holds the key's length.
    uint64_t len = 0;
    std::memcpy(&len, fx.bytes.data() + kvs[5].offset, 8);
    EXPECT_EQ(len, kvs[5].key.size());
}

}  // namespace
}  // namespace dense::gguf
