#include "plan/bus_staging.hpp"

#include "core/error.hpp"

#include <cstdlib>
#include <string>

namespace dense::plan {

namespace {

uint64_t env_or(const char* name, uint64_t fallback, uint64_t lo, uint64_t hi) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end == v || *end != '\0' || n < lo || n > hi)
        throw Error(ErrorKind::Usage, std::string(name) + " must be a whole number from " + std::to_string(lo) + " to " +
                                          std::to_string(hi) + ", got '" + v + "'");
    return n;
}

}  // namespace

uint32_t bus_staging_slots() { return static_cast<uint32_t>(env_or("DENSE_BUS_SLOTS", kBusStagingSlots, 2, 256)); }

uint64_t bus_staging_slot_bytes() {
    return env_or("DENSE_BUS_SLOT_MIB", kBusStagingSlotBytes >> 20, 1, 1024) << 20;
}

uint64_t bus_staging_bytes(double bus_read_share, const Placement* split) {
    return split != nullptr && split->splits_any() && bus_read_share > 0 ? bus_staging_slots() * bus_staging_slot_bytes()
                                                                         : 0;
}

}  // namespace dense::plan
