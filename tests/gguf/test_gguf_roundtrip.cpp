// Seeded random write -> read round trips through GgufWriter and GgufFile: every KV type (arrays
// and strings with arbitrary bytes included), random tensors of every storable type and shape,
// random power-of-two alignments; everything must read back identically.
#include "common/test_paths.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <set>

namespace dense::gguf {
namespace {

using Rng = std::mt19937_64;

uint64_t uniform(Rng& rng, uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); }

std::string random_bytes(Rng& rng, size_t max_len) {
    std::string s(uniform(rng, 0, max_len), '\0');
    for (auto& c : s) c = static_cast<char>(uniform(rng, 0, 255));
    return s;
}

// What the test wrote, with storage the expected Values can point into.
struct Expected {
    std::deque<std::string> strings;
    std::deque<std::vector<std::byte>> blobs;
    std::vector<std::pair<std::string, Value>> kvs;
    struct Tensor {
        std::string name;
        dense_type_id type;
        std::vector<int64_t> ne;
        std::vector<std::byte> data;
    };
    std::deque<Tensor> tensors;  // stable addresses: fill callbacks read from here
};

template <class T>
T random_scalar(Rng& rng) {
    T v;
    const uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof(T));  // any bit pattern, NaNs included for floats
    return v;
}

Value random_value(Rng& rng, ValueType type, Expected& ex) {
    switch (type) {
        case ValueType::UInt8: return Value(std::in_place_index<0>, random_scalar<uint8_t>(rng));
        case ValueType::Int8: return Value(std::in_place_index<1>, random_scalar<int8_t>(rng));
        case ValueType::UInt16: return Value(std::in_place_index<2>, random_scalar<uint16_t>(rng));
        case ValueType::Int16: return Value(std::in_place_index<3>, random_scalar<int16_t>(rng));
        case ValueType::UInt32: return Value(std::in_place_index<4>, random_scalar<uint32_t>(rng));
        case ValueType::Int32: return Value(std::in_place_index<5>, random_scalar<int32_t>(rng));
        case ValueType::Float32: return Value(std::in_place_index<6>, random_scalar<float>(rng));
        case ValueType::Bool: return Value(std::in_place_index<7>, (rng() & 1) != 0);
        case ValueType::String:
            return Value(std::in_place_index<8>, std::string_view(ex.strings.emplace_back(random_bytes(rng, 40))));
        case ValueType::UInt64: return Value(std::in_place_index<10>, random_scalar<uint64_t>(rng));
        case ValueType::Int64: return Value(std::in_place_index<11>, random_scalar<int64_t>(rng));
        case ValueType::Float64: return Value(std::in_place_index<12>, random_scalar<double>(rng));
        case ValueType::Array: {
            ArrayValue a;
            do {
                a.elem_type = static_cast<ValueType>(uniform(rng, 0, kValueTypeCount - 1));
            } while (a.elem_type == ValueType::Array);
            a.count = uniform(rng, 0, 40);
            if (a.elem_type == ValueType::String) {
                for (uint64_t i = 0; i < a.count; ++i) a.strings.emplace_back(ex.strings.emplace_back(random_bytes(rng, 12)));
            } else {
                auto& blob = ex.blobs.emplace_back(a.count * value_type_size(a.elem_type));
                for (auto& b : blob) b = static_cast<std::byte>(rng());
                if (a.elem_type == ValueType::Bool)  // bools are written as 0/1
                    for (auto& b : blob) b = static_cast<std::byte>(static_cast<uint8_t>(b) & 1);
                a.raw = blob;
            }
            return Value(std::in_place_index<9>, std::move(a));
        }
    }
    return {};
}

