#include "plan/bus_staging.hpp"

#include "core/env_number.hpp"
#include "plan/bus_share.hpp"
#include "plan/prefill_graph.hpp"

namespace dense::plan {

uint32_t bus_staging_slots() { return static_cast<uint32_t>(env_whole_number("DENSE_BUS_SLOTS", kBusStagingSlots, 2, 256)); }

uint64_t bus_staging_slot_bytes() {
    return env_whole_number("DENSE_BUS_SLOT_MIB", kBusStagingSlotBytes >> 20, 1, 1024) << 20;
}

uint64_t bus_staging_bytes(double bus_read_share, const Placement* split, int64_t prefill_chunk, dense_device_kind kind) {
    const bool batches = (prefill_chunk < 0 ? default_prefill_chunk(kind) : prefill_chunk) > 1;
    // `auto` (plan/bus_share.hpp) may choose any share on a GPU, so it is billed as a positive one.
    const bool shares = bus_read_share > 0 || (is_auto_bus_share(bus_read_share) && kind != DENSE_DEVICE_CPU);
    return split != nullptr && split->splits_any() && (shares || batches)
               ? bus_staging_slots() * bus_staging_slot_bytes()
               : 0;
}

}  // namespace dense::plan
