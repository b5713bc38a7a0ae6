// A validated GGUF file: header facts, typed metadata in file order, and the tensor table, all
// pointing into the file's bytes (read-only mmap) without copying them.
//
// Public API (namespace dense::gguf)
// ----------------------------------
//   GgufFile f = GgufFile::open("model.gguf");              // mmap + parse + validate (spec section 6)
//   GgufFile f = GgufFile::parse(bytes, "name");            // same code on caller-owned bytes (borrowed)
//   GgufFile f = GgufFile::parse_owned(std::move(vec), "n");// same, the file keeps the vector
//     Each takes an optional `const TypeTable&` (default global_type_table()) that decides which
//     tensor types are accepted and resolves pack formats (ids >= 1024, see below).
//     Errors: dense::Error(Io) if the file cannot be mapped; GgufError (ErrorKind::Format, with
//     rule(), field(), offset(), path()) for every rule 1-16 of spec/gguf-format.md section 6.
//
//   Header:   f.path(), f.version(), f.file_size(), f.alignment(), f.data_start(), f.bytes()
//   Metadata: f.kvs() (file order), f.find_kv(key) -> const KeyValue* (nullptr if absent), f.has(key)
//     Strict typed getters, like llama.cpp's model loader: the stored type must be exactly the one
//     asked for (no integer widening). Absent key -> dense::Error(Model) "required key ... is
//     missing"; wrong type -> dense::Error(Model) naming key, expected and actual type. Each has an
//     _opt form returning std::nullopt for an absent key (a wrong type still throws).
//       get_u8 get_i8 get_u16 get_i16 get_u32 get_i32 get_u64 get_i64 get_f32 get_f64 get_bool
//       get_string -> std::string_view (valid while f lives)
//       get_i32_array, get_u32_array -> std::vector<int32_t/uint32_t>; accept INT32, UINT32 or BOOL
//         elements (spec 3.3); a value that does not fit the requested type is an error.
//       get_bool_array -> std::vector<bool>; accepts BOOL, INT32 or UINT32 elements (non-zero = true)
//       get_f32_array -> std::vector<float> (FLOAT32 elements only)
//       get_string_array -> std::span<const std::string_view> (no copies; valid while f lives)
//       get_array -> const ArrayValue& (any element type)
//   Tensors:  f.tensors() (file order), f.find_tensor(name) -> const TensorInfo* (nullptr if absent)
//
// Pack-registered tensor formats: a tensor whose stored type id is >= 1024 must be named by a STRING
// key `dense.type.<id>` = "<vendor>.<format>" in the same file; the reader maps it to the id that
// format received in the TypeTable at run time (ids are per process, names are stable). A missing
// key or a name the table does not know is rule 12 (tensor-type). GgufWriter adds the key itself.
//
// A GgufFile is move-only; every string_view/span it hands out points into its bytes and stays valid
// until it is destroyed (for parse(), until the caller's bytes go away).
#pragma once

#include "core/type_table.hpp"
#include "gguf/gguf_error.hpp"
#include "gguf/gguf_types.hpp"
#include "gguf/mapped_file.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace dense::gguf {

inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr size_t kMaxTensorNameBytes = 63;
inline constexpr uint64_t kMaxStringBytes = 1ull << 30;
inline constexpr uint64_t kMaxArrayElements = 1ull << 30;
inline constexpr uint32_t kMaxDims = 4;
inline constexpr std::string_view kRuntimeTypeKeyPrefix = "dense.type.";

struct KeyValue {
    std::string_view key;
    Value value;
    uint64_t offset = 0;  // file byte where this KV (its key's length field) starts

    ValueType type() const noexcept { return type_of(value); }
};

struct TensorInfo {
    std::string_view name;
    dense_type_id type = DENSE_TYPE_NONE;  // id in the TypeTable (the run-time id for pack formats)
    uint32_t file_type_id = 0;             // the id as stored in the file
    uint32_t n_dims = 0;
    std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] innermost; missing dimensions are 1
    uint64_t offset = 0;                    // relative to data_start
    uint64_t file_offset = 0;               // absolute: data_start + offset
    uint64_t n_bytes = 0;
    uint64_t info_offset = 0;               // file byte where this tensor-info record starts
    std::span<const std::byte> data;        // the tensor's bytes inside the file

    int64_t n_elements() const noexcept { return ne[0] * ne[1] * ne[2] * ne[3]; }  // validated: no overflow
};

