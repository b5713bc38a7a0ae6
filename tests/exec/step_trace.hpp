// What a session's token steps leave, for tests that compare two sessions bit for bit (graph passes
// that must change no result: gemv_list_session_test, fused_step_session_test): the logits and every
// layer's hidden state of six fixed steps.
#pragma once

#include "exec/session.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace dense::test {

struct StepTrace {
    std::vector<std::vector<float>> logits, hidden;  // hidden: every layer of every step
};

inline StepTrace trace_steps(exec::Session& s) {
    StepTrace t;
    s.set_layer_observer([&t](int64_t, int64_t, std::span<const float> h) { t.hidden.emplace_back(h.begin(), h.end()); });
    for (int32_t token : {11, 1900, 7, 42, 1023, 5}) {
        s.step(token, true);
        t.logits.emplace_back(s.logits().begin(), s.logits().end());
    }
    return t;
}

inline bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
            return false;
    return true;
}

}  // namespace dense::test
