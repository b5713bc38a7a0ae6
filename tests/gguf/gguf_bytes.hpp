// Byte-level GGUF builder for tests: writes exactly the fields it is told to, so a test can produce
// a file that breaks one rule and knows the byte offset of every field it wrote.
#pragma once

#include "gguf/gguf_file.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dense::gguf::test {

class Bytes {
public:
    template <class T>
    Bytes& put(T v) {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        data_.insert(data_.end(), p, p + sizeof(T));
        return *this;
    }
    Bytes& u8(uint8_t v) { return put(v); }
    Bytes& u32(uint32_t v) { return put(v); }
    Bytes& i32(int32_t v) { return put(v); }
    Bytes& u64(uint64_t v) { return put(v); }
    Bytes& i64(int64_t v) { return put(v); }
    Bytes& raw(std::string_view s) {
        const auto* p = reinterpret_cast<const std::byte*>(s.data());
        data_.insert(data_.end(), p, p + s.size());
        return *this;
    }
    Bytes& str(std::string_view s) { return u64(s.size()).raw(s); }  // GGUF string: u64 length + bytes
    Bytes& zeros(size_t n) {
        data_.insert(data_.end(), n, std::byte{0});
        return *this;
    }
    Bytes& pad_to(uint64_t align) { return zeros(static_cast<size_t>((align - size() % align) % align)); }

    uint64_t size() const { return data_.size(); }
    std::vector<std::byte>& vec() { return data_; }
    const std::vector<std::byte>& vec() const { return data_; }

private:
    std::vector<std::byte> data_;
};

// Value encodings (type id not included).
inline std::vector<std::byte> enc_u32(uint32_t v) { return Bytes().u32(v).vec(); }
inline std::vector<std::byte> enc_str(std::string_view s) { return Bytes().str(s).vec(); }

// One KV as it will be written: key, raw type id, raw value bytes.
struct RawKv {
    std::string key;
    int32_t type = 4;
    std::vector<std::byte> value;
};

struct RawTensor {
    std::string name;
    uint32_t n_dims = 1;
    std::vector<int64_t> ne{32};
    int32_t type = 0;      // f32
    uint64_t offset = 0;
    uint64_t data_bytes = 0;  // bytes this tensor contributes to the data section (padded by build())
};

// A whole file. Every count and field is explicit so a test can set an inconsistent value.
struct RawFile {
    std::string magic = "GGUF";
    uint32_t version = 3;
    std::vector<RawKv> kvs;
    std::vector<RawTensor> tensors;
    std::optional<int64_t> n_tensors;  // unset: tensors.size()
    std::optional<int64_t> n_kv;       // unset: kvs.size()
    uint64_t alignment = 32; // used to pad data_start and the tensors' data
    int64_t data_adjust = 0; // added to the data section length (negative cuts the file short)

    // Where build() put things (file byte offsets).
    std::vector<uint64_t> kv_at, kv_type_at, kv_value_at, info_at, ne_at, type_at, offset_at;
    uint64_t data_start = 0;

    std::vector<std::byte> build() {
        kv_at.clear(); kv_type_at.clear(); kv_value_at.clear();
        info_at.clear(); ne_at.clear(); type_at.clear(); offset_at.clear();
        Bytes b;
        b.raw(magic).u32(version);
        b.i64(n_tensors.value_or(static_cast<int64_t>(tensors.size())));
        b.i64(n_kv.value_or(static_cast<int64_t>(kvs.size())));
        for (const auto& kv : kvs) {
            kv_at.push_back(b.size());
            b.str(kv.key);
            kv_type_at.push_back(b.size());
            b.i32(kv.type);
            kv_value_at.push_back(b.size());
            b.vec().insert(b.vec().end(), kv.value.begin(), kv.value.end());
        }
        for (const auto& t : tensors) {
            info_at.push_back(b.size());
            b.str(t.name).u32(t.n_dims);
            ne_at.push_back(b.size());
            for (int64_t n : t.ne) b.i64(n);
            type_at.push_back(b.size());
            b.i32(t.type);
            offset_at.push_back(b.size());
            b.u64(t.offset);
        }
        if (!tensors.empty()) b.pad_to(alignment);
        data_start = b.size();
        uint64_t data = 0;
        for (const auto& t : tensors) data += (t.data_bytes + alignment - 1) / alignment * alignment;
        auto& v = b.vec();
        const auto total = static_cast<int64_t>(v.size() + data) + data_adjust;
        v.resize(static_cast<size_t>(total), std::byte{0x5A});
        return v;
    }
};

// A small valid file: two KVs and two f32 tensors.
inline RawFile valid_raw_file() {
    RawFile f;
    f.kvs.push_back({"general.architecture", 8, enc_str("qwen35")});
    f.kvs.push_back({"general.alignment", 4, enc_u32(32)});
    f.tensors.push_back({"a.weight", 2, {32, 2}, 0, 0, 256});
    f.tensors.push_back({"b.weight", 1, {4}, 0, 256, 16});
    return f;
}

}  // namespace dense::gguf::test
