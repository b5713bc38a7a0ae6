// One handcrafted corrupt file per validation rule of spec/gguf-format.md section 6 (1-16) plus the
// truncation cases; each asserts the rule, the field name and the byte offset the error reports.
#include "gguf/gguf_file.hpp"
#include "gguf_bytes.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace dense::gguf {
namespace {

using test::Bytes;
using test::enc_str;
using test::enc_u32;
using test::RawFile;
using test::RawKv;
using test::RawTensor;
using test::valid_raw_file;

// Parses `bytes` and returns the message, failing the test unless a GgufError with exactly this
// rule, offset and field comes out.
std::string expect_rule(const std::vector<std::byte>& bytes, Rule rule, uint64_t offset, const std::string& field,
                        const TypeTable& types = global_type_table()) {
    try {
        (void)GgufFile::parse(bytes, "corrupt.gguf", types);
    } catch (const GgufError& e) {
        EXPECT_EQ(e.rule(), rule) << e.what();
        EXPECT_EQ(e.offset(), offset) << e.what();
        EXPECT_EQ(e.field(), field) << e.what();
        EXPECT_EQ(e.kind(), ErrorKind::Format);
        EXPECT_EQ(e.path(), "corrupt.gguf");
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("corrupt.gguf: byte " + std::to_string(offset) + ": ", 0), 0u) << what;
        EXPECT_NE(what.find(field), std::string::npos) << what;
        EXPECT_NE(what.find(std::string(rule_name(rule))), std::string::npos) << what;
        return what;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected GgufError, got another exception: " << e.what();
        return {};
    }
    ADD_FAILURE() << "the corrupt file was accepted";
    return {};
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

TEST(GgufRules, ValidBaselineParses) {
    RawFile f = valid_raw_file();
    auto bytes = f.build();
    const GgufFile g = GgufFile::parse(bytes, "ok.gguf");
    ASSERT_EQ(g.tensors().size(), 2u);
    EXPECT_EQ(g.data_start(), f.data_start);
    EXPECT_EQ(g.tensors()[1].offset, 256u);
    EXPECT_EQ(g.tensors()[1].info_offset, f.info_at[1]);
}

// ---- rule 1: header ----
TEST(GgufRules, R1_FileShorterThanHeader) {
    for (size_t n : {0u, 4u, 23u}) {
        auto bytes = valid_raw_file().build();
        bytes.resize(n);
        const auto msg = expect_rule(bytes, Rule::Header, 0, "header");
        EXPECT_TRUE(contains(msg, "shorter than the 24-byte")) << msg;
    }
}

TEST(GgufRules, R1_BadMagic) {
    RawFile f = valid_raw_file();
    f.magic = "GGML";
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::Header, 0, "header.magic");
    EXPECT_TRUE(contains(msg, "'GGML'")) << msg;
}

// ---- rule 2: version ----
TEST(GgufRules, R2_Versions) {
    for (uint32_t v : {0u, 1u, 4u, 0x03000000u, 0x00020000u}) {
        RawFile f = valid_raw_file();
        f.version = v;
        const auto bytes = f.build();
        const auto msg = expect_rule(bytes, Rule::Version, 4, "header.version");
        if (v == 0x03000000u) {
            EXPECT_TRUE(contains(msg, "big-endian")) << msg;
        }
    }
}

TEST(GgufRules, R2_Version2IsAccepted) {
    RawFile f = valid_raw_file();
    f.version = 2;
    EXPECT_EQ(GgufFile::parse_owned(f.build()).version(), 2u);
}

// ---- rule 3: counts ----
TEST(GgufRules, R3_NegativeCounts) {
    RawFile f = valid_raw_file();
    f.n_tensors = std::numeric_limits<int64_t>::min();
    auto bytes = f.build();
    expect_rule(bytes, Rule::Counts, 8, "header.tensor_count");
    f = valid_raw_file();
    f.n_kv = -5;
    bytes = f.build();
    expect_rule(bytes, Rule::Counts, 16, "header.metadata_kv_count");
}