class GgufFile {
public:
    static GgufFile open(const std::filesystem::path& path, const TypeTable& types = global_type_table());
    // Parses bytes the caller keeps alive for as long as the result is used. `name` stands in for
    // the path in messages.
    static GgufFile parse(std::span<const std::byte> bytes, std::string name = "<memory>",
                          const TypeTable& types = global_type_table());
    static GgufFile parse_owned(std::vector<std::byte> bytes, std::string name = "<memory>",
                                const TypeTable& types = global_type_table());
    // A temporary vector would die before the views into it: use parse_owned for that.
    static GgufFile parse(std::vector<std::byte>&& bytes, std::string name = "<memory>",
                          const TypeTable& types = global_type_table()) = delete;

    GgufFile(GgufFile&&) noexcept = default;
    GgufFile& operator=(GgufFile&&) noexcept = default;
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const std::string& path() const noexcept { return path_; }
    uint32_t version() const noexcept { return version_; }
    uint64_t file_size() const noexcept { return bytes_.size(); }
    uint32_t alignment() const noexcept { return alignment_; }
    uint64_t data_start() const noexcept { return data_start_; }
    std::span<const std::byte> bytes() const noexcept { return bytes_; }

    // ---- metadata ----
    const std::vector<KeyValue>& kvs() const noexcept { return kvs_; }
    const KeyValue* find_kv(std::string_view key) const noexcept;
    bool has(std::string_view key) const noexcept { return find_kv(key) != nullptr; }

    uint8_t get_u8(std::string_view key) const;
    int8_t get_i8(std::string_view key) const;
    uint16_t get_u16(std::string_view key) const;
    int16_t get_i16(std::string_view key) const;
    uint32_t get_u32(std::string_view key) const;
    int32_t get_i32(std::string_view key) const;
    uint64_t get_u64(std::string_view key) const;
    int64_t get_i64(std::string_view key) const;
    float get_f32(std::string_view key) const;
    double get_f64(std::string_view key) const;
    bool get_bool(std::string_view key) const;
    std::string_view get_string(std::string_view key) const;

    std::optional<uint8_t> get_u8_opt(std::string_view key) const;
    std::optional<int8_t> get_i8_opt(std::string_view key) const;
    std::optional<uint16_t> get_u16_opt(std::string_view key) const;
    std::optional<int16_t> get_i16_opt(std::string_view key) const;
    std::optional<uint32_t> get_u32_opt(std::string_view key) const;
    std::optional<int32_t> get_i32_opt(std::string_view key) const;
    std::optional<uint64_t> get_u64_opt(std::string_view key) const;
    std::optional<int64_t> get_i64_opt(std::string_view key) const;
    std::optional<float> get_f32_opt(std::string_view key) const;
    std::optional<double> get_f64_opt(std::string_view key) const;
    std::optional<bool> get_bool_opt(std::string_view key) const;
    std::optional<std::string_view> get_string_opt(std::string_view key) const;

    std::vector<int32_t> get_i32_array(std::string_view key) const;
    std::vector<uint32_t> get_u32_array(std::string_view key) const;
    std::vector<bool> get_bool_array(std::string_view key) const;
    std::vector<float> get_f32_array(std::string_view key) const;
    std::span<const std::string_view> get_string_array(std::string_view key) const;
    const ArrayValue& get_array(std::string_view key) const;

    std::optional<std::vector<int32_t>> get_i32_array_opt(std::string_view key) const;
    std::optional<std::vector<uint32_t>> get_u32_array_opt(std::string_view key) const;
    std::optional<std::vector<bool>> get_bool_array_opt(std::string_view key) const;
    std::optional<std::vector<float>> get_f32_array_opt(std::string_view key) const;
    std::optional<std::span<const std::string_view>> get_string_array_opt(std::string_view key) const;
    const ArrayValue* get_array_opt(std::string_view key) const;

    // ---- tensors ----
    const std::vector<TensorInfo>& tensors() const noexcept { return tensors_; }
    const TensorInfo* find_tensor(std::string_view name) const noexcept;

private:
    GgufFile() = default;
    friend class Reader;  // gguf_reader.cpp fills the fields below

    template <class T> std::optional<T> scalar_opt(std::string_view key) const;
    template <class T> T scalar(std::string_view key) const;
    template <class T> std::optional<std::vector<T>> int_array_opt(std::string_view key) const;
    const ArrayValue* array_of(std::string_view key, std::initializer_list<ValueType> accepted,
                               std::string_view expected_text) const;
    [[noreturn]] void missing(std::string_view key) const;

    std::string path_;
    std::variant<std::monostate, MappedFile, std::vector<std::byte>> backing_;
    std::span<const std::byte> bytes_;
    uint32_t version_ = 0;
    uint32_t alignment_ = kDefaultAlignment;
    uint64_t data_start_ = 0;
    std::vector<KeyValue> kvs_;
    std::unordered_map<std::string_view, size_t> kv_index_;
    std::vector<TensorInfo> tensors_;
    std::unordered_map<std::string_view, size_t> tensor_index_;
};

}  // namespace dense::gguf
