#include "gguf/gguf_writer.hpp"

#include "core/error.hpp"
#include "gguf/gguf_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

namespace dense::gguf {
namespace {

[[noreturn]] void misuse(const std::string& what) { throw Error(ErrorKind::Usage, "GgufWriter: " + what); }

template <class T>
void put(std::vector<std::byte>& out, T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
}

void put_string(std::vector<std::byte>& out, std::string_view s) {
    put<uint64_t>(out, s.size());
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out.insert(out.end(), p, p + s.size());
}

uint64_t pad_to(uint64_t n, uint64_t align) noexcept { return (n + align - 1) & ~(align - 1); }

bool is_power_of_two(uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

void write_zeros(const std::function<void(std::span<const std::byte>)>& out, uint64_t n) {
    static const std::array<std::byte, 4096> zeros{};
    while (n > 0) {
        const auto k = static_cast<size_t>(std::min<uint64_t>(n, zeros.size()));
        out(std::span<const std::byte>(zeros.data(), k));
        n -= k;
    }
}

}  // namespace

GgufWriter::GgufWriter(const TypeTable& types) : types_(types) {}

// ---- metadata -------------------------------------------------------------------------------------

void GgufWriter::check_new_key(const std::string& key) const {
    if (key.empty()) misuse("empty key");
    if (key.size() > kMaxStringBytes) misuse("key longer than 1 GiB");
    if (keys_.count(key) != 0) misuse("duplicate key '" + printable(key) + "'");
}

void GgufWriter::add_encoded(std::string key, ValueType type, std::vector<std::byte> value_bytes,
                             std::string string_value) {
    check_new_key(key);
    // set_alignment rewrites this KV in place, so it must never be stored as anything but UINT32.
    if (key == "general.alignment" && type != ValueType::UInt32) misuse("general.alignment must be UINT32");
    Kv kv;
    put_string(kv.encoded, key);
    put<int32_t>(kv.encoded, static_cast<int32_t>(type));
    kv.encoded.insert(kv.encoded.end(), value_bytes.begin(), value_bytes.end());
    kv.type = type;
    kv.string_value = std::move(string_value);
    kv.key = std::move(key);
    keys_.insert(kv.key);
    kvs_.push_back(std::move(kv));
}

void GgufWriter::set_alignment(uint32_t alignment) {
    if (!is_power_of_two(alignment)) misuse("alignment " + std::to_string(alignment) + " is not a power of two");
    std::vector<std::byte> value;
    put<uint32_t>(value, alignment);
    alignment_ = alignment;
    for (Kv& kv : kvs_) {
        if (kv.key == "general.alignment") {  // keep its position, replace the value
            kv.encoded.resize(kv.encoded.size() - sizeof(uint32_t));
            kv.encoded.insert(kv.encoded.end(), value.begin(), value.end());
            return;
        }
    }
    add_encoded("general.alignment", ValueType::UInt32, std::move(value));
}

namespace {
template <class T>
std::vector<std::byte> encoded(T v) {
    std::vector<std::byte> out;
    put<T>(out, v);
    return out;
}
}  // namespace

// clang-format off
void GgufWriter::add_u8(std::string key, uint8_t v) { add_value(std::move(key), Value(std::in_place_index<0>, v)); }
void GgufWriter::add_i8(std::string key, int8_t v) { add_value(std::move(key), Value(std::in_place_index<1>, v)); }
void GgufWriter::add_u16(std::string key, uint16_t v) { add_value(std::move(key), Value(std::in_place_index<2>, v)); }
void GgufWriter::add_i16(std::string key, int16_t v) { add_value(std::move(key), Value(std::in_place_index<3>, v)); }
void GgufWriter::add_u32(std::string key, uint32_t v) { add_value(std::move(key), Value(std::in_place_index<4>, v)); }
void GgufWriter::add_i32(std::string key, int32_t v) { add_value(std::move(key), Value(std::in_place_index<5>, v)); }
void GgufWriter::add_f32(std::string key, float v) { add_value(std::move(key), Value(std::in_place_index<6>, v)); }
void GgufWriter::add_bool(std::string key, bool v) { add_value(std::move(key), Value(std::in_place_index<7>, v)); }
void GgufWriter::add_string(std::string key, std::string_view v) { add_value(std::move(key), Value(std::in_place_index<8>, v)); }
void GgufWriter::add_u64(std::string key, uint64_t v) { add_value(std::move(key), Value(std::in_place_index<10>, v)); }
void GgufWriter::add_i64(std::string key, int64_t v) { add_value(std::move(key), Value(std::in_place_index<11>, v)); }
void GgufWriter::add_f64(std::string key, double v) { add_value(std::move(key), Value(std::in_place_index<12>, v)); }
// clang-format on

void GgufWriter::add_raw_array(std::string key, ValueType elem_type, const void* data, uint64_t count) {
    if (count > kMaxArrayElements) misuse("array '" + printable(key) + "' has more than 2^30 elements");
    const uint64_t size = value_type_size(elem_type);
    std::vector<std::byte> value;
    value.reserve(12 + count * size);
    put<int32_t>(value, static_cast<int32_t>(elem_type));
    put<uint64_t>(value, count);
    const auto* p = static_cast<const std::byte*>(data);
    if (count > 0) value.insert(value.end(), p, p + count * size);
    add_encoded(std::move(key), ValueType::Array, std::move(value));
}

void GgufWriter::add_bool_array(std::string key, const std::vector<bool>& values) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    add_raw_array(std::move(key), ValueType::Bool, bytes.data(), bytes.size());
}

namespace {
template <class S>
std::vector<std::byte> encode_string_array(std::span<const S> values, const std::string& key) {
    if (values.size() > kMaxArrayElements) misuse("array '" + printable(key) + "' has more than 2^30 elements");
    std::vector<std::byte> value;
    put<int32_t>(value, static_cast<int32_t>(ValueType::String));
    put<uint64_t>(value, values.size());
    for (const auto& s : values) {
        if (s.size() > kMaxStringBytes) misuse("a string in array '" + printable(key) + "' is longer than 1 GiB");
        put_string(value, s);
    }
    return value;
}
}  // namespace

void GgufWriter::add_string_array(std::string key, std::span<const std::string> values) {
    auto value = encode_string_array(values, key);
    add_encoded(std::move(key), ValueType::Array, std::move(value));
}

void GgufWriter::add_string_array(std::string key, std::span<const std::string_view> values) {
    auto value = encode_string_array(values, key);
    add_encoded(std::move(key), ValueType::Array, std::move(value));
}

void GgufWriter::add_value(std::string key, const Value& value) {
    if (key == "general.alignment") {
        const auto* a = std::get_if<uint32_t>(&value);
        if (a == nullptr) misuse("general.alignment must be UINT32");
        check_new_key(key);
        set_alignment(*a);
        return;
    }
    switch (type_of(value)) {
        case ValueType::UInt8: return add_encoded(std::move(key), ValueType::UInt8, encoded(std::get<0>(value)));
        case ValueType::Int8: return add_encoded(std::move(key), ValueType::Int8, encoded(std::get<1>(value)));
        case ValueType::UInt16: return add_encoded(std::move(key), ValueType::UInt16, encoded(std::get<2>(value)));
        case ValueType::Int16: return add_encoded(std::move(key), ValueType::Int16, encoded(std::get<3>(value)));
        case ValueType::UInt32: return add_encoded(std::move(key), ValueType::UInt32, encoded(std::get<4>(value)));
        case ValueType::Int32: return add_encoded(std::move(key), ValueType::Int32, encoded(std::get<5>(value)));
        case ValueType::Float32: return add_encoded(std::move(key), ValueType::Float32, encoded(std::get<6>(value)));
        case ValueType::Bool:
            return add_encoded(std::move(key), ValueType::Bool, encoded<uint8_t>(std::get<7>(value) ? 1 : 0));
        case ValueType::String: {
            const std::string_view s = std::get<8>(value);
            if (s.size() > kMaxStringBytes) misuse("string value of '" + printable(key) + "' is longer than 1 GiB");
            std::vector<std::byte> bytes;
            put_string(bytes, s);
            return add_encoded(std::move(key), ValueType::String, std::move(bytes), std::string(s));
        }
        case ValueType::Array: {
            const ArrayValue& a = std::get<9>(value);
            if (a.elem_type == ValueType::Array || static_cast<uint32_t>(a.elem_type) >= kValueTypeCount)
                misuse("array '" + printable(key) + "' has an invalid element type");
            if (a.elem_type == ValueType::String) {
                if (a.strings.size() != a.count) misuse("array '" + printable(key) + "': count != strings.size()");
                auto bytes = encode_string_array(std::span<const std::string_view>(a.strings), key);
                return add_encoded(std::move(key), ValueType::Array, std::move(bytes));
            }
            if (a.count > kMaxArrayElements || a.raw.size() != a.count * value_type_size(a.elem_type))
                misuse("array '" + printable(key) + "': raw size does not match count x element size");
            return add_raw_array(std::move(key), a.elem_type, a.raw.data(), a.count);
        }
        case ValueType::UInt64: return add_encoded(std::move(key), ValueType::UInt64, encoded(std::get<10>(value)));
        case ValueType::Int64: return add_encoded(std::move(key), ValueType::Int64, encoded(std::get<11>(value)));
        case ValueType::Float64: return add_encoded(std::move(key), ValueType::Float64, encoded(std::get<12>(value)));
    }
    misuse("unknown value type");
}

// ---- tensors --------------------------------------------------------------------------------------

uint64_t GgufWriter::tensor_bytes(dense_type_id type, const std::vector<int64_t>& ne) const {
    const TypeInfo* info = types_.find(type);
    if (info == nullptr || !info->storable ||
        (info->builtin && TypeTable::classify_ggml_id(type) != GgmlIdStatus::Supported))
        misuse("type id " + std::to_string(type) + " cannot be stored in a file");
    if (ne.size() > kMaxDims) misuse("more than 4 dimensions");
    std::array<int64_t, 4> dims{1, 1, 1, 1};
    int64_t elements = 1;
    for (size_t j = 0; j < ne.size(); ++j) {
        if (ne[j] < 0) misuse("negative dimension");
        if (ne[j] != 0 && elements > std::numeric_limits<int64_t>::max() / ne[j]) misuse("element count overflows");
        elements *= ne[j];
        dims[j] = ne[j];
    }
    const auto row = TypeTable::row_bytes(*info, dims[0]);
    if (!row)
        misuse("ne[0]=" + std::to_string(dims[0]) + " is not a multiple of the " + info->name + " block size " +
               std::to_string(info->block_elements));
    uint64_t bytes = *row;
    for (size_t j = 1; j < 4; ++j) {
        const auto n = static_cast<uint64_t>(dims[j]);
        if (n != 0 && bytes > std::numeric_limits<uint64_t>::max() / n) misuse("byte size overflows");
        bytes *= n;
    }
    if (bytes > std::numeric_limits<uint64_t>::max() - alignment_) misuse("byte size overflows");
    return bytes;
}

GgufWriter::Tensor& GgufWriter::add_tensor_common(std::string name, dense_type_id type,
                                                  const std::vector<int64_t>& ne) {
    if (name.size() > kMaxTensorNameBytes) misuse("tensor name '" + printable(name) + "' is longer than 63 bytes");
    if (tensor_names_.count(name) != 0) misuse("duplicate tensor name '" + printable(name) + "'");
    Tensor t;
    t.n_bytes = tensor_bytes(type, ne);
    t.file_type = type;
    t.ne = ne;
    const TypeInfo* info = types_.find(type);
    if (!info->builtin) {  // the reader maps pack ids back through their registered name
        const std::string key = std::string(kRuntimeTypeKeyPrefix) + std::to_string(type);
        const auto it = std::find_if(kvs_.begin(), kvs_.end(), [&](const Kv& kv) { return kv.key == key; });
        if (it == kvs_.end()) {
            add_string(key, info->name);
        } else if (it->type != ValueType::String || it->string_value != info->name) {
            misuse("key '" + key + "' does not name type '" + info->name + "'");
        }
    }
    t.name = std::move(name);
    tensor_names_.insert(t.name);
    tensors_.push_back(std::move(t));
    return tensors_.back();
}

void GgufWriter::add_tensor(std::string name, dense_type_id type, const std::vector<int64_t>& ne,
                            std::span<const std::byte> data) {
    if (data.size() != tensor_bytes(type, ne))
        misuse("tensor '" + printable(name) + "' data is " + std::to_string(data.size()) + " bytes, expected " +
               std::to_string(tensor_bytes(type, ne)));
    Tensor& t = add_tensor_common(std::move(name), type, ne);
    t.data.assign(data.begin(), data.end());
}

void GgufWriter::add_tensor(std::string name, dense_type_id type, const std::vector<int64_t>& ne, FillFn fill) {
    if (!fill) misuse("tensor '" + printable(name) + "' has no fill function");
    Tensor& t = add_tensor_common(std::move(name), type, ne);
    t.fill = std::move(fill);
}

// ---- layout and output ----------------------------------------------------------------------------

uint64_t GgufWriter::tensor_info_size(const Tensor& t) const noexcept {
    return 8 + t.name.size() + 4 + 8 * t.ne.size() + 4 + 8;
}

uint64_t GgufWriter::data_start() const {
    uint64_t pos = 24;
    for (const Kv& kv : kvs_) pos += kv.encoded.size();
    for (const Tensor& t : tensors_) pos += tensor_info_size(t);
    return tensors_.empty() ? pos : pad_to(pos, alignment_);
}

uint64_t GgufWriter::file_size() const {
    uint64_t size = data_start();
    for (const Tensor& t : tensors_) {
        const uint64_t padded = pad_to(t.n_bytes, alignment_);
        if (size > std::numeric_limits<uint64_t>::max() - padded) misuse("file size overflows");
        size += padded;
    }
    return size;
}

void GgufWriter::write(const std::function<void(std::span<const std::byte>)>& out) const {
    (void)file_size();  // validates that the layout does not overflow before anything is written
    std::vector<std::byte> meta;
    meta.insert(meta.end(), {std::byte{'G'}, std::byte{'G'}, std::byte{'U'}, std::byte{'F'}});
    put<uint32_t>(meta, 3);
    put<int64_t>(meta, static_cast<int64_t>(tensors_.size()));
    put<int64_t>(meta, static_cast<int64_t>(kvs_.size()));
    for (const Kv& kv : kvs_) meta.insert(meta.end(), kv.encoded.begin(), kv.encoded.end());
    uint64_t offset = 0;
    for (const Tensor& t : tensors_) {
        put_string(meta, t.name);
        put<uint32_t>(meta, static_cast<uint32_t>(t.ne.size()));
        for (int64_t n : t.ne) put<int64_t>(meta, n);
        put<int32_t>(meta, static_cast<int32_t>(t.file_type));
        put<uint64_t>(meta, offset);
        offset += pad_to(t.n_bytes, alignment_);
    }
    out(meta);
    const uint64_t start = data_start();
    write_zeros(out, start - meta.size());
    meta = {};

    std::vector<std::byte> chunk;
    for (const Tensor& t : tensors_) {
        if (!t.fill) {
            out(t.data);
        } else {
            chunk.resize(static_cast<size_t>(std::min<uint64_t>(t.n_bytes, kFillChunkBytes)));
            for (uint64_t done = 0; done < t.n_bytes;) {
                const auto n = static_cast<size_t>(std::min<uint64_t>(t.n_bytes - done, chunk.size()));
                std::span<std::byte> piece(chunk.data(), n);
                std::fill(piece.begin(), piece.end(), std::byte{0});
                t.fill(done, piece);
                out(piece);
                done += n;
            }
        }
        write_zeros(out, pad_to(t.n_bytes, alignment_) - t.n_bytes);
    }
}

std::vector<std::byte> GgufWriter::write_to_bytes() const {
    std::vector<std::byte> bytes;
    bytes.reserve(static_cast<size_t>(file_size()));
    write([&](std::span<const std::byte> piece) { bytes.insert(bytes.end(), piece.begin(), piece.end()); });
    return bytes;
}

void GgufWriter::write_to_file(const std::filesystem::path& path) const {
    const auto io_error = [&](const char* what, int err) {
        return Error(ErrorKind::Io, path.string() + ": cannot " + what + ": " + std::strerror(err));
    };
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!file) throw io_error("create", errno);
    std::setvbuf(file.get(), nullptr, _IOFBF, size_t{1} << 20);
    try {
        write([&](std::span<const std::byte> piece) {
            if (!piece.empty() && std::fwrite(piece.data(), 1, piece.size(), file.get()) != piece.size())
                throw io_error("write", errno);
        });
        std::FILE* f = file.release();
        if (std::fclose(f) != 0) throw io_error("close", errno);
    } catch (...) {
        file.reset();
        std::error_code ignored;
        std::filesystem::remove(path, ignored);  // never leave a half-written model behind
        throw;
    }
}

}  // namespace dense::gguf
