#include "gguf/gguf_error.hpp"

namespace dense::gguf {

std::string_view rule_name(Rule r) noexcept {
    switch (r) {
        case Rule::Truncated: return "truncated";
        case Rule::Header: return "header";
        case Rule::Version: return "version";
        case Rule::Counts: return "counts";
        case Rule::StringLength: return "string-length";
        case Rule::ArrayCount: return "array-count";
        case Rule::ArrayElementType: return "array-element-type";
        case Rule::Key: return "key";
        case Rule::ValueType: return "value-type";
        case Rule::Alignment: return "alignment";
        case Rule::TensorName: return "tensor-name";
        case Rule::TensorDims: return "tensor-dims";
        case Rule::TensorType: return "tensor-type";
        case Rule::BlockMultiple: return "block-multiple";
        case Rule::TensorBytesOverflow: return "tensor-bytes-overflow";
        case Rule::TensorOffset: return "tensor-offset";
        case Rule::DataBounds: return "data-bounds";
    }
    return "unknown";
}

// The enum is declared in spec order, so the number is the position.
static_assert(static_cast<int>(Rule::Header) == 1 && static_cast<int>(Rule::DataBounds) == 16);
int spec_rule_number(Rule r) noexcept { return static_cast<int>(r); }

namespace {

std::string compose(Rule rule, const std::string& path, uint64_t offset, const std::string& field,
                    const std::string& detail) {
    std::string rule_text = rule == Rule::Truncated
                                ? std::string("truncated")
                                : "rule " + std::to_string(spec_rule_number(rule)) + " " + std::string(rule_name(rule));
    return path + ": byte " + std::to_string(offset) + ": " + detail + " (" + rule_text + ", field " + field + ")";
}

}  // namespace

GgufError::GgufError(Rule rule, std::string path, uint64_t offset, std::string field, std::string detail)
    : Error(ErrorKind::Format, compose(rule, path, offset, field, detail)),
      rule_(rule),
      path_(std::move(path)),
      offset_(offset),
      field_(std::move(field)),
      detail_(std::move(detail)) {}

}  // namespace dense::gguf
