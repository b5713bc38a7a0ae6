// Test helper: copy a GGUF through the writer with edits (drop/replace KVs and tensors, add new
// ones), so binding tests start from a known-good model and change exactly one thing.
#pragma once

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dense::test {

struct GgufEdits {
    std::set<std::string> drop_kvs;
    std::set<std::string> drop_tensors;
    // Replace a KV: called instead of copying it (and for keys not in the file, at the end).
    std::map<std::string, std::function<void(gguf::GgufWriter&)>> set_kvs;
    // Replace a tensor's type/shape (data is filled with small deterministic values).
    struct TensorSpec {
        dense_type_id type;
        std::vector<int64_t> ne;
    };
    std::map<std::string, TensorSpec> replace_tensors;
    std::vector<std::pair<std::string, TensorSpec>> add_tensors;
};

inline std::vector<std::byte> filler_bytes(uint64_t n) {
    std::vector<std::byte> out(n);
    // Small positive F32-ish pattern is irrelevant for binding: only sizes matter here.
    for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 37u + 11u) & 0x3Fu);
    return out;
}

inline std::vector<std::byte> rewrite(const gguf::GgufFile& in, const GgufEdits& edits) {
    gguf::GgufWriter w;
    std::set<std::string> done;
    for (const auto& kv : in.kvs()) {
        const std::string key(kv.key);
        if (key == "general.alignment" || edits.drop_kvs.count(key)) continue;
        if (auto it = edits.set_kvs.find(key); it != edits.set_kvs.end()) {
            it->second(w);
            done.insert(key);
            continue;
        }
        w.add_value(key, kv.value);
    }
    for (const auto& [key, fn] : edits.set_kvs)
        if (!done.count(key)) fn(w);
    auto add = [&](const std::string& name, const GgufEdits::TensorSpec& s) {
        w.add_tensor(name, s.type, s.ne, filler_bytes(w.tensor_bytes(s.type, s.ne)));
    };
    for (const auto& t : in.tensors()) {
        const std::string name(t.name);
        if (edits.drop_tensors.count(name)) continue;
        if (auto it = edits.replace_tensors.find(name); it != edits.replace_tensors.end()) {
            add(name, it->second);
            continue;
        }
        std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
        w.add_tensor(name, t.type, ne, t.data);
    }
    for (const auto& [name, s] : edits.add_tensors) add(name, s);
    return w.write_to_bytes();
}

}  // namespace dense::test
