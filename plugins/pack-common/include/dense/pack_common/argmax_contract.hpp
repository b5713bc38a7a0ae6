// The call contract of ARGMAX (dense_abi.h, ABI 1.12), one for every pack, as norm_contracts.hpp:
// returns "" with n filled in, or the first thing wrong with the call (one line naming the view).
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::pack_common {

// ARGMAX: exactly one source x {n} F32 (contiguous, 1 <= n < 2^31) and one destination I32 {1}, apart from x.
std::string check_argmax_call(const dense_op_call& c, int64_t& n);

}  // namespace dense::pack_common
