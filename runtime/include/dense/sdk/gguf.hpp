// Header-only GGUF (v2/v3) reading and writing for pack tools: converters that rewrite some tensors
// of a model into a pack's own format. It is what an out-of-tree project has instead of the
// runtime's reader/writer (runtime/src/gguf), which are not installed. Small and strict enough for
// tools (it holds the whole input, and the output's tensors, in memory); the runtime's reader
// re-validates every file it loads.
//
//   namespace g = dense::sdk::gguf;
//   g::File in = g::File::read("model.gguf");              // whole file in memory; throws g::Error
//   g::Writer out(in.alignment());
//   for (const auto& kv : in.kvs()) out.add_kv(kv);          // copied byte for byte
//   out.set_pack_type(my_file_id, {"vendor.format", {64, 36}});  // BEFORE add_tensor: the dense.type.<id>
//                                                             // key and the block (elements, bytes)
//   for (const auto& t : in.tensors()) {
//       if (wanted(t)) out.add_tensor(t.name, my_file_id, t.ne, convert(in.tensor_data(t)));
//       else           out.add_tensor(t.name, t.type, t.ne, in.tensor_data(t));
//   }
//   out.write("model-vendor.gguf");
//
// Pack formats in a GGUF: a file stores ggml type ids. A tensor in a pack-registered format carries
// a file-local id >= 1024 (DENSE_TYPE_FIRST_RUNTIME; kFirstPackTypeId below) and the file has a
// STRING key "dense.type.<id>" = the format's namespaced name ("example.q4_m64"). dense-rt maps the
// name to the id the pack's format received in this process (ids are per process, names are
// stable); a missing key or a name no loaded pack registered is a load error naming the tensor.
// Only dense-rt reads such files; llama.cpp refuses the unknown ids.
//
// Sizes: the byte size of a tensor follows from its type's block (elements, bytes). This header
// knows the ggml formats dense-rt stores (f32, f16, bf16, q8_0, q2_k..q6_k, iq2_xs, iq2_s, iq3_xxs,
// iq3_s, iq4_nl, iq4_xs); a pack format's block is given to File::read / Writer by the caller.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dense::sdk::gguf {

// Every problem (I/O, malformed file, misuse of the writer) with a message naming the file/key/tensor.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline constexpr uint32_t kFirstPackTypeId = DENSE_TYPE_FIRST_RUNTIME;
inline constexpr std::string_view kPackTypeKeyPrefix = "dense.type.";
inline constexpr uint32_t kDefaultAlignment = 32;

// "dense.type.<id>"
inline std::string pack_type_key(uint32_t file_id) {
    return std::string(kPackTypeKeyPrefix) + std::to_string(file_id);
}

// GGUF metadata value type ids (spec section 3.1).
enum ValueType : uint32_t {
    kUInt8 = 0, kInt8 = 1, kUInt16 = 2, kInt16 = 3, kUInt32 = 4, kInt32 = 5, kFloat32 = 6, kBool = 7,
    kString = 8, kArray = 9, kUInt64 = 10, kInt64 = 11, kFloat64 = 12
};

// Elements and bytes of one block of a type.
struct BlockSize {
    uint32_t elements = 0;
    uint32_t bytes = 0;
};

// A pack format the caller knows (its own): how a file names it and how big its blocks are.
struct PackType {
    std::string name;  // "vendor.format"
    BlockSize block;
};

// Blocks of the ggml formats dense-rt stores; nullopt for any other id.
inline std::optional<BlockSize> ggml_block_size(uint32_t type) noexcept {
    switch (type) {
        case DENSE_TYPE_F32: return BlockSize{1, 4};
        case DENSE_TYPE_F16: return BlockSize{1, 2};
        case DENSE_TYPE_BF16: return BlockSize{1, 2};
        case DENSE_TYPE_Q8_0: return BlockSize{32, 34};
        case DENSE_TYPE_Q2_K: return BlockSize{256, 84};
        case DENSE_TYPE_Q3_K: return BlockSize{256, 110};
        case DENSE_TYPE_Q4_K: return BlockSize{256, 144};
        case DENSE_TYPE_Q5_K: return BlockSize{256, 176};
        case DENSE_TYPE_Q6_K: return BlockSize{256, 210};
        case DENSE_TYPE_IQ2_XS: return BlockSize{256, 74};
        case DENSE_TYPE_IQ3_XXS: return BlockSize{256, 98};
        case DENSE_TYPE_IQ4_NL: return BlockSize{32, 18};
        case DENSE_TYPE_IQ3_S: return BlockSize{256, 110};
        case DENSE_TYPE_IQ2_S: return BlockSize{256, 82};
        case DENSE_TYPE_IQ4_XS: return BlockSize{256, 136};
        default: return std::nullopt;
    }
}

