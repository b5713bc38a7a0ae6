// The process's resident memory (RSS): what the weight upload tries to keep small, reported in the
// upload summary and by `dense-rt bench`. Read from /proc/self/statm (Linux).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dense::exec {

// Resident bytes of this process now; std::nullopt where /proc/self/statm cannot be read.
std::optional<uint64_t> resident_bytes();

// The resident size in /proc/self/statm text ("size resident shared text lib data dt", in pages)
// times `page_bytes`; std::nullopt if the text does not have that form.
std::optional<uint64_t> parse_statm_resident(std::string_view statm, uint64_t page_bytes);

}  // namespace dense::exec
