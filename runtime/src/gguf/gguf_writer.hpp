// Writes GGUF v3 files that llama.cpp accepts: KVs in the order they were added, tensor infos in
// the order tensors were added, data_start padded to the alignment, each tensor's offset = running
// sum of the previous tensors' sizes padded to the alignment (the last tensor is padded too).
//
//   GgufWriter w;                                   // alignment 32 unless set_alignment()
//   w.add_string("general.architecture", "qwen35");
//   w.add_u32("qwen35.block_count", 64);
//   w.add_string_array("tokenizer.ggml.tokens", tokens);
//   w.add_tensor("output_norm.weight", DENSE_TYPE_F32, {5120}, bytes);          // copied now
//   w.add_tensor("token_embd.weight", DENSE_TYPE_Q4_K, {5120, 248320},        // produced while
//                [](uint64_t off, std::span<std::byte> out) { /* fill out */ });  // writing, in chunks
//   w.write_to_file("model.gguf");                  // streams; never holds the whole file in memory
//   std::vector<std::byte> bytes = w.write_to_bytes();
//
// Misuse (empty or duplicate key, bad alignment, duplicate/too long tensor name, more than 4 dims,
// negative dims, a type that cannot be stored, ne[0] not a block multiple, data of the wrong size)
// throws dense::Error(ErrorKind::Usage) when the item is added. I/O failures throw ErrorKind::Io.
// A tensor of a pack-registered type (id >= 1024) makes the writer add the STRING key
// `dense.type.<id>` = its registered name, which the reader needs to map the id back.
#pragma once

#include "core/type_table.hpp"
#include "gguf/gguf_types.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace dense::gguf {

class GgufWriter {
public:
    // Produces `out.size()` bytes of the tensor starting at byte `offset` of its data. Called in
    // order, in chunks of at most kFillChunkBytes, during write_to_file / write_to_bytes.
    using FillFn = std::function<void(uint64_t offset, std::span<std::byte> out)>;
    static constexpr size_t kFillChunkBytes = size_t{4} << 20;

    explicit GgufWriter(const TypeTable& types = global_type_table());

    // Non-zero power of two; records `general.alignment` (UINT32) at its first position among the
    // KVs. Without a call the alignment is 32 and no key is written.
    void set_alignment(uint32_t alignment);
    uint32_t alignment() const noexcept { return alignment_; }

    void add_u8(std::string key, uint8_t v);
    void add_i8(std::string key, int8_t v);
    void add_u16(std::string key, uint16_t v);
    void add_i16(std::string key, int16_t v);
    void add_u32(std::string key, uint32_t v);
    void add_i32(std::string key, int32_t v);
    void add_u64(std::string key, uint64_t v);
    void add_i64(std::string key, int64_t v);
    void add_f32(std::string key, float v);
    void add_f64(std::string key, double v);
    void add_bool(std::string key, bool v);
    void add_string(std::string key, std::string_view v);

    // Arrays of a fixed-size element type (uint8_t ... double, not bool; see add_bool_array).
    template <class T>
    void add_array(std::string key, std::span<const T> values) {
        static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "use add_bool_array for bools");
        add_raw_array(std::move(key), value_type_of_v<T>, values.data(), values.size());
    }
    void add_bool_array(std::string key, const std::vector<bool>& values);
    void add_string_array(std::string key, std::span<const std::string> values);
    void add_string_array(std::string key, std::span<const std::string_view> values);

    // Any value, e.g. one read from another GgufFile (copies what it points to). A KV named
    // general.alignment goes through set_alignment's checks.
    void add_value(std::string key, const Value& value);

    // n_dims = ne.size() (0..4). `data` is copied and must be exactly the tensor's byte size.
    void add_tensor(std::string name, dense_type_id type, const std::vector<int64_t>& ne, std::span<const std::byte> data);
    // Same, the bytes come from `fill` while writing (for tensors too big to hold twice).
    void add_tensor(std::string name, dense_type_id type, const std::vector<int64_t>& ne, FillFn fill);

    // Byte size a tensor of this type and shape has in a file (throws Usage if it cannot be stored).
    uint64_t tensor_bytes(dense_type_id type, const std::vector<int64_t>& ne) const;
    // Size of the file write_to_* will produce.
    uint64_t file_size() const;

    void write_to_file(const std::filesystem::path& path) const;
    std::vector<std::byte> write_to_bytes() const;

    // Sink-agnostic core: `out(bytes)` is called with consecutive pieces of the file.
    void write(const std::function<void(std::span<const std::byte>)>& out) const;

private:
    struct Kv {
        std::string key;
        std::vector<std::byte> encoded;  // key + type + value, exactly as in the file
        std::string string_value;        // STRING values only (to check dense.type.<id> keys)
        ValueType type = ValueType::UInt8;
    };
    struct Tensor {
        std::string name;
        dense_type_id file_type = 0;
        std::vector<int64_t> ne;
        uint64_t n_bytes = 0;
        std::vector<std::byte> data;  // when no fill function
        FillFn fill;
    };

    void add_encoded(std::string key, ValueType type, std::vector<std::byte> value_bytes, std::string string_value = {});
    void add_raw_array(std::string key, ValueType elem_type, const void* data, uint64_t count);
    void check_new_key(const std::string& key) const;
    Tensor& add_tensor_common(std::string name, dense_type_id type, const std::vector<int64_t>& ne);
    uint64_t tensor_info_size(const Tensor& t) const noexcept;
    uint64_t data_start() const;

    const TypeTable& types_;
    uint32_t alignment_ = 32;
    std::vector<Kv> kvs_;
    std::unordered_set<std::string> keys_;
    std::vector<Tensor> tensors_;
    std::unordered_set<std::string> tensor_names_;
};

}  // namespace dense::gguf
