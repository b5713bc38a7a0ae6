#include "synth/vocab_source.hpp"

#include "core/error.hpp"
#include "core/install_prefix.hpp"

#include <cstring>
#include <unordered_set>

namespace dense::synth {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5;
constexpr uint64_t kMinOrdinaryTokens = 256;  // the byte symbols every byte-level BPE vocabulary starts with

constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";

// "[PAD123]": the filler entries converters add to round a vocabulary up to the embedding size.
bool is_pad_filler(std::string_view text) {
    if (text.size() < 6 || text.substr(0, 4) != "[PAD" || text.back() != ']') return false;
    for (char c : text.substr(4, text.size() - 5))
        if (c < '0' || c > '9') return false;
    return true;
}

bool is_special(int32_t type, std::string_view text) {
    return type == kControl || type == kUnknown || (type == kUserDefined && !is_pad_filler(text));
}
bool is_filler(int32_t type, std::string_view text) {
    return type == kUnused || (type == kUserDefined && is_pad_filler(text));
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

SynthVocab load_vocab(const fs::path& path, uint64_t size) {
    SynthVocab v;
    v.source = path;
    v.file = std::make_shared<const gguf::GgufFile>(gguf::GgufFile::open(path));
    const gguf::GgufFile& f = *v.file;
    if (!f.has(kTokensKey))
        throw Error(ErrorKind::Usage, "synth: vocabulary file " + path.string() + " has no " + std::string(kTokensKey));
    const auto tokens = f.get_string_array(kTokensKey);
    const uint64_t n = tokens.size();
    std::vector<int32_t> types(n, kNormal);
    if (auto t = f.get_i32_array_opt(kTypesKey)) {
        if (t->size() != n)
            throw Error(ErrorKind::Usage, "synth: " + path.string() + ": " + std::string(kTypesKey) + " has " +
                                              std::to_string(t->size()) + " entries for " + std::to_string(n) + " tokens");
        types = std::move(*t);
    }
    v.source_tokens = n;
    if (size == 0) size = n;

    // new id -> old id (-1: a new filler entry); old id -> new id (-1: dropped).
    std::vector<int64_t> new_to_old;
    std::vector<int64_t> old_to_new(n, -1);
    new_to_old.reserve(size);
    if (size >= n) {
        for (uint64_t i = 0; i < n; ++i) new_to_old.push_back(static_cast<int64_t>(i));
        new_to_old.resize(size, -1);
    } else {
        std::vector<int64_t> specials;
        for (uint64_t i = 0; i < n; ++i)
            if (is_special(types[i], tokens[i])) specials.push_back(static_cast<int64_t>(i));
        if (size < specials.size() + kMinOrdinaryTokens)
            throw Error(ErrorKind::Usage, "synth: --vocab-size " + std::to_string(size) + " is too small for " +
                                              path.string() + ": it needs " + std::to_string(kMinOrdinaryTokens) +
                                              " ordinary tokens plus its " + std::to_string(specials.size()) +
                                              " special tokens (at least " +
                                              std::to_string(specials.size() + kMinOrdinaryTokens) + ")");
        const uint64_t ordinary = size - specials.size();
        for (uint64_t i = 0; i < n && new_to_old.size() < ordinary; ++i)
            if (!is_special(types[i], tokens[i]) && !is_filler(types[i], tokens[i]))
                new_to_old.push_back(static_cast<int64_t>(i));
        // A vocabulary made mostly of fillers could leave too few ordinary tokens: fill with them then.
        for (uint64_t i = 0; i < n && new_to_old.size() < ordinary; ++i)
            if (is_filler(types[i], tokens[i])) new_to_old.push_back(static_cast<int64_t>(i));
        new_to_old.insert(new_to_old.end(), specials.begin(), specials.end());
    }
    for (size_t j = 0; j < new_to_old.size(); ++j)
        if (new_to_old[j] >= 0) old_to_new[static_cast<size_t>(new_to_old[j])] = static_cast<int64_t>(j);

    std::unordered_set<std::string_view> kept;
    v.tokens.reserve(size);
    v.token_types.reserve(size);
    for (size_t j = 0; j < new_to_old.size(); ++j) {
        if (new_to_old[j] >= 0) {
            const auto old = static_cast<size_t>(new_to_old[j]);
            v.tokens.emplace_back(tokens[old]);
            v.token_types.push_back(types[old]);
        } else {
            v.tokens.push_back("[PAD" + std::to_string(j) + "]");
            v.token_types.push_back(kUnused);
        }
    }
    kept.reserve(v.tokens.size());
    for (const auto& t : v.tokens) {
        if (!kept.insert(t).second)
            throw Error(ErrorKind::Usage, "synth: padding " + path.string() + " to " + std::to_string(size) +
                                              " tokens would duplicate the token '" + t + "'");
    }

    if (auto merges = f.get_string_array_opt(kMergesKey)) {
        v.has_merges = true;
        v.merges.reserve(merges->size());
        const bool truncated = size < n;
        std::string joined;
        for (std::string_view m : *merges) {
            if (truncated) {
                const size_t sp = m.find(' ');
                if (sp == std::string_view::npos) {
                    ++v.dropped_merges;
                    continue;
                }
                const auto left = m.substr(0, sp), right = m.substr(sp + 1);
                joined.assign(left);
                joined.append(right);
                if (!kept.count(left) || !kept.count(right) || !kept.count(joined)) {
                    ++v.dropped_merges;
                    continue;
                }
            }
            v.merges.emplace_back(m);
        }
    }

    for (const auto& kv : f.kvs()) {
        if (kv.key.substr(0, 10) != "tokenizer.") continue;
        std::string key(kv.key);
        const gguf::Value& value = kv.value;
        if (kv.key == kTokensKey || kv.key == kTypesKey || kv.key == kMergesKey) {
            v.keys.emplace_back(std::move(key), value);  // written from the fields (add_to)
            continue;
        }
        if (ends_with(kv.key, "_token_id") && (kv.type() == gguf::ValueType::UInt32 || kv.type() == gguf::ValueType::Int32)) {
            const int64_t old = kv.type() == gguf::ValueType::UInt32 ? int64_t{std::get<uint32_t>(value)}
                                                                     : int64_t{std::get<int32_t>(value)};
            const int64_t now = old >= 0 && static_cast<uint64_t>(old) < n ? old_to_new[static_cast<size_t>(old)] : old;
            if (now < 0) {
                v.dropped_keys.push_back(key);
                continue;
            }
            if (kv.type() == gguf::ValueType::UInt32)
                v.keys.emplace_back(std::move(key), gguf::Value(std::in_place_index<4>, static_cast<uint32_t>(now)));
            else
                v.keys.emplace_back(std::move(key), gguf::Value(std::in_place_index<5>, static_cast<int32_t>(now)));
            continue;
        }
        if (kv.type() == gguf::ValueType::Array) {
            const auto& a = std::get<gguf::ArrayValue>(value);
            if (a.count == n && size != n) {  // one entry per token: follow the tokens
                if (a.elem_type == gguf::ValueType::String) {
                    v.dropped_keys.push_back(key);
                    continue;
                }
                const uint64_t es = gguf::value_type_size(a.elem_type);
                std::vector<std::byte> raw(size * es, std::byte{0});
                for (size_t j = 0; j < new_to_old.size(); ++j)
                    if (new_to_old[j] >= 0)
                        std::memcpy(raw.data() + j * es, a.raw.data() + static_cast<size_t>(new_to_old[j]) * es, es);
                v.owned_raw.push_back(std::move(raw));
                gguf::ArrayValue resized;
                resized.elem_type = a.elem_type;
                resized.count = size;
                resized.raw = v.owned_raw.back();
                v.keys.emplace_back(std::move(key), gguf::Value(std::in_place_index<9>, std::move(resized)));
                continue;
            }
        }
        v.keys.emplace_back(std::move(key), value);
    }
    return v;
}

void SynthVocab::add_to(gguf::GgufWriter& w) const {
    bool wrote_types = false;
    for (const auto& [key, value] : keys) {
        if (key == kTokensKey) {
            w.add_string_array(key, std::span<const std::string>(tokens));
        } else if (key == kTypesKey) {
            w.add_array<int32_t>(key, token_types);
            wrote_types = true;
        } else if (key == kMergesKey) {
            w.add_string_array(key, std::span<const std::string>(merges));
        } else {
            w.add_value(key, value);
        }
    }
    if (!wrote_types) w.add_array<int32_t>(std::string(kTypesKey), token_types);
}

std::optional<fs::path> default_vocab_path() {
    const fs::path rel = fs::path("tests") / "data" / "vocab" / "ggml-vocab-qwen35.gguf";
    std::error_code ec;
    if (fs::is_regular_file(rel, ec)) return rel;
    // An installed dense-rt: <prefix>/bin/dense-rt next to <prefix>/share/dense-rt/vocab/.
    if (const auto prefix = install_prefix()) {
        const fs::path installed = *prefix / "share" / "dense-rt" / "vocab" / rel.filename();
        if (fs::is_regular_file(installed, ec)) return installed;
    }
#ifdef DENSE_SOURCE_DIR_FOR_SYNTH
    const fs::path src = fs::path(DENSE_SOURCE_DIR_FOR_SYNTH) / rel;
    if (fs::is_regular_file(src, ec)) return src;
#endif
    return std::nullopt;
}

}  // namespace dense::synth
