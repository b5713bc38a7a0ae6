// The error a GGUF file's bytes raise when they break a rule of spec/gguf-format.md section 6.
// It says which rule, which field, at which byte of which file, so a user can find the damage with
// a hex editor and a test can assert the exact reason a file was refused.
#pragma once

#include "core/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace dense::gguf {

// One value per validation rule of spec section 6 (the number in the comment), plus Truncated for a
// fixed-size field that runs past the end of the file.
enum class Rule : uint8_t {
    Truncated,            //  -: a fixed-size field (count, type, dimension, offset, ...) ends past EOF
    Header,               //  1: file shorter than 24 bytes, or magic != "GGUF"
    Version,              //  2: version 0, 1, > 3, or byte-swapped (big-endian file)
    Counts,               //  3: tensor/KV count negative or more than the remaining bytes can hold
    StringLength,         //  4: string length > 1 GiB or > remaining bytes
    ArrayCount,           //  5: array count > 2^30 or count * element size > remaining bytes
    ArrayElementType,     //  6: array element type unknown or ARRAY (nested)
    Key,                  //  7: empty or duplicate key
    ValueType,            //  8: value type not in 0..12
    Alignment,            //  9: general.alignment not UINT32, zero, or not a power of two
    TensorName,           // 10: tensor name longer than 63 bytes, or duplicate
    TensorDims,           // 11: n_dims > 4, ne < 0, or element count overflows int64
    TensorType,           // 12: type id out of range, retired, unsupported, not storable, unknown runtime name
    BlockMultiple,        // 13: ne[0] not a multiple of the type's block size
    TensorBytesOverflow,  // 14: tensor byte size overflows
    TensorOffset,         // 15: offset != running padded sum of the previous tensors
    DataBounds,           // 16: padded sum overflows, or tensor data ends past the end of the file
};

// Short stable name ("truncated", "header", ..., "data-bounds") used in messages.
std::string_view rule_name(Rule r) noexcept;
// The spec section 6 rule number (1..16); 0 for Truncated.
int spec_rule_number(Rule r) noexcept;

class GgufError : public Error {
public:
    // detail: what is wrong, e.g. "tensor 'x' ne[0]=100 is not a multiple of the q4_k block size 256".
    GgufError(Rule rule, std::string path, uint64_t offset, std::string field, std::string detail);

    Rule rule() const noexcept { return rule_; }
    const std::string& path() const noexcept { return path_; }
    uint64_t offset() const noexcept { return offset_; }  // byte in the file where the bad field starts
    const std::string& field() const noexcept { return field_; }  // e.g. "tensor_info[3].ne[1]"
    const std::string& detail() const noexcept { return detail_; }

private:
    Rule rule_;
    std::string path_;
    uint64_t offset_;
    std::string field_;
    std::string detail_;
};

}  // namespace dense::gguf