// Adds a value through the typed adder for its type (the generic add_value is tested separately).
void add_typed(GgufWriter& w, const std::string& key, const Value& v) {
    switch (type_of(v)) {
        case ValueType::UInt8: return w.add_u8(key, std::get<0>(v));
        case ValueType::Int8: return w.add_i8(key, std::get<1>(v));
        case ValueType::UInt16: return w.add_u16(key, std::get<2>(v));
        case ValueType::Int16: return w.add_i16(key, std::get<3>(v));
        case ValueType::UInt32: return w.add_u32(key, std::get<4>(v));
        case ValueType::Int32: return w.add_i32(key, std::get<5>(v));
        case ValueType::Float32: return w.add_f32(key, std::get<6>(v));
        case ValueType::Bool: return w.add_bool(key, std::get<7>(v));
        case ValueType::String: return w.add_string(key, std::get<8>(v));
        case ValueType::UInt64: return w.add_u64(key, std::get<10>(v));
        case ValueType::Int64: return w.add_i64(key, std::get<11>(v));
        case ValueType::Float64: return w.add_f64(key, std::get<12>(v));
        case ValueType::Array: {
            const ArrayValue& a = std::get<9>(v);
            const auto typed = [&]<class T>(T*) {
                std::vector<T> vals(a.count);
                for (uint64_t i = 0; i < a.count; ++i) vals[i] = a.at<T>(i);
                w.add_array(key, std::span<const T>(vals));
            };
            switch (a.elem_type) {
                case ValueType::UInt8: return typed(static_cast<uint8_t*>(nullptr));
                case ValueType::Int8: return typed(static_cast<int8_t*>(nullptr));
                case ValueType::UInt16: return typed(static_cast<uint16_t*>(nullptr));
                case ValueType::Int16: return typed(static_cast<int16_t*>(nullptr));
                case ValueType::UInt32: return typed(static_cast<uint32_t*>(nullptr));
                case ValueType::Int32: return typed(static_cast<int32_t*>(nullptr));
                case ValueType::Float32: return typed(static_cast<float*>(nullptr));
                case ValueType::UInt64: return typed(static_cast<uint64_t*>(nullptr));
                case ValueType::Int64: return typed(static_cast<int64_t*>(nullptr));
                case ValueType::Float64: return typed(static_cast<double*>(nullptr));
                case ValueType::Bool: {
                    std::vector<bool> vals(a.count);
                    for (uint64_t i = 0; i < a.count; ++i) vals[i] = a.at<bool>(i);
                    return w.add_bool_array(key, vals);
                }
                case ValueType::String: {
                    std::vector<std::string> vals(a.strings.begin(), a.strings.end());
                    return w.add_string_array(key, vals);
                }
                case ValueType::Array: break;
            }
        }
    }
    FAIL() << "unhandled type";
}

std::vector<dense_type_id> storable_types(const TypeTable& types) {
    std::vector<dense_type_id> out;
    for (const auto& t : types.all())
        if (t.storable && (!t.builtin || TypeTable::classify_ggml_id(t.id) == GgmlIdStatus::Supported))
            out.push_back(t.id);
    return out;
}

// Builds a random file description and the writer for it.
void make_random(Rng& rng, const TypeTable& types, Expected& ex, GgufWriter& w) {
    const uint64_t n_kv = uniform(rng, 0, 24);
    for (uint64_t i = 0; i < n_kv; ++i) {
        std::string key = random_bytes(rng, 20) + "#" + std::to_string(i);  // unique, arbitrary bytes
        const auto type = static_cast<ValueType>(uniform(rng, 0, kValueTypeCount - 1));
        Value v = random_value(rng, type, ex);
        if (rng() & 1) add_typed(w, key, v);
        else w.add_value(key, v);
        ex.kvs.emplace_back(std::move(key), std::move(v));
    }
    if (rng() % 3 != 0) {
        const auto align = static_cast<uint32_t>(1u << uniform(rng, 0, 12));
        w.set_alignment(align);
        ex.kvs.emplace_back("general.alignment", Value(std::in_place_index<4>, align));
    }
    const auto type_ids = storable_types(types);
    std::set<dense_type_id> named_pack_types;
    const uint64_t n_tensors = uniform(rng, 0, 8);
    for (uint64_t i = 0; i < n_tensors; ++i) {
        Expected::Tensor& t = ex.tensors.emplace_back();
        t.name = "t" + std::to_string(i) + "." + random_bytes(rng, 40);
        t.type = type_ids[uniform(rng, 0, type_ids.size() - 1)];
        const TypeInfo* info = types.find(t.type);
        const auto n_dims = uniform(rng, 1, 4);
        t.ne.push_back(static_cast<int64_t>(info->block_elements * uniform(rng, 0, 3)));
        for (uint64_t d = 1; d < n_dims; ++d) t.ne.push_back(static_cast<int64_t>(uniform(rng, 1, 3)));
        t.data.resize(w.tensor_bytes(t.type, t.ne));
        for (auto& b : t.data) b = static_cast<std::byte>(rng());
        if (rng() & 1) {
            w.add_tensor(t.name, t.type, t.ne, t.data);
        } else {
            const auto* src = &t.data;
            w.add_tensor(t.name, t.type, t.ne, [src](uint64_t off, std::span<std::byte> out) {
                std::copy_n(src->begin() + static_cast<std::ptrdiff_t>(off), out.size(), out.begin());
            });
        }
        // The writer names a pack type once, when its first tensor is added.
        if (!info->builtin && named_pack_types.insert(t.type).second)
            ex.kvs.emplace_back("dense.type." + std::to_string(t.type),
                                Value(std::in_place_index<8>, std::string_view(info->name)));
    }
}

