// What `dense-rt packs` prints: devices, packs (status, ABI, reason), scores per device, the chosen
// pack per device and the ops x types each initialised pack registers. The same content as a
// readable table and as JSON, both built from a loaded PackManager.
#pragma once

#include "packs/pack_manager.hpp"

#include <string>

namespace dense::packs {

// Readable text, several small tables, ending with a newline.
std::string packs_report_text(const PackManager& manager);

// The same content as pretty-printed JSON (keys documented in pack_report.cpp).
std::string packs_report_json(const PackManager& manager);

}  // namespace dense::packs