// One metadata entry, kept encoded: `value` is the bytes after the key (type id + value), exactly as
// in the file, so entries are copied without being understood.
struct KeyValue {
    std::string key;
    uint32_t type = kUInt8;
    std::vector<std::byte> value;  // starts with the 4-byte type id
};

struct Tensor {
    std::string name;
    uint32_t type = 0;              // the id stored in the file
    std::vector<int64_t> ne;        // n_dims entries, ne[0] innermost
    uint64_t offset = 0;            // relative to the data section
    uint64_t n_bytes = 0;           // from the type's block size

    int64_t n_elements() const noexcept {
        int64_t n = 1;
        for (int64_t d : ne) n *= d;
        return n;
    }
};

namespace detail {

inline uint64_t padded(uint64_t n, uint64_t alignment) noexcept {
    return (n + alignment - 1) / alignment * alignment;
}

inline std::optional<uint64_t> row_bytes(BlockSize b, int64_t ne0) noexcept {
    if (b.elements == 0 || ne0 < 0 || ne0 % b.elements != 0) return std::nullopt;
    return static_cast<uint64_t>(ne0) / b.elements * b.bytes;
}

// Byte size of a tensor; nullopt on a bad shape or an overflow.
inline std::optional<uint64_t> tensor_bytes(BlockSize b, const std::vector<int64_t>& ne) noexcept {
    const auto row = row_bytes(b, ne.empty() ? 1 : ne[0]);
    if (!row) return std::nullopt;
    uint64_t total = *row;
    for (size_t i = 1; i < ne.size(); ++i) {
        if (ne[i] < 0) return std::nullopt;
        const auto d = static_cast<uint64_t>(ne[i]);
        if (d != 0 && total > std::numeric_limits<uint64_t>::max() / d) return std::nullopt;
        total *= d;
    }
    return total;
}

template <class T>
void put(std::vector<std::byte>& out, T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
}

inline void put_string(std::vector<std::byte>& out, std::string_view s) {
    put<uint64_t>(out, s.size());
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    out.insert(out.end(), p, p + s.size());
}

// Encoded size of a fixed-size value type; 0 for STRING / ARRAY; nullopt for an unknown id.
inline std::optional<uint64_t> fixed_size(uint32_t type) noexcept {
    switch (type) {
        case kUInt8: case kInt8: case kBool: return 1;
        case kUInt16: case kInt16: return 2;
        case kUInt32: case kInt32: case kFloat32: return 4;
        case kUInt64: case kInt64: case kFloat64: return 8;
        case kString: case kArray: return 0;
        default: return std::nullopt;
    }
}

// Bounds-checked cursor over the file's bytes.
class Cursor {
public:
    Cursor(std::span<const std::byte> bytes, const std::string& path) : b_(bytes), path_(path) {}

    uint64_t pos() const noexcept { return pos_; }

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(path_ + ": " + what + " (at byte " + std::to_string(pos_) + ")");
    }
    void need(uint64_t n, const char* what) const {
        if (n > b_.size() - pos_) fail(std::string("file ends inside ") + what);
    }
    template <class T>
    T get(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, b_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    std::string get_string(const char* what) {
        const auto n = get<uint64_t>(what);
        need(n, what);
        std::string s(reinterpret_cast<const char*>(b_.data() + pos_), static_cast<size_t>(n));
        pos_ += n;
        return s;
    }
    void skip_value(uint32_t type, const char* what) {
        const auto size = fixed_size(type);
        if (!size) fail(std::string("unknown value type ") + std::to_string(type) + " in " + what);
        if (type == kString) {
            (void)get_string(what);
        } else if (type == kArray) {
            const auto elem = get<uint32_t>(what);
            const auto count = get<uint64_t>(what);
            const auto elem_size = fixed_size(elem);
            if (!elem_size || elem == kArray) fail(std::string("bad array element type in ") + what);
            if (elem == kString) {
                for (uint64_t i = 0; i < count; ++i) (void)get_string(what);
            } else {
                if (count > (b_.size() - pos_) / *elem_size) fail(std::string("file ends inside ") + what);
                pos_ += count * *elem_size;
            }
        } else {
            need(*size, what);
            pos_ += *size;
        }
    }
    std::vector<std::byte> slice(uint64_t from) const {
        return {b_.begin() + static_cast<std::ptrdiff_t>(from), b_.begin() + static_cast<std::ptrdiff_t>(pos_)};
    }

private:
    std::span<const std::byte> b_;
    const std::string& path_;
    uint64_t pos_ = 0;
};

}  // namespace detail