void check_same(const Expected& ex, const GgufFile& f, uint32_t alignment) {
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), alignment);
    ASSERT_EQ(f.kvs().size(), ex.kvs.size());
    for (size_t i = 0; i < ex.kvs.size(); ++i) {
        const KeyValue& kv = f.kvs()[i];
        EXPECT_EQ(kv.key, ex.kvs[i].first) << "kv " << i;
        EXPECT_TRUE(same_value(kv.value, ex.kvs[i].second))
            << "kv " << i << ": " << describe_value(kv.value) << " vs " << describe_value(ex.kvs[i].second);
        if (i == 0) {
            EXPECT_EQ(kv.offset, 24u);
        } else {
            EXPECT_GT(kv.offset, f.kvs()[i - 1].offset);
        }
        EXPECT_EQ(f.find_kv(kv.key), &kv);
    }
    ASSERT_EQ(f.tensors().size(), ex.tensors.size());
    uint64_t expected_offset = 0;
    for (size_t i = 0; i < ex.tensors.size(); ++i) {
        const TensorInfo& t = f.tensors()[i];
        const auto& e = ex.tensors[i];
        EXPECT_EQ(t.name, e.name);
        EXPECT_EQ(t.type, e.type);
        EXPECT_EQ(t.n_dims, e.ne.size());
        for (size_t d = 0; d < 4; ++d) EXPECT_EQ(t.ne[d], d < e.ne.size() ? e.ne[d] : 1);
        EXPECT_EQ(t.n_bytes, e.data.size());
        EXPECT_EQ(t.offset, expected_offset);
        EXPECT_EQ(t.file_offset, f.data_start() + t.offset);
        EXPECT_EQ(t.file_offset % alignment, 0u);
        EXPECT_EQ(t.data.size(), e.data.size());
        EXPECT_TRUE(std::equal(t.data.begin(), t.data.end(), e.data.begin())) << "tensor " << i << " data";
        if (i > 0) {
            EXPECT_GT(t.info_offset, f.tensors()[i - 1].info_offset);
        }
        EXPECT_EQ(f.find_tensor(t.name), &t);
        expected_offset += (t.n_bytes + alignment - 1) / alignment * alignment;
    }
    if (!ex.tensors.empty()) {
        EXPECT_EQ(f.data_start() % alignment, 0u);
    }
    EXPECT_EQ(f.file_size(), f.data_start() + expected_offset);
}

TEST(GgufRoundTrip, RandomFiles) {
    TypeTable types;  // a pack format takes part too
    types.register_runtime("acme.q5x", 64, 40, DENSE_TYPE_Q8_K);
    for (uint64_t seed = 1; seed <= 300; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Rng rng(seed);
        Expected ex;
        GgufWriter w(types);
        make_random(rng, types, ex, w);
        const auto bytes = w.write_to_bytes();
        ASSERT_EQ(bytes.size(), w.file_size());
        const GgufFile f = GgufFile::parse(bytes, "roundtrip.gguf", types);
        check_same(ex, f, w.alignment());
        if (HasFatalFailure() || HasNonfatalFailure()) break;
    }
}

