#include "fuzz_types.hpp"

namespace dense::gguf::fuzz {

const TypeTable& fuzz_type_table() {
    static const TypeTable table = [] {
        TypeTable t;
        t.register_runtime(kPackTypeName, 32, 20, DENSE_TYPE_Q8_0);
        return t;
    }();
    return table;
}

}  // namespace dense::gguf::fuzz