// A whole GGUF file in memory: metadata entries (encoded), tensor infos and the data section.
class File {
public:
    // Reads and parses `path`. Tensors of ids >= kFirstPackTypeId must be named by a dense.type.<id>
    // key whose name is in `pack_types`; any other id must be one of ggml_block_size's.
    static File read(const std::filesystem::path& path, const std::vector<PackType>& pack_types = {}) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw Error(path.string() + ": cannot open for reading");
        in.seekg(0, std::ios::end);
        const auto size = static_cast<std::streamoff>(in.tellg());
        in.seekg(0, std::ios::beg);
        File f;
        f.path_ = path.string();
        f.bytes_.resize(static_cast<size_t>(size));
        if (size > 0 && !in.read(reinterpret_cast<char*>(f.bytes_.data()), size))
            throw Error(f.path_ + ": read failed");
        f.parse(pack_types);
        return f;
    }

    const std::string& path() const noexcept { return path_; }
    uint32_t version() const noexcept { return version_; }
    uint32_t alignment() const noexcept { return alignment_; }
    const std::vector<KeyValue>& kvs() const noexcept { return kvs_; }
    const std::vector<Tensor>& tensors() const noexcept { return tensors_; }

    const KeyValue* find_kv(std::string_view key) const noexcept {
        for (const auto& kv : kvs_)
            if (kv.key == key) return &kv;
        return nullptr;
    }
    // The value of a STRING key; nullopt if absent or of another type.
    std::optional<std::string> get_string(std::string_view key) const {
        const KeyValue* kv = find_kv(key);
        if (kv == nullptr || kv->type != kString) return std::nullopt;
        uint64_t n = 0;
        std::memcpy(&n, kv->value.data() + 4, sizeof n);
        return std::string(reinterpret_cast<const char*>(kv->value.data() + 12), static_cast<size_t>(n));
    }
    const Tensor* find_tensor(std::string_view name) const noexcept {
        for (const auto& t : tensors_)
            if (t.name == name) return &t;
        return nullptr;
    }
    std::span<const std::byte> tensor_data(const Tensor& t) const noexcept {
        return std::span<const std::byte>(bytes_).subspan(static_cast<size_t>(data_start_ + t.offset),
                                                          static_cast<size_t>(t.n_bytes));
    }

