// The call contract of TOP_K (dense_abi.h, ABI 1.15), one for every pack, as argmax_contract.hpp:
// returns "" with n and k filled in, or the first thing wrong with the call (one line naming the view).
#pragma once

#include <dense/abi/dense_abi.h>

#include <cstdint>
#include <string>

namespace dense::pack_common {

// TOP_K: exactly one source x {n} F32 (contiguous, 1 <= n < 2^31) and two destinations, ids I32 {k}
// and values F32 {k} (contiguous, 1 <= k <= DENSE_TOP_K_MAX), apart from x and from each other.
std::string check_top_k_call(const dense_op_call& c, int64_t& n, int64_t& k);

}  // namespace dense::pack_common
