// Writes the GGUF fuzzer's seed corpus into OUT_DIR:
//   - small valid files from GgufWriter covering every value type, every storable tensor type, a pack
//     type (dense.type.<id>), several alignments, a vocab-only file and a GGUF v2 header;
//   - "miniatures" of the real test files (same keys and tensor names, arrays cut to 16 elements,
//     tensors cut to at most 4 x 4 x ...), small enough for the fuzzer's max_len;
//   - the real test files themselves (libFuzzer reads only their first max_len bytes).
// Usage: fuzz_gguf_corpus OUT_DIR TESTS_DATA_DIR
#include "fuzz_types.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;
using namespace dense;
using namespace dense::gguf;

namespace {

void save(const fs::path& path, const std::vector<std::byte>& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw Error(ErrorKind::Io, "cannot write " + path.string());
}

std::vector<std::byte> random_blob(std::mt19937& rng, uint64_t n) {
    std::vector<std::byte> v(n);
    for (auto& b : v) b = static_cast<std::byte>(rng());
    return v;
}

void add_all_value_types(GgufWriter& w) {
    w.add_string("general.architecture", "qwen35");
    w.add_u8("t.u8", 7);
    w.add_i8("t.i8", -7);
    w.add_u16("split.count", 1);
    w.add_i16("t.i16", -300);
    w.add_u32("qwen35.block_count", 2);
    w.add_i32("split.tensors.count", 3);
    w.add_f32("qwen35.attention.layer_norm_rms_epsilon", 1e-6f);
    w.add_bool("tokenizer.ggml.add_bos_token", false);
    w.add_u64("t.u64", 1ull << 40);
    w.add_i64("t.i64", -(1ll << 40));
    w.add_f64("t.f64", 0.125);
    const std::vector<int32_t> sections{11, 11, 10, 0};
    w.add_array("qwen35.rope.dimension_sections", std::span<const int32_t>(sections));
    const std::vector<uint32_t> u32s{1, 2, 0xFFFFFFFFu};
    w.add_array("t.u32s", std::span<const uint32_t>(u32s));
    const std::vector<float> f32s{0.5f, -1.0f};
    w.add_array("t.f32s", std::span<const float>(f32s));
    const std::vector<uint8_t> u8s{1, 2, 3};
    w.add_array("t.u8s", std::span<const uint8_t>(u8s));
    const std::vector<double> f64s{1e300};
    w.add_array("t.f64s", std::span<const double>(f64s));
    w.add_bool_array("t.bools", {true, false});
    const std::vector<std::string> tokens{"!", "\"", "\xc4\xa0the", std::string("\0\xff", 2), ""};
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_string_array("tokenizer.ggml.merges", std::vector<std::string>{"\xc4\xa0 t", "h e"});
}

void add_tensors(GgufWriter& w, std::mt19937& rng, const TypeTable& types) {
    int i = 0;
    for (const TypeInfo& t : types.all()) {
        const bool ok = t.storable && (!t.builtin || TypeTable::classify_ggml_id(t.id) == GgmlIdStatus::Supported);
        if (!ok) continue;
        const std::vector<int64_t> ne{static_cast<int64_t>(t.block_elements), 2};
        w.add_tensor("blk." + std::to_string(i++) + "." + t.name + ".weight", t.id, ne,
                     random_blob(rng, w.tensor_bytes(t.id, ne)));
    }
}

// Same keys and tensor names as `f`, with arrays cut to 16 elements and dims cut to 4.
std::vector<std::byte> miniature(const GgufFile& f) {
    GgufWriter w;
    for (const KeyValue& kv : f.kvs()) {
        Value v = kv.value;
        if (auto* a = std::get_if<ArrayValue>(&v); a != nullptr && a->count > 16) {
            a->count = 16;
            if (a->elem_type == ValueType::String) a->strings.resize(16);
            else a->raw = a->raw.first(16 * value_type_size(a->elem_type));
        }
        w.add_value(std::string(kv.key), v);
    }
    for (const TensorInfo& t : f.tensors()) {
        const TypeInfo* info = global_type_table().find(t.type);
        std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
        for (size_t j = 0; j < ne.size(); ++j) {
            const int64_t keep = j == 0 ? static_cast<int64_t>(info->block_elements) : 4;
            ne[j] = std::min(ne[j], keep);
        }
        // Every dimension shrank, so the first n bytes exist.
        w.add_tensor(std::string(t.name), t.type, ne, t.data.first(w.tensor_bytes(t.type, ne)));
    }
    return w.write_to_bytes();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s OUT_DIR TESTS_DATA_DIR\n", argv[0]);
        return 2;
    }
    try {
        const fs::path out = argv[1], data = argv[2];
        fs::create_directories(out);
        std::mt19937 rng(1234);
        const TypeTable& types = fuzz::fuzz_type_table();

        {  // every value type, every storable tensor type (the pack type included), alignment 32
            GgufWriter w(types);
            add_all_value_types(w);
            add_tensors(w, rng, types);
            save(out / "all-types.gguf", w.write_to_bytes());
            auto v2 = w.write_to_bytes();
            v2[4] = std::byte{2};  // GGUF v2 has the same layout
            save(out / "all-types-v2.gguf", v2);
        }
        for (uint32_t align : {1u, 64u, 256u}) {
            GgufWriter w(types);
            w.set_alignment(align);
            w.add_string("general.architecture", "qwen35");
            w.add_tensor("token_embd.weight", DENSE_TYPE_Q4_K, {256, 3}, random_blob(rng, 144 * 3));
            w.add_tensor("output_norm.weight", DENSE_TYPE_F32, {5}, random_blob(rng, 20));
            w.add_tensor("empty", DENSE_TYPE_F16, {0, 4}, std::span<const std::byte>());
            save(out / ("align-" + std::to_string(align) + ".gguf"), w.write_to_bytes());
        }
        {  // vocab-only: no tensors, no data section
            GgufWriter w(types);
            add_all_value_types(w);
            save(out / "vocab-only.gguf", w.write_to_bytes());
        }
        {
            GgufWriter w(types);
            save(out / "empty.gguf", w.write_to_bytes());
        }
        for (const char* rel : {"vocab/ggml-vocab-qwen35.gguf", "golden-tiny/tiny-qwen35-f32.gguf"}) {
            const GgufFile f = GgufFile::open(data / rel);
            const std::string stem = fs::path(rel).stem().string();
            save(out / (stem + ".mini.gguf"), miniature(f));
            fs::copy_file(data / rel, out / (stem + ".gguf"), fs::copy_options::overwrite_existing);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_gguf_corpus: %s\n", e.what());
        return 1;
    }
    return 0;
}
