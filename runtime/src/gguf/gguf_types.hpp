// GGUF metadata value types and the in-memory representation of one metadata value.
//
// Values read from a file do not own their bytes: strings are string_views and numeric arrays are
// spans into the file's bytes (the mapping), so a 250k-entry vocabulary costs one string_view per
// token instead of one heap string each. They stay valid as long as the GgufFile that produced them.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace dense::gguf {

static_assert(std::endian::native == std::endian::little,
              "the GGUF code reads little-endian fields by memcpy; a big-endian host needs byte swaps");

// The id stored in the file (spec section 3.1). The numbering is the GGUF one, do not reorder.
enum class ValueType : uint32_t {
    UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5, Float32 = 6, Bool = 7,
    String = 8, Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

// "UINT32", "ARRAY", ... as in the spec; "type#N" style names are produced by callers for unknown ids.
std::string_view value_type_name(ValueType t) noexcept;

// Encoded size of one value of a fixed-size type; 0 for STRING and ARRAY (variable size).
constexpr uint64_t value_type_size(ValueType t) noexcept {
    switch (t) {
        case ValueType::UInt8: case ValueType::Int8: case ValueType::Bool: return 1;
        case ValueType::UInt16: case ValueType::Int16: return 2;
        case ValueType::UInt32: case ValueType::Int32: case ValueType::Float32: return 4;
        case ValueType::UInt64: case ValueType::Int64: case ValueType::Float64: return 8;
        case ValueType::String: case ValueType::Array: return 0;
    }
    return 0;
}

// An array value: element type plus elements. Fixed-size elements stay as their raw little-endian
// bytes (`raw`, count * value_type_size bytes, not necessarily aligned); string elements are views.
struct ArrayValue {
    ValueType elem_type = ValueType::UInt8;
    uint64_t count = 0;
    std::span<const std::byte> raw;           // fixed-size element types only
    std::vector<std::string_view> strings;    // elem_type == String only

    // Element i of a fixed-size array decoded as T (T must match the element's encoded size;
    // bools are decoded with any non-zero byte meaning true). No bounds check: i < count.
    template <class T>
    T at(uint64_t i) const noexcept {
        static_assert(std::is_arithmetic_v<T>);
        if constexpr (std::is_same_v<T, bool>) {
            return raw[i] != std::byte{0};
        } else {
            T v;
            std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
            return v;
        }
    }
};

// One metadata value. The variant index IS the GGUF value type id (UINT8 = 0 ... FLOAT64 = 12),
// so `static_cast<ValueType>(v.index())` names the stored type; construct with std::in_place_index.
using Value = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string_view,
                           ArrayValue, uint64_t, int64_t, double>;
static_assert(std::variant_size_v<Value> == kValueTypeCount);

inline ValueType type_of(const Value& v) noexcept { return static_cast<ValueType>(v.index()); }

// Maps a C++ scalar type to its GGUF value type (used by the writer's typed adders and by tests).
template <class T> struct value_type_of;
template <> struct value_type_of<uint8_t> { static constexpr ValueType value = ValueType::UInt8; };
template <> struct value_type_of<int8_t> { static constexpr ValueType value = ValueType::Int8; };
template <> struct value_type_of<uint16_t> { static constexpr ValueType value = ValueType::UInt16; };
template <> struct value_type_of<int16_t> { static constexpr ValueType value = ValueType::Int16; };
template <> struct value_type_of<uint32_t> { static constexpr ValueType value = ValueType::UInt32; };
template <> struct value_type_of<int32_t> { static constexpr ValueType value = ValueType::Int32; };
template <> struct value_type_of<float> { static constexpr ValueType value = ValueType::Float32; };
template <> struct value_type_of<bool> { static constexpr ValueType value = ValueType::Bool; };
template <> struct value_type_of<uint64_t> { static constexpr ValueType value = ValueType::UInt64; };
template <> struct value_type_of<int64_t> { static constexpr ValueType value = ValueType::Int64; };
template <> struct value_type_of<double> { static constexpr ValueType value = ValueType::Float64; };
template <class T> inline constexpr ValueType value_type_of_v = value_type_of<T>::value;

// Bitwise equality (NaNs with the same bits compare equal, -0.0 != +0.0): what a round trip must keep.
bool same_value(const Value& a, const Value& b) noexcept;

// Short human-readable rendering for messages and debugging ("42", "\"gpt2\"", "[INT32 x 4]").
std::string describe_value(const Value& v);

// Renders bytes from a file for a message: printable ASCII as is, the rest as \xNN, cut to max_len.
std::string printable(std::string_view bytes, size_t max_len = 80);

}  // namespace dense::gguf
