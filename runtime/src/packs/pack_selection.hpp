// Which pack serves which device, and which device is the main one.
//
//  - A pack is a candidate on a device if it is usable, its ops run on that kind of device and it
//    scores > 0 there. Its rank there: first policy.prefer (earlier names first), then its score.
//    The packs themselves encode "exact arch cubin > same-family cubin > PTX JIT" in their scores
//    (CUDA packs: 100 / 60 / 20), so on an H200 (9.0) the sm_90 pack wins, on an RTX 50 (12.0)
//    the sm_120 pack, and without a GPU the CPU packs are all there is.
//  - Per device the candidate of the highest rank is chosen (ties: the pack found first).
//  - The main device is the CUDA device whose chosen pack ranks highest (ties: more memory, then
//    the lower ordinal); without any, the CPU.
//  - policy.force names the only pack considered for the main device: the main device becomes the
//    best device the forced pack can run on (CUDA before the CPU). If it is not loaded or runs
//    nowhere, that is reported in `problems` and the normal choice stands.
#pragma once

#include "packs/device_probe.hpp"
#include "packs/op_registry.hpp"
#include "packs/pack_policy.hpp"
#include "packs/pack_record.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dense::packs {

struct PackSelection {
    std::vector<std::optional<size_t>> chosen;  // per device: index into the packs, or none
    size_t main_device = 0;                     // index into the devices (0 = the CPU)
    std::vector<std::string> problems;          // what the policy asked for and could not get
};

// How `pack` ranks on devices[device] (score 0 = not a candidate there).
PackRank pack_rank(const PackRecord& pack, size_t device, const std::vector<DeviceInfo>& devices,
                   const PackPolicy& policy);

PackSelection select_packs(const std::vector<DeviceInfo>& devices, const std::vector<PackRecord>& packs,
                           const PackPolicy& policy);

}  // namespace dense::packs
