// The type table the fuzzer and its seed corpus share: the built-ins plus one pack format, so the
// `dense.type.<id>` path (ids >= 1024) is reachable from the corpus.
#pragma once

#include "core/type_table.hpp"

namespace dense::gguf::fuzz {

inline constexpr const char* kPackTypeName = "fuzz.q4x";

// Built once; the pack format gets id DENSE_TYPE_FIRST_RUNTIME in both programs.
const TypeTable& fuzz_type_table();

}  // namespace dense::gguf::fuzz