private:
    void parse(const std::vector<PackType>& pack_types) {
        detail::Cursor c(bytes_, path_);
        if (c.get<uint32_t>("the magic") != 0x46554747u) c.fail("not a GGUF file (magic is not 'GGUF')");
        version_ = c.get<uint32_t>("the version");
        if (version_ != 2 && version_ != 3) c.fail("unsupported GGUF version " + std::to_string(version_));
        const auto n_tensors = c.get<uint64_t>("the tensor count");
        const auto n_kvs = c.get<uint64_t>("the metadata count");
        if (n_kvs > bytes_.size() / 12 || n_tensors > bytes_.size() / 24) c.fail("implausible counts");
        for (uint64_t i = 0; i < n_kvs; ++i) {
            KeyValue kv;
            kv.key = c.get_string("a metadata key");
            const uint64_t value_start = c.pos();
            kv.type = c.get<uint32_t>("a value type");
            c.skip_value(kv.type, "metadata value");
            kv.value = c.slice(value_start);
            if (kv.key == "general.alignment") {
                if (kv.type != kUInt32) c.fail("general.alignment is not UINT32");
                std::memcpy(&alignment_, kv.value.data() + 4, sizeof alignment_);
                if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) c.fail("general.alignment is not a power of two");
            }
            kvs_.push_back(std::move(kv));
        }
        for (uint64_t i = 0; i < n_tensors; ++i) {
            Tensor t;
            t.name = c.get_string("a tensor name");
            const auto n_dims = c.get<uint32_t>("n_dims");
            if (n_dims > 4) c.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions");
            for (uint32_t d = 0; d < n_dims; ++d) t.ne.push_back(c.get<int64_t>("a dimension"));
            t.type = c.get<uint32_t>("a tensor type");
            t.offset = c.get<uint64_t>("a tensor offset");
            const auto block = block_of(t, pack_types);
            const auto bytes = detail::tensor_bytes(block, t.ne);
            if (!bytes) c.fail("tensor '" + t.name + "' has a shape that does not fit its type's blocks");
            t.n_bytes = *bytes;
            tensors_.push_back(std::move(t));
        }
        data_start_ = detail::padded(c.pos(), alignment_);
        for (const auto& t : tensors_)
            if (data_start_ > bytes_.size() || t.offset > bytes_.size() - data_start_ ||
                t.n_bytes > bytes_.size() - data_start_ - t.offset)
                throw Error(path_ + ": tensor '" + t.name + "' lies past the end of the file");
    }

    BlockSize block_of(const Tensor& t, const std::vector<PackType>& pack_types) const {
        if (t.type >= kFirstPackTypeId) {
            const auto name = get_string(pack_type_key(t.type));
            if (!name)
                throw Error(path_ + ": tensor '" + t.name + "' has pack type id " + std::to_string(t.type) +
                            " but no STRING key '" + pack_type_key(t.type) + "'");
            for (const auto& p : pack_types)
                if (p.name == *name) return p.block;
            throw Error(path_ + ": tensor '" + t.name + "' has pack type '" + *name + "', unknown to this tool");
        }
        if (const auto b = ggml_block_size(t.type)) return *b;
        throw Error(path_ + ": tensor '" + t.name + "' has ggml type id " + std::to_string(t.type) +
                    ", which this tool cannot size");
    }

    std::string path_;
    std::vector<std::byte> bytes_;
    uint32_t version_ = 3;
    uint32_t alignment_ = kDefaultAlignment;
    uint64_t data_start_ = 0;
    std::vector<KeyValue> kvs_;
    std::vector<Tensor> tensors_;
};

// Writes a GGUF v3 file: KVs in the order added, tensors in the order added, each tensor's offset
// the running sum of the previous sizes padded to the alignment (what dense-rt and llama.cpp demand).
class Writer {
public:
    // `alignment` must match a general.alignment KV if one is added (a copied one is checked).
    explicit Writer(uint32_t alignment = kDefaultAlignment) : alignment_(alignment) {
        if (alignment == 0 || (alignment & (alignment - 1)) != 0)
            throw Error("gguf writer: alignment " + std::to_string(alignment) + " is not a power of two");
    }

    // Copies an encoded entry (from File::kvs()). A key added twice is an error.
    void add_kv(const KeyValue& kv) {
        check_new_key(kv.key);
        if (kv.key == "general.alignment") {
            uint32_t a = 0;
            if (kv.type == kUInt32 && kv.value.size() == 8) std::memcpy(&a, kv.value.data() + 4, sizeof a);
            if (a != alignment_)
                throw Error("gguf writer: general.alignment " + std::to_string(a) + " differs from the writer's " +
                            std::to_string(alignment_));
        }
        kvs_.push_back(kv);
    }
    void add_string(const std::string& key, std::string_view value) {
        KeyValue kv;
        kv.key = key;
        kv.type = kString;
        detail::put<uint32_t>(kv.value, kString);
        detail::put_string(kv.value, value);
        add_kv(kv);
    }
    void add_u32(const std::string& key, uint32_t value) {
        KeyValue kv;
        kv.key = key;
        kv.type = kUInt32;
        detail::put<uint32_t>(kv.value, kUInt32);
        detail::put<uint32_t>(kv.value, value);
        add_kv(kv);
    }