TEST(GgufRoundTrip, FileAndBytesAgreeAndFillIsChunked) {
    Rng rng(77);
    GgufWriter w;
    w.set_alignment(64);
    w.add_string("general.architecture", "qwen35");
    // 5 MiB tensor through a fill callback: more than one chunk.
    const int64_t cols = 1280, rows = 1024;
    std::vector<uint64_t> offsets;
    w.add_tensor("big.weight", DENSE_TYPE_F32, {cols, rows}, [&](uint64_t off, std::span<std::byte> out) {
        offsets.push_back(off);
        EXPECT_LE(out.size(), GgufWriter::kFillChunkBytes);
        for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>((off + i) * 131 % 251);
    });
    std::vector<std::byte> small(34 * 2);
    for (auto& b : small) b = static_cast<std::byte>(rng());
    w.add_tensor("small.weight", DENSE_TYPE_Q8_0, {64}, small);

    const auto dir = test::scratch_dir("gguf-writer");
    const auto path = dir / "out.gguf";
    w.write_to_file(path);
    EXPECT_EQ(offsets, (std::vector<uint64_t>{0, GgufWriter::kFillChunkBytes}));
    const auto bytes = w.write_to_bytes();
    const GgufFile f = GgufFile::open(path);
    ASSERT_EQ(f.file_size(), bytes.size());
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), f.bytes().begin()));
    const TensorInfo* big = f.find_tensor("big.weight");
    ASSERT_NE(big, nullptr);
    for (uint64_t i = 0; i < big->n_bytes; i += 4099)
        ASSERT_EQ(big->data[i], static_cast<std::byte>(i * 131 % 251)) << i;
    EXPECT_TRUE(std::equal(small.begin(), small.end(), f.find_tensor("small.weight")->data.begin()));
    std::filesystem::remove_all(dir);
}

TEST(GgufRoundTrip, WriterRefusesMisuse) {
    GgufWriter w;
    w.add_u32("k", 1);
    const auto usage = [](auto&& f) {
        try {
            f();
            ADD_FAILURE() << "accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
        }
    };
    const std::vector<std::byte> four(4);
    usage([&] { w.add_u32("k", 2); });
    usage([&] { w.add_string("", "x"); });
    usage([&] { w.set_alignment(48); });
    usage([&] { w.add_i32("general.alignment", 32); });
    usage([&] { w.add_string_array("general.alignment", std::vector<std::string>{"32"}); });
    usage([&] { w.add_tensor(std::string(64, 'x'), DENSE_TYPE_F32, {1}, four); });
    usage([&] { w.add_tensor("t", DENSE_TYPE_F32, {2}, four); });            // wrong data size
    usage([&] { w.add_tensor("t", DENSE_TYPE_Q4_K, {100}, four); });         // not a block multiple
    usage([&] { w.add_tensor("t", DENSE_TYPE_Q8_K, {256}, four); });         // activation-only
    usage([&] { w.add_tensor("t", 2 /* q4_0 */, {32}, four); });             // unsupported
    usage([&] { w.add_tensor("t", DENSE_TYPE_F32, {1, 1, 1, 1, 1}, four); });
    usage([&] { w.add_tensor("t", DENSE_TYPE_F32, {-1}, four); });
    w.add_tensor("t", DENSE_TYPE_F32, {1}, four);
    usage([&] { w.add_tensor("t", DENSE_TYPE_F32, {1}, four); });            // duplicate
}

TEST(GgufRoundTrip, WriteErrorsAreIoAndLeaveNoFile) {
    GgufWriter w;
    w.add_tensor("t", DENSE_TYPE_F32, {8}, [](uint64_t, std::span<std::byte>) { throw Error(ErrorKind::Io, "boom"); });
    const auto dir = test::scratch_dir("gguf-writer-fail");
    EXPECT_THROW(w.write_to_file(dir / "x.gguf"), Error);
    EXPECT_FALSE(std::filesystem::exists(dir / "x.gguf"));
    try {
        w.write_to_file("/nonexistent-dir/x.gguf");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Io);
        EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.gguf"), std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dense::gguf
