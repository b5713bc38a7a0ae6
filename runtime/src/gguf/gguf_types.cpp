#include "gguf/gguf_types.hpp"

#include <cstdio>

namespace dense::gguf {

std::string_view value_type_name(ValueType t) noexcept {
    switch (t) {
        case ValueType::UInt8: return "UINT8";
        case ValueType::Int8: return "INT8";
        case ValueType::UInt16: return "UINT16";
        case ValueType::Int16: return "INT16";
        case ValueType::UInt32: return "UINT32";
        case ValueType::Int32: return "INT32";
        case ValueType::Float32: return "FLOAT32";
        case ValueType::Bool: return "BOOL";
        case ValueType::String: return "STRING";
        case ValueType::Array: return "ARRAY";
        case ValueType::UInt64: return "UINT64";
        case ValueType::Int64: return "INT64";
        case ValueType::Float64: return "FLOAT64";
    }
    return "UNKNOWN";
}

namespace {

template <class T>
bool same_bits(const T& a, const T& b) noexcept {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

bool same_array(const ArrayValue& a, const ArrayValue& b) noexcept {
    if (a.elem_type != b.elem_type || a.count != b.count) return false;
    if (a.elem_type == ValueType::String) return a.strings == b.strings;
    if (a.elem_type == ValueType::Bool) {  // any non-zero byte is true: compare meaning, not bytes
        for (uint64_t i = 0; i < a.count; ++i)
            if (a.at<bool>(i) != b.at<bool>(i)) return false;
        return true;
    }
    return a.raw.size() == b.raw.size() &&
           (a.raw.empty() || std::memcmp(a.raw.data(), b.raw.data(), a.raw.size()) == 0);
}

}  // namespace

bool same_value(const Value& a, const Value& b) noexcept {
    if (a.index() != b.index()) return false;
    return std::visit(
        [&](const auto& x) -> bool {
            using T = std::decay_t<decltype(x)>;
            const auto& y = std::get<T>(b);
            if constexpr (std::is_same_v<T, ArrayValue>) return same_array(x, y);
            else if constexpr (std::is_same_v<T, std::string_view>) return x == y;
            else if constexpr (std::is_same_v<T, bool>) return x == y;
            else return same_bits(x, y);
        },
        a);
}

std::string printable(std::string_view bytes, size_t max_len) {
    std::string out;
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (out.size() >= max_len) {
            out += "...";
            break;
        }
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return out;
}

std::string describe_value(const Value& v) {
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, ArrayValue>) {
                return "[" + std::string(value_type_name(x.elem_type)) + " x " + std::to_string(x.count) + "]";
            } else if constexpr (std::is_same_v<T, std::string_view>) {
                return "\"" + printable(x) + "\"";
            } else if constexpr (std::is_same_v<T, bool>) {
                return x ? "true" : "false";
            } else if constexpr (std::is_floating_point_v<T>) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
                return buf;
            } else {
                return std::to_string(x);
            }
        },
        v);
}

}  // namespace dense::gguf
