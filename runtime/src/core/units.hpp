// Human byte sizes: "8GiB", "16 GB", "512MiB", "1.5GiB", "123456" (bytes). Binary (KiB/MiB/GiB/TiB)
// and decimal (KB/MB/GB/TB) suffixes; case-insensitive. Used by configs and --vram-budget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dense {

std::optional<uint64_t> parse_byte_size(std::string_view text) noexcept;

// "15.50 GiB" / "512.0 MiB" / "17 B": for bills and listings.
std::string format_bytes(uint64_t bytes);

}  // namespace dense