    // Declares that tensors of file id `file_id` (>= kFirstPackTypeId) are the pack format `type`:
    // writes the dense.type.<id> key and lets add_tensor size them.
    void set_pack_type(uint32_t file_id, const PackType& type) {
        if (file_id < kFirstPackTypeId)
            throw Error("gguf writer: pack type id " + std::to_string(file_id) + " is below " +
                        std::to_string(kFirstPackTypeId));
        if (type.name.find('.') == std::string::npos)
            throw Error("gguf writer: pack type name '" + type.name + "' is not namespaced ('vendor.format')");
        add_string(pack_type_key(file_id), type.name);
        file_pack_types_.push_back({file_id, type.block});
    }

    // `data` must be exactly the tensor's size for its type and shape.
    void add_tensor(const std::string& name, uint32_t type, const std::vector<int64_t>& ne, std::span<const std::byte> data) {
        if (name.empty() || name.size() > 63) throw Error("gguf writer: tensor name '" + name + "' is empty or too long");
        if (ne.size() > 4) throw Error("gguf writer: tensor '" + name + "' has more than 4 dimensions");
        for (const auto& t : tensors_)
            if (t.info.name == name) throw Error("gguf writer: tensor '" + name + "' added twice");
        const auto block = block_of(type);
        if (!block)
            throw Error("gguf writer: tensor '" + name + "' has type id " + std::to_string(type) +
                        " of unknown size (call set_pack_type first for a pack format)");
        const auto bytes = detail::tensor_bytes(*block, ne);
        if (!bytes) throw Error("gguf writer: tensor '" + name + "': ne[0] is not a multiple of its type's block");
        if (*bytes != data.size())
            throw Error("gguf writer: tensor '" + name + "' has " + std::to_string(data.size()) + " bytes of data, its type and shape need " +
                        std::to_string(*bytes));
        Entry e;
        e.info.name = name;
        e.info.type = type;
        e.info.ne = ne;
        e.info.n_bytes = *bytes;
        e.data.assign(data.begin(), data.end());
        tensors_.push_back(std::move(e));
    }

    void write(const std::filesystem::path& path) const {
        std::vector<std::byte> head;
        detail::put<uint32_t>(head, 0x46554747u);  // "GGUF"
        detail::put<uint32_t>(head, 3);
        detail::put<uint64_t>(head, tensors_.size());
        detail::put<uint64_t>(head, kvs_.size());
        for (const auto& kv : kvs_) {
            detail::put_string(head, kv.key);
            head.insert(head.end(), kv.value.begin(), kv.value.end());
        }
        uint64_t offset = 0;
        for (const auto& t : tensors_) {
            detail::put_string(head, t.info.name);
            detail::put<uint32_t>(head, static_cast<uint32_t>(t.info.ne.size()));
            for (int64_t d : t.info.ne) detail::put<int64_t>(head, d);
            detail::put<uint32_t>(head, t.info.type);
            detail::put<uint64_t>(head, offset);
            offset += detail::padded(t.info.n_bytes, alignment_);
        }
        head.resize(static_cast<size_t>(detail::padded(head.size(), alignment_)), std::byte{0});
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        if (!out) throw Error(path.string() + ": cannot open for writing");
        out.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
        const std::vector<char> zeros(alignment_, 0);
        for (const auto& t : tensors_) {
            out.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
            const uint64_t pad = detail::padded(t.info.n_bytes, alignment_) - t.info.n_bytes;
            out.write(zeros.data(), static_cast<std::streamsize>(pad));
        }
        out.flush();
        if (!out) throw Error(path.string() + ": write failed");
    }

private:
    struct Entry {
        Tensor info;
        std::vector<std::byte> data;
    };

    void check_new_key(const std::string& key) const {
        if (key.empty()) throw Error("gguf writer: empty key");
        for (const auto& kv : kvs_)
            if (kv.key == key) throw Error("gguf writer: key '" + key + "' added twice");
    }

    std::optional<BlockSize> block_of(uint32_t type) const {
        if (type < kFirstPackTypeId) return ggml_block_size(type);
        for (const auto& [id, block] : file_pack_types_)
            if (id == type) return block;
        return std::nullopt;
    }

    uint32_t alignment_;
    std::vector<KeyValue> kvs_;
    std::vector<Entry> tensors_;
    std::vector<std::pair<uint32_t, BlockSize>> file_pack_types_;
};

}  // namespace dense::sdk::gguf
