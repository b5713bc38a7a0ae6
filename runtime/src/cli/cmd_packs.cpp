// Placeholder until the pack loader lands (being written now); replaced by the real listing.
#include "cli/commands.hpp"
#include "core/error.hpp"

namespace dense::cli {
int cmd_packs(const packs::PackPolicy&, bool) { throw Error(ErrorKind::Internal, "packs: loader not built yet"); }
}  // namespace dense::cli