TEST(GgufRules, R3_CountsBeyondFileSize) {
    RawFile f = valid_raw_file();
    f.n_kv = std::numeric_limits<int64_t>::max();
    auto bytes = f.build();
    expect_rule(bytes, Rule::Counts, 16, "header.metadata_kv_count");
    f = valid_raw_file();
    f.n_tensors = int64_t{1} << 40;
    bytes = f.build();
    expect_rule(bytes, Rule::Counts, 8, "header.tensor_count");
    // Each count alone fits, together they do not: 24 + 12 * 3 > remaining 48.
    RawFile g;
    g.n_kv = 3;
    g.n_tensors = 1;
    g.data_adjust = 48;
    bytes = g.build();
    const auto msg = expect_rule(bytes, Rule::Counts, 8, "header.tensor_count");
    EXPECT_TRUE(contains(msg, "3 KVs and 1 tensor infos")) << msg;
}

// ---- rule 4: strings ----
TEST(GgufRules, R4_StringLongerThan1GiB) {
    RawFile f = valid_raw_file();
    auto bytes = f.build();
    const uint64_t len = (uint64_t{1} << 30) + 1;
    std::memcpy(bytes.data() + f.kv_at[0], &len, 8);  // the first key's length
    const auto msg = expect_rule(bytes, Rule::StringLength, f.kv_at[0], "kv[0].key");
    EXPECT_TRUE(contains(msg, "1 GiB")) << msg;
}

TEST(GgufRules, R4_StringLongerThanRemainingBytes) {
    RawFile f = valid_raw_file();
    f.kvs[0].value = Bytes().u64(100000).raw("qwen35").vec();  // value string claims 100000 bytes
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::StringLength, f.kv_value_at[0], "kv[0] 'general.architecture'");
    EXPECT_TRUE(contains(msg, "bytes left")) << msg;
}

TEST(GgufRules, R4_TensorNameStringPastEnd) {
    RawFile f = valid_raw_file();
    auto bytes = f.build();
    const uint64_t len = 1u << 20;
    std::memcpy(bytes.data() + f.info_at[1], &len, 8);
    expect_rule(bytes, Rule::StringLength, f.info_at[1], "tensor_info[1].name");
}

TEST(GgufRules, R4_StringInsideArrayPastEnd) {
    RawFile f;
    f.kvs.push_back({"tokenizer.ggml.tokens", 9, Bytes().i32(8).u64(2).str("ab").u64(999).raw("cdefgh").vec()});
    const uint64_t second = f.build().size() - 6 - 8;  // where the second element's length sits
    auto bytes = f.build();
    expect_rule(bytes, Rule::StringLength, second, "kv[0] 'tokenizer.ggml.tokens'[1]");
}

// ---- rule 5: array counts ----
TEST(GgufRules, R5_ArrayCountAboveLimit) {
    RawFile f;
    f.kvs.push_back({"x", 9, Bytes().i32(0).u64((uint64_t{1} << 30) + 1).zeros(16).vec()});
    auto bytes = f.build();
    expect_rule(bytes, Rule::ArrayCount, f.kv_value_at[0] + 4, "kv[0] 'x'.count");
}

TEST(GgufRules, R5_ArrayBytesBeyondRemaining) {
    RawFile f;
    f.kvs.push_back({"x", 9, Bytes().i32(5).u64(5).zeros(16).vec()});  // 5 INT32 need 20 bytes, 16 present
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::ArrayCount, f.kv_value_at[0] + 4, "kv[0] 'x'.count");
    EXPECT_TRUE(contains(msg, "5 x 4")) << msg;
}

TEST(GgufRules, R5_StringArrayLowerBoundBeyondRemaining) {
    RawFile f;
    f.kvs.push_back({"x", 9, Bytes().i32(8).u64(3).zeros(16).vec()});  // 3 strings need >= 24 bytes
    auto bytes = f.build();
    expect_rule(bytes, Rule::ArrayCount, f.kv_value_at[0] + 4, "kv[0] 'x'.count");
}

// ---- rule 6: array element type ----
TEST(GgufRules, R6_NestedArray) {
    RawFile f;
    f.kvs.push_back({"x", 9, Bytes().i32(9).u64(1).i32(4).u64(1).u32(7).vec()});
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::ArrayElementType, f.kv_value_at[0], "kv[0] 'x'.elem_type");
    EXPECT_TRUE(contains(msg, "nested")) << msg;
}

TEST(GgufRules, R6_UnknownElementType) {
    for (int32_t t : {13, -1, 1000}) {
        RawFile f;
        f.kvs.push_back({"x", 9, Bytes().i32(t).u64(0).zeros(8).vec()});
        const auto bytes = f.build();
        expect_rule(bytes, Rule::ArrayElementType, f.kv_value_at[0], "kv[0] 'x'.elem_type");
    }
}

