// Whole-number tuning knobs read from the environment (DENSE_BUS_SLOTS, DENSE_BUS_STREAMS, ...).
#pragma once

#include <cstdint>

namespace dense {

// $name as a whole number in [lo, hi] (digits only), or `fallback` when unset or empty. Anything
// else is dense::Error(Usage) naming the variable and the range.
uint64_t env_whole_number(const char* name, uint64_t fallback, uint64_t lo, uint64_t hi);

}  // namespace dense
