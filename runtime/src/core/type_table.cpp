#include "core/type_table.hpp"

#include "core/error.hpp"

#include <array>
#include <limits>

namespace dense {
namespace {

// ggml type names by id for the llama.cpp release we follow (GGML_TYPE_COUNT = 43). Empty = retired.
constexpr std::array<std::string_view, DENSE_TYPE_GGML_COUNT> kGgmlNames = {
    "f32",    "f16",     "q4_0",   "q4_1",  "",       "",      "q5_0",  "q5_1",  "q8_0",  "q8_1",
    "q2_k",   "q3_k",    "q4_k",   "q5_k",  "q6_k",   "q8_k",  "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s",
    "iq4_nl", "iq3_s",   "iq2_s",  "iq4_xs", "i8",    "i16",   "i32",   "i64",   "f64",   "iq1_m",
    "bf16",   "",        "",       "",      "tq1_0",  "tq2_0", "",      "",      "",      "mxfp4",
    "nvfp4",  "q1_0",    "q2_0"};

TypeInfo builtin(dense_type_id id, uint32_t be, uint32_t bb, dense_type_id act, bool storable) {
    TypeInfo t;
    t.id = id;
    t.name = std::string(kGgmlNames[id]);
    t.block_elements = be;
    t.block_bytes = bb;
    t.act_type = act;
    t.storable = storable;
    t.builtin = true;
    return t;
}

// dense-rt's GPU activation format (dense_abi.h): 32 int8 codes + float d + float s per block.
TypeInfo q8_32() {
    TypeInfo t;
    t.id = DENSE_TYPE_Q8_32;
    t.name = "q8_32";
    t.block_elements = 32;
    t.block_bytes = 40;
    t.act_type = DENSE_TYPE_NONE;
    t.storable = false;
    t.builtin = true;
    return t;
}

}  // namespace

TypeTable::TypeTable() {
    // Sizes from spec/quant-formats.md section 1.
    types_ = {
        builtin(DENSE_TYPE_F32, 1, 4, DENSE_TYPE_F32, true),
        builtin(DENSE_TYPE_F16, 1, 2, DENSE_TYPE_F16, true),
        builtin(DENSE_TYPE_BF16, 1, 2, DENSE_TYPE_BF16, true),
        builtin(DENSE_TYPE_Q8_0, 32, 34, DENSE_TYPE_Q8_0, true),
        builtin(DENSE_TYPE_Q8_1, 32, 36, DENSE_TYPE_NONE, false),
        builtin(DENSE_TYPE_Q2_K, 256, 84, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_Q3_K, 256, 110, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_Q4_K, 256, 144, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_Q5_K, 256, 176, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_Q6_K, 256, 210, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_Q8_K, 256, 292, DENSE_TYPE_NONE, false),
        builtin(DENSE_TYPE_IQ2_XS, 256, 74, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_IQ3_XXS, 256, 98, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_IQ4_NL, 32, 18, DENSE_TYPE_Q8_0, true),
        builtin(DENSE_TYPE_IQ3_S, 256, 110, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_IQ2_S, 256, 82, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_IQ4_XS, 256, 136, DENSE_TYPE_Q8_K, true),
        builtin(DENSE_TYPE_I32, 1, 4, DENSE_TYPE_NONE, false),  // op inputs (positions, ids); never a weight
        q8_32(),
    };
}

const TypeInfo* TypeTable::find(dense_type_id id) const noexcept {
    for (const auto& t : types_)
        if (t.id == id) return &t;
    return nullptr;
}

const TypeInfo* TypeTable::find(std::string_view name) const noexcept {
    for (const auto& t : types_)
        if (t.name == name) return &t;
    return nullptr;
}

dense_type_id TypeTable::register_runtime(const std::string& name, uint32_t block_elements, uint32_t block_bytes,
                                          dense_type_id act_type) {
    if (name.find('.') == std::string::npos || name.front() == '.' || name.back() == '.')
        throw Error(ErrorKind::Pack, "type name '" + name + "' must be namespaced as '<vendor>.<format>'");
    if (find(name) != nullptr) throw Error(ErrorKind::Pack, "type name '" + name + "' is already registered");
    if (block_elements == 0 || block_bytes == 0)
        throw Error(ErrorKind::Pack, "type '" + name + "' declares a zero block size");
    if (act_type != DENSE_TYPE_NONE && find(act_type) == nullptr)
        throw Error(ErrorKind::Pack, "type '" + name + "' pairs with unknown activation type " + std::to_string(act_type));
    TypeInfo t;
    t.id = next_runtime_id_++;
    t.name = name;
    t.block_elements = block_elements;
    t.block_bytes = block_bytes;
    t.act_type = act_type;
    t.storable = true;
    t.builtin = false;
    types_.push_back(t);
    return t.id;
}

bool TypeTable::remove_runtime(dense_type_id id) noexcept {
    for (auto it = types_.begin(); it != types_.end(); ++it) {
        if (it->id != id) continue;
        if (it->builtin) return false;
        types_.erase(it);
        return true;
    }
    return false;
}

GgmlIdStatus TypeTable::classify_ggml_id(int64_t id) noexcept {
    if (id < 0 || id >= DENSE_TYPE_GGML_COUNT) return GgmlIdStatus::OutOfRange;
    if (kGgmlNames[static_cast<size_t>(id)].empty()) return GgmlIdStatus::Retired;
    switch (id) {
        case DENSE_TYPE_F32: case DENSE_TYPE_F16: case DENSE_TYPE_BF16: case DENSE_TYPE_Q8_0:
        case DENSE_TYPE_Q2_K: case DENSE_TYPE_Q3_K: case DENSE_TYPE_Q4_K: case DENSE_TYPE_Q5_K:
        case DENSE_TYPE_Q6_K: case DENSE_TYPE_IQ2_XS: case DENSE_TYPE_IQ2_S: case DENSE_TYPE_IQ3_XXS:
        case DENSE_TYPE_IQ3_S: case DENSE_TYPE_IQ4_NL: case DENSE_TYPE_IQ4_XS:
            return GgmlIdStatus::Supported;
        default:
            return GgmlIdStatus::KnownUnsupported;
    }
}

std::string_view TypeTable::ggml_name(int64_t id) noexcept {
    if (id < 0 || id >= DENSE_TYPE_GGML_COUNT) return {};
    return kGgmlNames[static_cast<size_t>(id)];
}

std::optional<uint64_t> TypeTable::row_bytes(const TypeInfo& t, int64_t n) noexcept {
    if (n < 0 || t.block_elements == 0 || n % t.block_elements != 0) return std::nullopt;
    const uint64_t blocks = static_cast<uint64_t>(n) / t.block_elements;
    if (blocks > std::numeric_limits<uint64_t>::max() / t.block_bytes) return std::nullopt;
    return blocks * t.block_bytes;
}

TypeTable& global_type_table() {
    static TypeTable table;
    return table;
}

}  // namespace dense