// ---- rule 7: keys ----
TEST(GgufRules, R7_EmptyKey) {
    RawFile f = valid_raw_file();
    f.kvs[1].key = "";
    auto bytes = f.build();
    expect_rule(bytes, Rule::Key, f.kv_at[1], "kv[1].key");
}

TEST(GgufRules, R7_DuplicateKey) {
    RawFile f = valid_raw_file();
    f.kvs.push_back({"general.architecture", 8, enc_str("llama")});
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::Key, f.kv_at[2], "kv[2] 'general.architecture'");
    EXPECT_TRUE(contains(msg, "first at kv[0]")) << msg;
}

// ---- rule 8: value type ----
TEST(GgufRules, R8_UnknownValueType) {
    for (int32_t t : {13, -1, 0x7FFFFFFF}) {
        RawFile f = valid_raw_file();
        f.kvs[0].type = t;
        const auto bytes = f.build();
        expect_rule(bytes, Rule::ValueType, f.kv_type_at[0], "kv[0] 'general.architecture'.type");
    }
}

// ---- rule 9: alignment ----
TEST(GgufRules, R9_AlignmentWrongType) {
    RawFile f = valid_raw_file();
    f.kvs[1] = {"general.alignment", 5, Bytes().i32(32).vec()};  // INT32, not UINT32
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::Alignment, f.kv_at[1], "kv[1] 'general.alignment'");
    EXPECT_TRUE(contains(msg, "INT32")) << msg;
}

TEST(GgufRules, R9_AlignmentZeroOrNotPowerOfTwo) {
    for (uint32_t a : {0u, 48u, 0xFFFFFFFFu}) {
        RawFile f = valid_raw_file();
        f.kvs[1].value = enc_u32(a);
        const auto bytes = f.build();
        expect_rule(bytes, Rule::Alignment, f.kv_value_at[1], "kv[1] 'general.alignment'");
    }
}

// ---- rule 10: tensor names ----
TEST(GgufRules, R10_NameTooLong) {
    RawFile f = valid_raw_file();
    f.tensors[1].name = std::string(64, 'n');
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::TensorName, f.info_at[1], "tensor_info[1].name");
    EXPECT_TRUE(contains(msg, "64 bytes")) << msg;
    f.tensors[1].name = std::string(63, 'n');  // the limit itself is fine
    EXPECT_NO_THROW((void)GgufFile::parse_owned(f.build()));
}

TEST(GgufRules, R10_DuplicateName) {
    RawFile f = valid_raw_file();
    f.tensors[1].name = "a.weight";
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::TensorName, f.info_at[1], "tensor_info[1].name");
    EXPECT_TRUE(contains(msg, "duplicate tensor name 'a.weight'")) << msg;
}

// ---- rule 11: dimensions ----
TEST(GgufRules, R11_TooManyDims) {
    RawFile f = valid_raw_file();
    f.tensors[1].n_dims = 5;
    f.tensors[1].ne = {4, 1, 1, 1, 1};
    auto bytes = f.build();
    expect_rule(bytes, Rule::TensorDims, f.ne_at[1] - 4, "tensor_info[1].n_dims");
}

TEST(GgufRules, R11_NegativeDim) {
    RawFile f = valid_raw_file();
    f.tensors[0].ne = {32, -2};
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::TensorDims, f.ne_at[0] + 8, "tensor_info[0].ne[1]");
    EXPECT_TRUE(contains(msg, "tensor 'a.weight' ne[1]=-2")) << msg;
}

TEST(GgufRules, R11_ElementCountOverflow) {
    RawFile f = valid_raw_file();
    f.tensors[0].n_dims = 3;
    f.tensors[0].ne = {int64_t{1} << 32, int64_t{1} << 20, int64_t{1} << 12};  // 2^64 elements
    auto bytes = f.build();
    expect_rule(bytes, Rule::TensorDims, f.ne_at[0] + 16, "tensor_info[0].ne[2]");
}

