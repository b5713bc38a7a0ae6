// Facts about tensor element types: ggml's built-in formats (ids < 1024, as stored in GGUF files)
// and formats that kernel packs register at run time (ids >= 1024). The GGUF reader, the model
// binding and the planner all size tensors through this table, so a pack's new format is a
// first-class citizen everywhere once it is registered.
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dense {

struct TypeInfo {
    dense_type_id id = DENSE_TYPE_NONE;
    std::string name;            // "q4_k", "f32", or a namespaced runtime name "vendor.format"
    uint32_t block_elements = 0; // elements per block
    uint32_t block_bytes = 0;    // bytes per block
    dense_type_id act_type = DENSE_TYPE_NONE;  // activation format its dot product pairs with (CPU)
    bool storable = false;       // may appear as a tensor type in a model file
    bool builtin = true;
};

// What the reader should say about a ggml id it cannot use.
enum class GgmlIdStatus { Supported, KnownUnsupported, Retired, OutOfRange };

class TypeTable {
public:
    // The built-in table: F32, F16, BF16, Q8_0, Q2_K..Q6_K, Q8_K (activation only), IQ2_XS, IQ2_S,
    // IQ3_XXS, IQ3_S, IQ4_NL, IQ4_XS, Q8_1 (activation only).
    TypeTable();

    const TypeInfo* find(dense_type_id id) const noexcept;
    const TypeInfo* find(std::string_view name) const noexcept;

    // Registers a runtime format; returns its new id. Throws dense::Error (Pack) on a name clash,
    // a name without a namespace ('.'), or zero sizes.
    dense_type_id register_runtime(const std::string& name, uint32_t block_elements, uint32_t block_bytes,
                                   dense_type_id act_type);

    // Removes a runtime format again (a pack whose initialisation failed after registering it).
    // Returns false if id is not a registered runtime format. Its id is not handed out again.
    // Invalidates pointers returned by find().
    bool remove_runtime(dense_type_id id) noexcept;

    const std::vector<TypeInfo>& all() const noexcept { return types_; }

    // Classifies a ggml id found in a file (for precise error messages).
    static GgmlIdStatus classify_ggml_id(int64_t id) noexcept;
    // ggml's name for any id in [0, 43), e.g. "q4_0" for 2; "" if retired or out of range.
    static std::string_view ggml_name(int64_t id) noexcept;

    // Bytes of a row of n elements; nullopt if n is not a multiple of the block size or overflows.
    static std::optional<uint64_t> row_bytes(const TypeInfo& t, int64_t n) noexcept;

private:
    std::vector<TypeInfo> types_;
    dense_type_id next_runtime_id_ = DENSE_TYPE_FIRST_RUNTIME;
};

// The process-wide table (built-ins plus whatever loaded packs registered).
TypeTable& global_type_table();

}  // namespace dense
