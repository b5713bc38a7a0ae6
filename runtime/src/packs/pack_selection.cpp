#include "packs/pack_selection.hpp"

#include <algorithm>
#include <tuple>

namespace dense::packs {
namespace {

std::tuple<uint32_t, uint32_t> key_of(const PackRank& r) {
    return {r.preference, r.score};
}

std::optional<size_t> best_pack_on(size_t device, const std::vector<DeviceInfo>& devices,
                                   const std::vector<PackRecord>& packs, const PackPolicy& policy) {
    std::optional<size_t> best;
    PackRank best_rank;
    for (size_t p = 0; p < packs.size(); ++p) {
        const PackRank r = pack_rank(packs[p], device, devices, policy);
        if (r.score == 0) continue;
        if (!best || key_of(r) > key_of(best_rank)) {  // strict: the earlier pack keeps a tie
            best = p;
            best_rank = r;
        }
    }
    return best;
}

std::optional<size_t> find_forced(const std::vector<PackRecord>& packs, const std::string& name, std::string& problem) {
    const PackRecord* named = nullptr;
    for (size_t p = 0; p < packs.size(); ++p) {
        if (packs[p].name != name) continue;
        if (packs[p].usable()) return p;
        named = &packs[p];
    }
    problem = "forced pack '" + name + "' " +
              (named == nullptr ? std::string("was not found")
                                : std::string("is ") + to_string(named->status) +
                                      (named->reason.empty() ? "" : ": " + named->reason));
    return std::nullopt;
}

}  // namespace

PackRank pack_rank(const PackRecord& pack, size_t device, const std::vector<DeviceInfo>& devices,
                   const PackPolicy& policy) {
    PackRank r;
    if (!pack.usable() || device >= devices.size() || devices[device].kind() != pack.device_kind) return r;
    r.score = pack.score_on(device);
    const auto it = std::find(policy.prefer.begin(), policy.prefer.end(), pack.name);
    if (it != policy.prefer.end()) r.preference = static_cast<uint32_t>(policy.prefer.end() - it);
    return r;
}

PackSelection select_packs(const std::vector<DeviceInfo>& devices, const std::vector<PackRecord>& packs,
                           const PackPolicy& policy) {
    PackSelection s;
    s.chosen.resize(devices.size());
    for (size_t d = 0; d < devices.size(); ++d) s.chosen[d] = best_pack_on(d, devices, packs, policy);

    // Rank of a device as the main one: its chosen pack's rank, then its memory, then the lower index.
    auto device_key = [&](size_t d, size_t pack) {
        const PackRank r = pack_rank(packs[pack], d, devices, policy);
        return std::tuple(r.preference, r.score, devices[d].hw.total_memory_bytes);
    };

    if (policy.force) {
        std::string problem;
        if (const auto forced = find_forced(packs, *policy.force, problem)) {
            std::optional<size_t> best;
            for (size_t d = 0; d < devices.size(); ++d) {
                if (pack_rank(packs[*forced], d, devices, policy).score == 0) continue;
                const auto better = [&](size_t a, size_t b) {  // CUDA before the CPU, then device_key
                    return std::tuple(devices[a].is_cuda(), device_key(a, *forced)) >
                           std::tuple(devices[b].is_cuda(), device_key(b, *forced));
                };
                if (!best || better(d, *best)) best = d;
            }
            if (best) {
                s.main_device = *best;
                s.chosen[*best] = forced;
                return s;
            }
            problem = "forced pack '" + *policy.force + "' cannot run on any device here";
        }
        s.problems.push_back(problem);
    }

    std::optional<size_t> best;
    for (size_t d = 0; d < devices.size(); ++d) {
        if (!devices[d].is_cuda() || !s.chosen[d]) continue;
        if (!best || device_key(d, *s.chosen[d]) > device_key(*best, *s.chosen[*best])) best = d;
    }
    if (!best)  // no GPU with a pack: the CPU (the first CPU device; by construction index 0)
        for (size_t d = 0; d < devices.size() && !best; ++d)
            if (devices[d].kind() == DENSE_DEVICE_CPU) best = d;
    s.main_device = best.value_or(0);
    if (!devices.empty() && !s.chosen[s.main_device])
        s.problems.push_back("no usable pack for the main device " + devices[s.main_device].id());
    return s;
}

}  // namespace dense::packs
