// Typed, strict access to a parsed GgufFile's metadata (parsing itself is in gguf_reader.cpp).
#include "gguf/gguf_file.hpp"

#include <limits>

namespace dense::gguf {
namespace {

std::string kv_where(const KeyValue& kv, const std::vector<KeyValue>& all) {
    const auto index = static_cast<size_t>(&kv - all.data());
    return "key '" + printable(kv.key) + "' (kv[" + std::to_string(index) + "] at byte " + std::to_string(kv.offset) +
           ")";
}

std::string stored_type_text(const Value& v) {
    if (const auto* a = std::get_if<ArrayValue>(&v))
        return "ARRAY of " + std::string(value_type_name(a->elem_type));
    return std::string(value_type_name(type_of(v)));
}

template <class T>
constexpr ValueType wanted_type() noexcept {
    if constexpr (std::is_same_v<T, std::string_view>) return ValueType::String;
    else return value_type_of_v<T>;
}

}  // namespace

const KeyValue* GgufFile::find_kv(std::string_view key) const noexcept {
    const auto it = kv_index_.find(key);
    return it == kv_index_.end() ? nullptr : &kvs_[it->second];
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const noexcept {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void GgufFile::missing(std::string_view key) const {
    throw Error(ErrorKind::Model, path_ + ": required key '" + printable(key) + "' is missing");
}

template <class T>
std::optional<T> GgufFile::scalar_opt(std::string_view key) const {
    const KeyValue* kv = find_kv(key);
    if (kv == nullptr) return std::nullopt;
    if (const T* v = std::get_if<T>(&kv->value)) return *v;
    constexpr ValueType want = wanted_type<T>();
    throw Error(ErrorKind::Model, path_ + ": " + kv_where(*kv, kvs_) + " has type " + stored_type_text(kv->value) +
                                      ", expected " + std::string(value_type_name(want)));
}

template <class T>
T GgufFile::scalar(std::string_view key) const {
    auto v = scalar_opt<T>(key);
    if (!v) missing(key);
    return *v;
}

// clang-format off
uint8_t GgufFile::get_u8(std::string_view key) const { return scalar<uint8_t>(key); }
int8_t GgufFile::get_i8(std::string_view key) const { return scalar<int8_t>(key); }
uint16_t GgufFile::get_u16(std::string_view key) const { return scalar<uint16_t>(key); }
int16_t GgufFile::get_i16(std::string_view key) const { return scalar<int16_t>(key); }
uint32_t GgufFile::get_u32(std::string_view key) const { return scalar<uint32_t>(key); }
int32_t GgufFile::get_i32(std::string_view key) const { return scalar<int32_t>(key); }
uint64_t GgufFile::get_u64(std::string_view key) const { return scalar<uint64_t>(key); }
int64_t GgufFile::get_i64(std::string_view key) const { return scalar<int64_t>(key); }
float GgufFile::get_f32(std::string_view key) const { return scalar<float>(key); }
double GgufFile::get_f64(std::string_view key) const { return scalar<double>(key); }
bool GgufFile::get_bool(std::string_view key) const { return scalar<bool>(key); }
std::string_view GgufFile::get_string(std::string_view key) const { return scalar<std::string_view>(key); }

std::optional<uint8_t> GgufFile::get_u8_opt(std::string_view key) const { return scalar_opt<uint8_t>(key); }
std::optional<int8_t> GgufFile::get_i8_opt(std::string_view key) const { return scalar_opt<int8_t>(key); }
std::optional<uint16_t> GgufFile::get_u16_opt(std::string_view key) const { return scalar_opt<uint16_t>(key); }
std::optional<int16_t> GgufFile::get_i16_opt(std::string_view key) const { return scalar_opt<int16_t>(key); }
std::optional<uint32_t> GgufFile::get_u32_opt(std::string_view key) const { return scalar_opt<uint32_t>(key); }
std::optional<int32_t> GgufFile::get_i32_opt(std::string_view key) const { return scalar_opt<int32_t>(key); }
std::optional<uint64_t> GgufFile::get_u64_opt(std::string_view key) const { return scalar_opt<uint64_t>(key); }
std::optional<int64_t> GgufFile::get_i64_opt(std::string_view key) const { return scalar_opt<int64_t>(key); }
std::optional<float> GgufFile::get_f32_opt(std::string_view key) const { return scalar_opt<float>(key); }
std::optional<double> GgufFile::get_f64_opt(std::string_view key) const { return scalar_opt<double>(key); }
std::optional<bool> GgufFile::get_bool_opt(std::string_view key) const { return scalar_opt<bool>(key); }
std::optional<std::string_view> GgufFile::get_string_opt(std::string_view key) const {
    return scalar_opt<std::string_view>(key);
}
// clang-format on

// The array stored under `key` if its element type is one of `accepted`; nullptr if absent; throws
// naming key, expected and actual type otherwise.
const ArrayValue* GgufFile::array_of(std::string_view key, std::initializer_list<ValueType> accepted,
                                     std::string_view expected_text) const {
    const KeyValue* kv = find_kv(key);
    if (kv == nullptr) return nullptr;
    if (const auto* a = std::get_if<ArrayValue>(&kv->value)) {
        for (ValueType t : accepted)
            if (a->elem_type == t) return a;
    }
    throw Error(ErrorKind::Model, path_ + ": " + kv_where(*kv, kvs_) + " has type " + stored_type_text(kv->value) +
                                      ", expected " + std::string(expected_text));
}

// Integer arrays: llama.cpp's loader reads INT32, UINT32 and BOOL element arrays into integer
// arrays interchangeably (spec 3.3); values are converted only when they fit.
template <class T>
std::optional<std::vector<T>> GgufFile::int_array_opt(std::string_view key) const {
    const ArrayValue* a = array_of(key, {ValueType::Int32, ValueType::UInt32, ValueType::Bool},
                                   "ARRAY of INT32, UINT32 or BOOL");
    if (a == nullptr) return std::nullopt;
    std::vector<T> out;
    out.reserve(a->count);
    for (uint64_t i = 0; i < a->count; ++i) {
        int64_t v = 0;
        switch (a->elem_type) {
            case ValueType::Int32: v = a->at<int32_t>(i); break;
            case ValueType::UInt32: v = a->at<uint32_t>(i); break;
            default: v = a->at<bool>(i) ? 1 : 0; break;
        }
        if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
            v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
            throw Error(ErrorKind::Model, path_ + ": " + kv_where(*find_kv(key), kvs_) + " element [" +
                                              std::to_string(i) + "] = " + std::to_string(v) + " does not fit in " +
                                              std::string(value_type_name(value_type_of_v<T>)));
        }
        out.push_back(static_cast<T>(v));
    }
    return out;
}

std::optional<std::vector<int32_t>> GgufFile::get_i32_array_opt(std::string_view key) const {
    return int_array_opt<int32_t>(key);
}
std::optional<std::vector<uint32_t>> GgufFile::get_u32_array_opt(std::string_view key) const {
    return int_array_opt<uint32_t>(key);
}

std::optional<std::vector<bool>> GgufFile::get_bool_array_opt(std::string_view key) const {
    const ArrayValue* a = array_of(key, {ValueType::Bool, ValueType::Int32, ValueType::UInt32},
                                   "ARRAY of BOOL, INT32 or UINT32");
    if (a == nullptr) return std::nullopt;
    std::vector<bool> out(a->count);
    for (uint64_t i = 0; i < a->count; ++i) {
        switch (a->elem_type) {
            case ValueType::Bool: out[i] = a->at<bool>(i); break;
            case ValueType::Int32: out[i] = a->at<int32_t>(i) != 0; break;
            default: out[i] = a->at<uint32_t>(i) != 0; break;
        }
    }
    return out;
}

std::optional<std::vector<float>> GgufFile::get_f32_array_opt(std::string_view key) const {
    const ArrayValue* a = array_of(key, {ValueType::Float32}, "ARRAY of FLOAT32");
    if (a == nullptr) return std::nullopt;
    std::vector<float> out(a->count);
    for (uint64_t i = 0; i < a->count; ++i) out[i] = a->at<float>(i);
    return out;
}

std::optional<std::span<const std::string_view>> GgufFile::get_string_array_opt(std::string_view key) const {
    const ArrayValue* a = array_of(key, {ValueType::String}, "ARRAY of STRING");
    if (a == nullptr) return std::nullopt;
    return std::span<const std::string_view>(a->strings);
}

const ArrayValue* GgufFile::get_array_opt(std::string_view key) const {
    const KeyValue* kv = find_kv(key);
    if (kv == nullptr) return nullptr;
    if (const auto* a = std::get_if<ArrayValue>(&kv->value)) return a;
    throw Error(ErrorKind::Model, path_ + ": " + kv_where(*kv, kvs_) + " has type " + stored_type_text(kv->value) +
                                      ", expected ARRAY");
}

std::vector<int32_t> GgufFile::get_i32_array(std::string_view key) const {
    auto v = get_i32_array_opt(key);
    if (!v) missing(key);
    return std::move(*v);
}
std::vector<uint32_t> GgufFile::get_u32_array(std::string_view key) const {
    auto v = get_u32_array_opt(key);
    if (!v) missing(key);
    return std::move(*v);
}
std::vector<bool> GgufFile::get_bool_array(std::string_view key) const {
    auto v = get_bool_array_opt(key);
    if (!v) missing(key);
    return std::move(*v);
}
std::vector<float> GgufFile::get_f32_array(std::string_view key) const {
    auto v = get_f32_array_opt(key);
    if (!v) missing(key);
    return std::move(*v);
}
std::span<const std::string_view> GgufFile::get_string_array(std::string_view key) const {
    auto v = get_string_array_opt(key);
    if (!v) missing(key);
    return *v;
}
const ArrayValue& GgufFile::get_array(std::string_view key) const {
    const ArrayValue* a = get_array_opt(key);
    if (a == nullptr) missing(key);
    return *a;
}

}  // namespace dense::gguf