// ---- rule 12: tensor types ----
TEST(GgufRules, R12_TypeIds) {
    struct Case {
        int32_t id;
        const char* says;
    };
    for (const Case& c : {Case{43, "outside the ggml range"}, Case{1023, "outside the ggml range"},
                          Case{-1, "outside the ggml range"}, Case{4, "retired"}, Case{36, "retired"},
                          Case{2, "q4_0 (id 2), which dense-rt does not support"}, Case{16, "iq2_xxs"},
                          Case{15, "q8_k (id 15), an activation-only format"},
                          Case{9, "q8_1 (id 9), an activation-only format"},
                          Case{1024, "no 'dense.type.1024' key"}}) {
        RawFile f = valid_raw_file();
        f.tensors[1].type = c.id;
        const auto bytes = f.build();
        const auto msg = expect_rule(bytes, Rule::TensorType, f.type_at[1], "tensor_info[1].type");
        EXPECT_TRUE(contains(msg, c.says)) << msg;
        EXPECT_TRUE(contains(msg, "tensor 'b.weight'")) << msg;
    }
}

TEST(GgufRules, R12_PackTypeNamedInFile) {
    TypeTable types;
    const dense_type_id id = types.register_runtime("acme.q3x", 64, 30, DENSE_TYPE_Q8_K);
    RawFile f = valid_raw_file();
    f.tensors[1] = {"b.weight", 1, {128}, 5000, 256, 60};
    f.kvs.push_back({"dense.type.5000", 8, enc_str("acme.q3x")});
    auto bytes = f.build();
    const GgufFile g = GgufFile::parse(bytes, "pack.gguf", types);
    EXPECT_EQ(g.tensors()[1].type, id);
    EXPECT_EQ(g.tensors()[1].file_type_id, 5000u);
    EXPECT_EQ(g.tensors()[1].n_bytes, 60u);

    f.kvs.back().value = enc_str("acme.unknown");
    bytes = f.build();
    auto msg = expect_rule(bytes, Rule::TensorType, f.type_at[1], "tensor_info[1].type", types);
    EXPECT_TRUE(contains(msg, "'acme.unknown'")) << msg;
    f.kvs.back() = {"dense.type.5000", 4, enc_u32(7)};
    bytes = f.build();
    msg = expect_rule(bytes, Rule::TensorType, f.type_at[1], "tensor_info[1].type", types);
    EXPECT_TRUE(contains(msg, "must be a STRING")) << msg;
    f.kvs.back() = {"dense.type.5000", 8, enc_str("q4_k")};  // built-ins are stored by their ggml id
    bytes = f.build();
    expect_rule(bytes, Rule::TensorType, f.type_at[1], "tensor_info[1].type", types);
}

// ---- rule 13: block multiple ----
TEST(GgufRules, R13_NotABlockMultiple) {
    RawFile f = valid_raw_file();
    f.tensors[0] = {"blk.0.ffn_up.weight", 2, {100, 2}, DENSE_TYPE_Q4_K, 0, 288};
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::BlockMultiple, f.ne_at[0], "tensor_info[0].ne[0]");
    EXPECT_TRUE(contains(msg, "tensor 'blk.0.ffn_up.weight' ne[0]=100 is not a multiple of the q4_k block size 256"))
        << msg;
}

// ---- rule 14: byte size overflow ----
TEST(GgufRules, R14_TensorBytesOverflow) {
    RawFile f = valid_raw_file();
    f.tensors[0].ne = {int64_t{1} << 62, 1};  // 2^62 f32 elements = 2^64 bytes
    auto bytes = f.build();
    expect_rule(bytes, Rule::TensorBytesOverflow, f.info_at[0], "tensor_info[0]");
    f.tensors[0].ne = {int64_t{1} << 31, int64_t{1} << 31};  // overflows at the ne[1] step
    bytes = f.build();
    expect_rule(bytes, Rule::TensorBytesOverflow, f.info_at[0], "tensor_info[0]");
}

// ---- rule 15: offsets ----
TEST(GgufRules, R15_FirstOffsetNotZero) {
    RawFile f = valid_raw_file();
    f.tensors[0].offset = 32;
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::TensorOffset, f.offset_at[0], "tensor_info[0].offset");
    EXPECT_TRUE(contains(msg, "offset 32, expected 0")) << msg;
}

TEST(GgufRules, R15_OffsetNotPaddedOrOverlapping) {
    RawFile f = valid_raw_file();
    f.tensors[0].ne = {1, 1};  // 4 bytes: the next tensor must start at 32, not 4
    f.tensors[0].data_bytes = 4;
    f.tensors[1].offset = 4;
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::TensorOffset, f.offset_at[1], "tensor_info[1].offset");
    EXPECT_TRUE(contains(msg, "tensor 'b.weight' has offset 4, expected 32")) << msg;
}

