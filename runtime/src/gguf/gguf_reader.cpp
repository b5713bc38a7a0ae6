// Parsing and validation of GGUF v2/v3 (spec/gguf-format.md, rules 1-16 of section 6).
//
// Every size or count read from the file is checked against the bytes that remain before it is
// used, and every arithmetic step on file values is overflow-checked, so a hostile file can only
// ever produce a GgufError (never an out-of-bounds read, a huge allocation or a crash).
#include "gguf/gguf_file.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace dense::gguf {
namespace {

constexpr uint64_t kHeaderBytes = 24;
constexpr uint64_t kMinKvBytes = 12;          // spec rule 3 lower bound per KV
constexpr uint64_t kMinTensorInfoBytes = 24;  // name length + n_dims + type + offset
constexpr size_t kReserveCap = 1u << 16;      // never trust a count for a big up-front allocation

// Rule 14 asks for tensor sizes that fit size_t; with a 64-bit size_t the uint64 checks cover it.
static_assert(sizeof(size_t) >= sizeof(uint64_t));

bool is_power_of_two(uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

std::string quoted(std::string_view s) { return "'" + printable(s) + "'"; }

}  // namespace

class Reader {
public:
    Reader(GgufFile& out, const TypeTable& types) : f_(out), types_(types), b_(out.bytes_), path_(out.path_) {}

    void run() {
        read_header();
        read_kvs();
        read_tensor_infos();
        place_data();
    }

private:
    // ---- primitives ----

    [[noreturn]] void fail(Rule rule, uint64_t offset, std::string field, std::string detail) const {
        throw GgufError(rule, path_, offset, std::move(field), std::move(detail));
    }

    uint64_t remaining() const noexcept { return b_.size() - pos_; }

