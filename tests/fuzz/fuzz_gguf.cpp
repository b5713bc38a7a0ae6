// libFuzzer harness for the GGUF parser: any input must either parse or raise GgufError. Anything
// else (another exception, a crash, a sanitizer report) is a bug. A file that parses is also
// exercised: every byte it points at is read, every typed getter is tried, and it is copied through
// GgufWriter and parsed again, which must give the same metadata and tensors.
#include "fuzz_types.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace dense::gguf::fuzz {
namespace {

[[noreturn]] void bug(const std::string& what) {
    std::fprintf(stderr, "fuzz_gguf: BUG: %s\n", what.c_str());
    std::abort();  // libFuzzer records the input as a crash
}

volatile uint64_t g_sink = 0;  // keeps the reads below from being optimised away

void touch(std::span<const std::byte> bytes) {
    uint64_t sum = 0;
    for (std::byte b : bytes) sum += static_cast<uint8_t>(b);
    g_sink = g_sink + sum;
}

void touch(std::string_view s) { touch(std::as_bytes(std::span<const char>(s.data(), s.size()))); }

// Calls `f`; a Model error (wrong type for that getter) is an expected answer.
template <class F>
void try_getter(F&& f) {
    try {
        f();
    } catch (const GgufError& e) {
        bug(std::string("getter raised a format error: ") + e.what());
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Model) bug(std::string("getter raised a non-model error: ") + e.what());
    }
}

void exercise_getters(const GgufFile& f) {
    for (const KeyValue& kv : f.kvs()) {
        touch(kv.key);
        if (f.find_kv(kv.key) != &kv) bug("find_kv does not return the KV itself");
        if (const auto* s = std::get_if<std::string_view>(&kv.value)) touch(*s);
        if (const auto* a = std::get_if<ArrayValue>(&kv.value)) {
            touch(a->raw);
            for (auto s : a->strings) touch(s);
        }
        const std::string_view k = kv.key;
        try_getter([&] { (void)f.get_u8(k); });
        try_getter([&] { (void)f.get_i16_opt(k); });
        try_getter([&] { (void)f.get_u32(k); });
        try_getter([&] { (void)f.get_i64(k); });
        try_getter([&] { (void)f.get_f32(k); });
        try_getter([&] { (void)f.get_bool(k); });
        try_getter([&] { (void)f.get_string(k); });
        try_getter([&] { (void)f.get_i32_array(k); });
        try_getter([&] { (void)f.get_u32_array(k); });
        try_getter([&] { (void)f.get_bool_array(k); });
        try_getter([&] { (void)f.get_f32_array(k); });
        try_getter([&] { (void)f.get_string_array(k); });
        try_getter([&] { (void)describe_value(kv.value); });
    }
}

bool is_type_key(std::string_view key) { return key.substr(0, kRuntimeTypeKeyPrefix.size()) == kRuntimeTypeKeyPrefix; }

// Copies `f` through the writer and checks the copy reads back the same. `dense.type.*` keys are
// left to the writer, which names the pack types it writes itself.
void round_trip(const GgufFile& f) {
    GgufWriter w(fuzz_type_table());
    for (const KeyValue& kv : f.kvs())
        if (!is_type_key(kv.key)) w.add_value(std::string(kv.key), kv.value);
    for (const TensorInfo& t : f.tensors())
        w.add_tensor(std::string(t.name), t.type, std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), t.data);
    const auto bytes = w.write_to_bytes();
    std::optional<GgufFile> copy;
    try {
        copy.emplace(GgufFile::parse(bytes, "copy.gguf", fuzz_type_table()));
    } catch (const GgufError& e) {
        bug(std::string("the writer's copy of an accepted file is refused: ") + e.what());
    }
    const GgufFile& g = *copy;

    std::vector<const KeyValue*> a, b;
    for (const KeyValue& kv : f.kvs())
        if (!is_type_key(kv.key)) a.push_back(&kv);
    for (const KeyValue& kv : g.kvs())
        if (!is_type_key(kv.key)) b.push_back(&kv);
    if (a.size() != b.size()) bug("round trip changed the KV count");
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i]->key != b[i]->key || !same_value(a[i]->value, b[i]->value))
            bug("round trip changed kv[" + std::to_string(i) + "] '" + printable(a[i]->key) + "'");
    if (g.alignment() != f.alignment()) bug("round trip changed the alignment");
    if (g.tensors().size() != f.tensors().size()) bug("round trip changed the tensor count");
    for (size_t i = 0; i < f.tensors().size(); ++i) {
        const TensorInfo& x = f.tensors()[i];
        const TensorInfo& y = g.tensors()[i];
        if (x.name != y.name || x.type != y.type || x.n_dims != y.n_dims || x.ne != y.ne || x.n_bytes != y.n_bytes ||
            x.offset != y.offset || !std::equal(x.data.begin(), x.data.end(), y.data.begin(), y.data.end()))
            bug("round trip changed tensor " + std::to_string(i));
    }
}

void exercise(const GgufFile& f) {
    if (f.data_start() > f.file_size()) bug("data_start past the end of the file");
    for (const TensorInfo& t : f.tensors()) {
        touch(t.name);
        touch(t.data);  // ASan flags any span that leaves the input buffer
        if (t.file_offset + t.n_bytes > f.file_size() || t.data.size() != t.n_bytes) bug("tensor span out of range");
        if (f.find_tensor(t.name) != &t) bug("find_tensor does not return the tensor itself");
    }
    exercise_getters(f);
    round_trip(f);
}

}  // namespace
}  // namespace dense::gguf::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace dense::gguf;
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    try {
        const GgufFile f = GgufFile::parse(bytes, "fuzz.gguf", fuzz::fuzz_type_table());
        fuzz::exercise(f);
    } catch (const GgufError&) {
        return 0;  // a refused file: the expected outcome for most inputs
    } catch (const std::exception& e) {
        fuzz::bug(std::string("unexpected exception: ") + e.what());
    } catch (...) {
        fuzz::bug("unexpected non-standard exception");
    }
    return 0;
}