// ---- rule 16: data bounds ----
TEST(GgufRules, R16_DataPastEndOfFile) {
    RawFile f = valid_raw_file();
    f.data_adjust = -static_cast<int64_t>(32 - 16) - 1;  // cut one byte of b.weight itself
    auto bytes = f.build();
    auto msg = expect_rule(bytes, Rule::DataBounds, f.offset_at[1], "tensor_info[1].offset");
    EXPECT_TRUE(contains(msg, "tensor 'b.weight'")) << msg;
    f.data_adjust = -(32 - 16);  // only the final padding is missing: accepted, like llama.cpp
    EXPECT_NO_THROW((void)GgufFile::parse_owned(f.build()));
}

TEST(GgufRules, R16_NoDataSectionAtAll) {
    RawFile f = valid_raw_file();
    auto bytes = f.build();
    bytes.resize(f.offset_at[1] + 8);  // ends right after the last tensor info
    expect_rule(bytes, Rule::DataBounds, f.offset_at[0], "tensor_info[0].offset");
}

TEST(GgufRules, R16_PaddedSizeOverflow) {
    RawFile f = valid_raw_file();
    f.tensors[1].ne = {(int64_t{1} << 62) - 1};  // 2^64 - 4 bytes: fits, but padding to 32 overflows
    auto bytes = f.build();
    expect_rule(bytes, Rule::DataBounds, f.offset_at[1], "tensor_info[1].offset");
}

TEST(GgufRules, R16_RunningSumOverflow) {
    RawFile f = valid_raw_file();
    f.tensors[0].ne = {int64_t{1} << 61, 1};  // 2^63 bytes each
    f.tensors[1].ne = {int64_t{1} << 61};
    f.tensors[1].offset = uint64_t{1} << 63;
    f.tensors[0].data_bytes = f.tensors[1].data_bytes = 0;
    auto bytes = f.build();
    const auto msg = expect_rule(bytes, Rule::DataBounds, f.offset_at[1], "tensor_info[1].offset");
    EXPECT_TRUE(contains(msg, "overflows")) << msg;
}

// ---- truncation ----
TEST(GgufTruncation, KvTypeMissing) {
    Bytes b;
    b.raw("GGUF").u32(3).i64(0).i64(1).str("abcd");  // 12 bytes of KV: the count check passes
    const auto msg = expect_rule(b.vec(), Rule::Truncated, 36, "kv[0] 'abcd'.type");
    EXPECT_TRUE(contains(msg, "truncated")) << msg;
}

TEST(GgufTruncation, ScalarValueCut) {
    Bytes b;
    b.raw("GGUF").u32(3).i64(0).i64(1).str("ab").i32(10).u32(7);  // UINT64 value with only 4 bytes
    expect_rule(b.vec(), Rule::Truncated, 24 + 10 + 4, "kv[0] 'ab'");
}

TEST(GgufTruncation, TensorInfoNdimsMissing) {
    Bytes b;
    b.raw("GGUF").u32(3).i64(1).i64(0).str("0123456789abcdef");  // exactly the 24-byte minimum
    expect_rule(b.vec(), Rule::Truncated, 48, "tensor_info[0].n_dims");
}

TEST(GgufTruncation, TensorInfoDimsCut) {
    Bytes b;
    b.raw("GGUF").u32(3).i64(1).i64(0).str("t").u32(4).i64(32).i64(1);  // 2 of 4 dims present
    expect_rule(b.vec(), Rule::Truncated, 24 + 9 + 4 + 16, "tensor_info[0].ne[2]");
}

// Every strict prefix of a valid file is refused with a GgufError, never a crash or a read past it.
TEST(GgufTruncation, EveryPrefixIsRefused) {
    RawFile f = valid_raw_file();
    f.kvs.push_back({"tokenizer.ggml.tokens", 9, Bytes().i32(8).u64(3).str("a").str("").str("xyz").vec()});
    f.kvs.push_back({"ids", 9, Bytes().i32(5).u64(2).i32(-1).i32(7).vec()});
    const auto full = f.build();
    const uint64_t data_end = f.data_start + 256 + 16;  // the final tensor's padding is optional
    ASSERT_NO_THROW((void)GgufFile::parse(full));
    for (size_t n = 0; n < data_end; ++n) {
        std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        try {
            (void)GgufFile::parse(cut, "cut.gguf");
            ADD_FAILURE() << "prefix of " << n << " bytes was accepted";
        } catch (const GgufError& e) {
            EXPECT_LE(e.offset(), n) << e.what();
        }
    }
}

}  // namespace
}  // namespace dense::gguf