    // Reads a fixed-size little-endian field; `field` is a callable producing its name (built only
    // when an error needs it, because this runs for every vocabulary string).
    template <class T, class Field>
    T read(const Field& field) {
        if (remaining() < sizeof(T)) {
            fail(Rule::Truncated, pos_, field(),
                 "file is truncated: this " + std::to_string(sizeof(T)) + "-byte field needs bytes up to " +
                     std::to_string(pos_ + sizeof(T)) + " but the file has " + std::to_string(b_.size()) +
                     " bytes");
        }
        T v;
        std::memcpy(&v, b_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    template <class Field>
    std::string_view read_string(const Field& field) {
        const uint64_t at = pos_;
        const auto len = read<uint64_t>(field);
        if (len > kMaxStringBytes)
            fail(Rule::StringLength, at, field(),
                 "string length " + std::to_string(len) + " exceeds the 1 GiB limit");
        if (len > remaining())
            fail(Rule::StringLength, at, field(),
                 "string length " + std::to_string(len) + " exceeds the " + std::to_string(remaining()) +
                     " bytes left in the file (truncated?)");
        std::string_view s(reinterpret_cast<const char*>(b_.data() + pos_), static_cast<size_t>(len));
        pos_ += len;
        return s;
    }

    // ---- header (rules 1-3) ----

    void read_header() {
        if (b_.size() < kHeaderBytes)
            fail(Rule::Header, 0, "header",
                 "file is " + std::to_string(b_.size()) + " bytes, shorter than the 24-byte GGUF header");
        if (std::memcmp(b_.data(), "GGUF", 4) != 0)
            fail(Rule::Header, 0, "header.magic",
                 "bad magic " + quoted(std::string_view(reinterpret_cast<const char*>(b_.data()), 4)) +
                     ", expected 'GGUF'");
        pos_ = 4;
        const auto version = read<uint32_t>([] { return std::string("header.version"); });
        const std::string vfield = "header.version";
        if (version == 0) fail(Rule::Version, 4, vfield, "version 0 is invalid");
        if ((version & 0xFFFFu) == 0)
            fail(Rule::Version, 4, vfield,
                 "version field " + std::to_string(version) +
                     " looks byte-swapped: this is a big-endian GGUF, only little-endian is supported");
        if (version == 1) fail(Rule::Version, 4, vfield, "GGUF version 1 (32-bit counts) is not supported");
        if (version > 3)
            fail(Rule::Version, 4, vfield, "GGUF version " + std::to_string(version) + " is newer than 3");
        f_.version_ = version;

        const auto n_tensors = read<int64_t>([] { return std::string("header.tensor_count"); });
        const auto n_kv = read<int64_t>([] { return std::string("header.metadata_kv_count"); });
        if (n_tensors < 0)
            fail(Rule::Counts, 8, "header.tensor_count", "tensor count " + std::to_string(n_tensors) + " is negative");
        if (n_kv < 0)
            fail(Rule::Counts, 16, "header.metadata_kv_count", "metadata KV count " + std::to_string(n_kv) + " is negative");
        const uint64_t rest = remaining();
        n_kv_ = static_cast<uint64_t>(n_kv);
        n_tensors_ = static_cast<uint64_t>(n_tensors);
        if (n_kv_ > rest / kMinKvBytes)
            fail(Rule::Counts, 16, "header.metadata_kv_count",
                 "metadata KV count " + std::to_string(n_kv_) + " cannot fit in the " + std::to_string(rest) +
                     " bytes after the header (each KV needs at least 12)");
        if (n_tensors_ > rest / kMinTensorInfoBytes)
            fail(Rule::Counts, 8, "header.tensor_count",
                 "tensor count " + std::to_string(n_tensors_) + " cannot fit in the " + std::to_string(rest) +
                     " bytes after the header (each tensor info needs at least 24)");
        // Both products are <= rest now, so the sum cannot overflow.
        if (n_kv_ * kMinKvBytes + n_tensors_ * kMinTensorInfoBytes > rest)
            fail(Rule::Counts, 8, "header.tensor_count",
                 std::to_string(n_kv_) + " KVs and " + std::to_string(n_tensors_) + " tensor infos cannot fit in the " +
                     std::to_string(rest) + " bytes after the header");
    }

    // ---- metadata (rules 4-9) ----

    void read_kvs() {
        f_.kvs_.reserve(std::min<uint64_t>(n_kv_, kReserveCap));
        for (uint64_t i = 0; i < n_kv_; ++i) {
            const uint64_t kv_offset = pos_;
            const std::string idx = "kv[" + std::to_string(i) + "]";
            const std::string_view key = read_string([&] { return idx + ".key"; });
            if (key.empty()) fail(Rule::Key, kv_offset, idx + ".key", "empty key");
            if (const auto it = f_.kv_index_.find(key); it != f_.kv_index_.end())
                fail(Rule::Key, kv_offset, idx + " " + quoted(key),
                     "duplicate key " + quoted(key) + " (first at kv[" + std::to_string(it->second) + "], byte " +
                         std::to_string(f_.kvs_[it->second].offset) + ")");
            const std::string name = idx + " " + quoted(key);

            const uint64_t type_offset = pos_;
            const auto type_id = read<int32_t>([&] { return name + ".type"; });
            if (type_id < 0 || static_cast<uint32_t>(type_id) >= kValueTypeCount)
                fail(Rule::ValueType, type_offset, name + ".type",
                     "key " + quoted(key) + " has unknown value type " + std::to_string(type_id) + " (valid: 0..12)");
            const auto type = static_cast<ValueType>(type_id);
            const uint64_t value_offset = pos_;
            KeyValue kv{key, read_value(type, name), kv_offset};

            if (key == "general.alignment") check_alignment(kv, name, value_offset);
            f_.kv_index_.emplace(key, f_.kvs_.size());
            f_.kvs_.push_back(std::move(kv));
        }
    }

    Value read_value(ValueType type, const std::string& name) {
        auto field = [&] { return name; };
        switch (type) {
            case ValueType::UInt8: return Value(std::in_place_index<0>, read<uint8_t>(field));
            case ValueType::Int8: return Value(std::in_place_index<1>, read<int8_t>(field));
            case ValueType::UInt16: return Value(std::in_place_index<2>, read<uint16_t>(field));
            case ValueType::Int16: return Value(std::in_place_index<3>, read<int16_t>(field));
            case ValueType::UInt32: return Value(std::in_place_index<4>, read<uint32_t>(field));
            case ValueType::Int32: return Value(std::in_place_index<5>, read<int32_t>(field));
            case ValueType::Float32: return Value(std::in_place_index<6>, read<float>(field));
            case ValueType::Bool: return Value(std::in_place_index<7>, read<uint8_t>(field) != 0);
            case ValueType::String: return Value(std::in_place_index<8>, read_string(field));
            case ValueType::Array: return Value(std::in_place_index<9>, read_array(name));
            case ValueType::UInt64: return Value(std::in_place_index<10>, read<uint64_t>(field));
            case ValueType::Int64: return Value(std::in_place_index<11>, read<int64_t>(field));
            case ValueType::Float64: return Value(std::in_place_index<12>, read<double>(field));
        }
        fail(Rule::ValueType, pos_, name, "unknown value type");  // unreachable: the caller checked
    }

    ArrayValue read_array(const std::string& name) {
        const uint64_t etype_offset = pos_;
        const auto etype = read<int32_t>([&] { return name + ".elem_type"; });
        if (etype == static_cast<int32_t>(ValueType::Array))
            fail(Rule::ArrayElementType, etype_offset, name + ".elem_type", "nested arrays are not allowed");
        if (etype < 0 || static_cast<uint32_t>(etype) >= kValueTypeCount)
            fail(Rule::ArrayElementType, etype_offset, name + ".elem_type",
                 "unknown array element type " + std::to_string(etype));
        ArrayValue a;
        a.elem_type = static_cast<ValueType>(etype);
        const uint64_t count_offset = pos_;
        a.count = read<uint64_t>([&] { return name + ".count"; });
        if (a.count > kMaxArrayElements)
            fail(Rule::ArrayCount, count_offset, name + ".count",
                 "array count " + std::to_string(a.count) + " exceeds the limit of 2^30 elements");
        const uint64_t elem_size = value_type_size(a.elem_type);
        const uint64_t min_size = elem_size == 0 ? 8 : elem_size;  // a string needs at least its length
        if (a.count > remaining() / min_size)
            fail(Rule::ArrayCount, count_offset, name + ".count",
                 "array of " + std::to_string(a.count) + " " + std::string(value_type_name(a.elem_type)) +
                     " elements needs at least " + std::to_string(a.count) + " x " + std::to_string(min_size) +
                     " bytes but only " + std::to_string(remaining()) + " are left");
        if (elem_size != 0) {
            a.raw = b_.subspan(pos_, a.count * elem_size);
            pos_ += a.count * elem_size;
        } else {
            a.strings.reserve(a.count);  // bounded by remaining() / 8 above
            for (uint64_t j = 0; j < a.count; ++j)
                a.strings.push_back(read_string([&] { return name + "[" + std::to_string(j) + "]"; }));
        }
        return a;
    }

    void check_alignment(const KeyValue& kv, const std::string& name, uint64_t value_offset) {
        if (kv.type() != ValueType::UInt32)
            fail(Rule::Alignment, kv.offset, name,
                 "general.alignment has type " + std::string(value_type_name(kv.type())) + ", it must be UINT32");
        const uint32_t a = std::get<uint32_t>(kv.value);
        if (!is_power_of_two(a))
            fail(Rule::Alignment, value_offset, name,
                 "general.alignment " + std::to_string(a) + " is not a non-zero power of two");
        f_.alignment_ = a;
    }

    // ---- tensor infos (rules 10-15) ----

    void read_tensor_infos() {
        f_.tensors_.reserve(std::min<uint64_t>(n_tensors_, kReserveCap));
        offset_fields_.reserve(std::min<uint64_t>(n_tensors_, kReserveCap));
        const uint64_t align = f_.alignment_;
        uint64_t expected = 0;  // running padded sum = where the next tensor must start (rule 15)
        for (uint64_t i = 0; i < n_tensors_; ++i) {
            TensorInfo t;
            t.info_offset = pos_;
            const std::string idx = "tensor_info[" + std::to_string(i) + "]";
            t.name = read_string([&] { return idx + ".name"; });
            if (t.name.size() > kMaxTensorNameBytes)
                fail(Rule::TensorName, t.info_offset, idx + ".name",
                     "tensor name " + quoted(t.name) + " is " + std::to_string(t.name.size()) +
                         " bytes, the limit is 63");
            if (const auto it = f_.tensor_index_.find(t.name); it != f_.tensor_index_.end())
                fail(Rule::TensorName, t.info_offset, idx + ".name",
                     "duplicate tensor name " + quoted(t.name) + " (first at tensor_info[" +
                         std::to_string(it->second) + "])");
            const std::string tname = "tensor " + quoted(t.name);

            const uint64_t ndims_offset = pos_;
            t.n_dims = read<uint32_t>([&] { return idx + ".n_dims"; });
            if (t.n_dims > kMaxDims)
                fail(Rule::TensorDims, ndims_offset, idx + ".n_dims",
                     tname + " has n_dims " + std::to_string(t.n_dims) + ", at most 4 are allowed");
            std::array<uint64_t, 4> ne_offset{};
            int64_t n_elements = 1;
            for (uint32_t j = 0; j < t.n_dims; ++j) {
                ne_offset[j] = pos_;
                const std::string nfield = idx + ".ne[" + std::to_string(j) + "]";
                t.ne[j] = read<int64_t>([&] { return nfield; });
                if (t.ne[j] < 0)
                    fail(Rule::TensorDims, ne_offset[j], nfield,
                         tname + " ne[" + std::to_string(j) + "]=" + std::to_string(t.ne[j]) + " is negative");
                if (t.ne[j] != 0 && n_elements > std::numeric_limits<int64_t>::max() / t.ne[j])
                    fail(Rule::TensorDims, ne_offset[j], nfield,
                         tname + " element count overflows int64 at ne[" + std::to_string(j) + "]=" +
                             std::to_string(t.ne[j]));
                n_elements *= t.ne[j];
            }

            const uint64_t type_offset = pos_;
            const auto type_id = read<int32_t>([&] { return idx + ".type"; });
            const TypeInfo& info = resolve_type(type_id, tname, idx + ".type", type_offset);
            t.type = info.id;
            t.file_type_id = static_cast<uint32_t>(type_id);

            const std::string ne0_field = idx + ".ne[0]";
            const uint64_t ne0_offset = t.n_dims > 0 ? ne_offset[0] : ndims_offset;
            if (t.ne[0] % info.block_elements != 0)
                fail(Rule::BlockMultiple, ne0_offset, ne0_field,
                     tname + " ne[0]=" + std::to_string(t.ne[0]) + " is not a multiple of the " + info.name +
                         " block size " + std::to_string(info.block_elements));
            t.n_bytes = tensor_bytes(t, info, tname, idx, t.info_offset);

            const uint64_t offset_offset = pos_;
            t.offset = read<uint64_t>([&] { return idx + ".offset"; });
            if (t.offset != expected)
                fail(Rule::TensorOffset, offset_offset, idx + ".offset",
                     tname + " has offset " + std::to_string(t.offset) + ", expected " + std::to_string(expected) +
                         " (the previous tensors' sizes, each padded to the alignment " + std::to_string(align) +
                         ")");
            // Rule 16, first half: the padded running sum must not overflow.
            const uint64_t padded = pad_checked(t.n_bytes, align, tname, idx, offset_offset);
            if (expected > std::numeric_limits<uint64_t>::max() - padded)
                fail(Rule::DataBounds, offset_offset, idx + ".offset",
                     "the data section size overflows at " + tname);
            expected += padded;

            f_.tensor_index_.emplace(t.name, f_.tensors_.size());
            f_.tensors_.push_back(t);
            offset_fields_.push_back(offset_offset);
        }
    }

    // Rule 12: the id must name a type this run can store; ids >= 1024 are named by dense.type.<id>.
    const TypeInfo& resolve_type(int32_t id, const std::string& tname, const std::string& field, uint64_t at) {
        if (id >= static_cast<int32_t>(DENSE_TYPE_FIRST_RUNTIME)) return resolve_runtime_type(id, tname, field, at);
        const std::string ggml = std::string(TypeTable::ggml_name(id));
        switch (TypeTable::classify_ggml_id(id)) {
            case GgmlIdStatus::OutOfRange:
                fail(Rule::TensorType, at, field,
                     tname + " has type id " + std::to_string(id) + ", outside the ggml range [0, " +
                         std::to_string(DENSE_TYPE_GGML_COUNT) + ") and below the pack range (>= " +
                         std::to_string(DENSE_TYPE_FIRST_RUNTIME) + ")");
            case GgmlIdStatus::Retired:
                fail(Rule::TensorType, at, field,
                     tname + " has type id " + std::to_string(id) + ", a retired ggml type (block size 0)");
            case GgmlIdStatus::KnownUnsupported:
            case GgmlIdStatus::Supported:
                break;
        }
        const TypeInfo* info = types_.find(static_cast<dense_type_id>(id));
        if (id == DENSE_TYPE_Q8_K || id == DENSE_TYPE_Q8_1 || (info != nullptr && !info->storable))
            fail(Rule::TensorType, at, field,
                 tname + " has type " + ggml + " (id " + std::to_string(id) +
                     "), an activation-only format that cannot be stored in a model file");
        if (TypeTable::classify_ggml_id(id) != GgmlIdStatus::Supported || info == nullptr)
            fail(Rule::TensorType, at, field,
                 tname + " has type " + ggml + " (id " + std::to_string(id) + "), which dense-rt does not support");
        return *info;
    }

    const TypeInfo& resolve_runtime_type(int32_t id, const std::string& tname, const std::string& field, uint64_t at) {
        const std::string key = std::string(kRuntimeTypeKeyPrefix) + std::to_string(id);
        const KeyValue* kv = f_.find_kv(key);
        if (kv == nullptr)
            fail(Rule::TensorType, at, field,
                 tname + " has pack type id " + std::to_string(id) + " but the file has no '" + key +
                     "' key naming the format");
        const auto* name = std::get_if<std::string_view>(&kv->value);
        if (name == nullptr)
            fail(Rule::TensorType, at, field,
                 tname + ": key '" + key + "' has type " + std::string(value_type_name(kv->type())) +
                     ", it must be a STRING naming the format");
        const TypeInfo* info = types_.find(*name);
        if (info == nullptr || info->builtin)
            fail(Rule::TensorType, at, field,
                 tname + " has type " + quoted(*name) + " (file id " + std::to_string(id) +
                     "), which no loaded pack registered");
        if (!info->storable)
            fail(Rule::TensorType, at, field, tname + " has type " + quoted(*name) + ", which cannot be stored");
        return *info;
    }

    // Rule 14: (ne[0] / block) * block_bytes * ne[1] * ne[2] * ne[3], every step checked.
    uint64_t tensor_bytes(const TensorInfo& t, const TypeInfo& info, const std::string& tname, const std::string& idx,
                          uint64_t at) {
        const std::string why = tname + " byte size overflows 64 bits";
        const auto row = TypeTable::row_bytes(info, t.ne[0]);
        if (!row) fail(Rule::TensorBytesOverflow, at, idx, why);
        uint64_t bytes = *row;
        for (size_t j = 1; j < 4; ++j) {
            const auto n = static_cast<uint64_t>(t.ne[j]);
            if (n != 0 && bytes > std::numeric_limits<uint64_t>::max() / n) fail(Rule::TensorBytesOverflow, at, idx, why);
            bytes *= n;
        }
        return bytes;
    }

    uint64_t pad_checked(uint64_t n, uint64_t align, const std::string& tname, const std::string& idx, uint64_t at) {
        if (n > std::numeric_limits<uint64_t>::max() - (align - 1))
            fail(Rule::DataBounds, at, idx + ".offset", tname + " padded size overflows 64 bits");
        return (n + align - 1) & ~(align - 1);
    }

    // ---- data section (rule 16) ----

    void place_data() {
        const uint64_t align = f_.alignment_;
        // pos_ <= file size and align <= 2^31, so this cannot overflow.
        f_.data_start_ = n_tensors_ > 0 ? (pos_ + align - 1) & ~(align - 1) : pos_;
        const uint64_t size = b_.size();
        for (size_t i = 0; i < f_.tensors_.size(); ++i) {
            TensorInfo& t = f_.tensors_[i];
            const bool start_ok = t.offset <= std::numeric_limits<uint64_t>::max() - f_.data_start_;
            const uint64_t start = start_ok ? f_.data_start_ + t.offset : 0;
            if (!start_ok || start > size || t.n_bytes > size - start)
                fail(Rule::DataBounds, offset_fields_[i], "tensor_info[" + std::to_string(i) + "].offset",
                     "tensor " + quoted(t.name) + " data [" + std::to_string(f_.data_start_) + " + " +
                         std::to_string(t.offset) + ", +" + std::to_string(t.n_bytes) +
                         " bytes) ends past the end of the file (" + std::to_string(size) + " bytes)");
            t.file_offset = start;
            t.data = b_.subspan(start, t.n_bytes);
        }
    }

    GgufFile& f_;
    const TypeTable& types_;
    std::span<const std::byte> b_;
    const std::string& path_;
    uint64_t pos_ = 0;
    uint64_t n_kv_ = 0;
    uint64_t n_tensors_ = 0;
    std::vector<uint64_t> offset_fields_;  // file byte of each tensor's offset field, for rule 16 errors
};

GgufFile GgufFile::open(const std::filesystem::path& path, const TypeTable& types) {
    GgufFile f;
    f.path_ = path.string();
    f.bytes_ = f.backing_.emplace<MappedFile>(path).bytes();
    Reader(f, types).run();
    return f;
}

GgufFile GgufFile::parse(std::span<const std::byte> bytes, std::string name, const TypeTable& types) {
    GgufFile f;
    f.path_ = std::move(name);
    f.bytes_ = bytes;
    Reader(f, types).run();
    return f;
}

GgufFile GgufFile::parse_owned(std::vector<std::byte> bytes, std::string name, const TypeTable& types) {
    GgufFile f;
    f.path_ = std::move(name);
    f.bytes_ = f.backing_.emplace<std::vector<std::byte>>(std::move(bytes));
    Reader(f, types).run();
    return f;
}

}  // namespace dense::gguf
