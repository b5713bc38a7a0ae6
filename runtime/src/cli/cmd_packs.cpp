// `dense-rt packs`: loads every pack the policy reaches and prints what the runtime would do with
// them on this machine (or on simulated GPUs, via DENSE_FAKE_DEVICES). The report goes to stdout;
// log lines (refusals, probing) go to stderr (main.cpp sets that up), so `--json | jq` stays clean.
#include "cli/commands.hpp"
#include "packs/pack_manager.hpp"
#include "packs/pack_report.hpp"

#include <iostream>

namespace dense::cli {

int cmd_packs(const packs::PackPolicy& policy, bool json) {
    packs::PackManager manager(policy);
    manager.load();
    std::cout << (json ? packs::packs_report_json(manager) : packs::packs_report_text(manager));
    std::cout.flush();
    return 0;
}

}  // namespace dense::cli
