#include "text/sampler.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>

namespace dense::text {

namespace {

bool higher(const Candidate& a, const Candidate& b) noexcept {
    return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
}

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// The scans over a whole vocabulary (248,320 logits for qwen35, once per generated token) run in
// blocks of kLanes logits with one accumulator per lane, which the compiler keeps in vector
// registers. Why: std::max_element's single running maximum is one dependency chain through a load
// and a compare per logit; over 248,320 logits it took 1.2-1.9 ms on the 2-core build machine, the
// blocked passes 0.05-0.14 ms (session 29), against a decode step of ~9 ms on an H100.
constexpr size_t kLanes = 16;

// The first index of the largest logit, NaN never chosen (-inf if there is nothing else: index 0's
// lane then holds it), in one blocked pass: each lane keeps its maximum and the block where it first
// reached it.
size_t first_largest(std::span<const float> x) {
    float lane[kLanes];
    uint32_t at[kLanes];
    for (size_t j = 0; j < kLanes; ++j) {
        lane[j] = kMinusInf;
        at[j] = 0;
    }
    size_t i = 0;
    for (; i + kLanes <= x.size(); i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) {
            const bool greater = x[i + j] > lane[j];
            lane[j] = greater ? x[i + j] : lane[j];
            at[j] = greater ? static_cast<uint32_t>(i) : at[j];
        }
    float best = kMinusInf;
    for (const float v : lane) best = v > best ? v : best;
    size_t first = x.size();
    for (size_t j = 0; j < kLanes; ++j)
        if (lane[j] == best) first = std::min<size_t>(first, at[j] + j);
    for (; i < x.size(); ++i)  // the tail comes after every block: it wins only by being larger
        if (x[i] > best) {
            best = x[i];
            first = i;
        }
    return first < x.size() ? first : 0;
}

bool any_nan(std::span<const float> x) {
    uint32_t lane[kLanes] = {};  // 32-bit flags: with bool lanes GCC 12 vectorized half as well
    size_t i = 0;
    for (; i + kLanes <= x.size(); i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) lane[j] |= x[i + j] != x[i + j] ? 1u : 0u;
    uint32_t any = 0;
    for (const uint32_t v : lane) any |= v;
    for (; i < x.size(); ++i) any |= x[i] != x[i] ? 1u : 0u;
    return any != 0;
}

// Empty or NaN logits are refused before anything else. "Every logit is -inf" is found by the
// choice itself (no candidate, or a greedy pick of -inf), not by a pass of its own: that pass was
// ~0.14 ms of a sampled token's ~0.3 ms on the build machine (a scan of 248,320 logits), every token.
void check_logits(std::span<const float> logits) {
    if (logits.empty()) throw Error(ErrorKind::Usage, "sampler: empty logits");
    if (any_nan(logits)) {
        size_t i = 0;
        while (!std::isnan(logits[i])) ++i;
        throw Error(ErrorKind::Numeric, "sampler: logit of token " + std::to_string(i) + " is NaN");
    }
}

[[noreturn]] void every_logit_minus_inf() { throw Error(ErrorKind::Numeric, "sampler: every logit is -inf"); }

// The k best candidates (k > 0) in `higher` order, -inf and NaN logits left out: one pass with a heap
// of the k best so far whose front is the worst of them. Ids come in increasing order, so a logit equal
// to the front's never displaces it (the front ranks first on the tie), and a block whose maximum
// does not beat the front is skipped whole: after the first few thousand logits almost every block.
std::vector<Candidate> top_k_candidates(std::span<const float> logits, size_t k) {
    std::vector<Candidate> heap;
    heap.reserve(k);
    const auto consider = [&](size_t i) {
        const float v = logits[i];
        if (!(v > kMinusInf)) return;  // -inf or NaN
        if (heap.size() < k) {
            heap.push_back({static_cast<int32_t>(i), v});
            std::push_heap(heap.begin(), heap.end(), higher);
        } else if (v > heap.front().logit) {
            std::pop_heap(heap.begin(), heap.end(), higher);
            heap.back() = {static_cast<int32_t>(i), v};
            std::push_heap(heap.begin(), heap.end(), higher);
        }
    };
    size_t i = 0;
    for (; i + kLanes <= logits.size(); i += kLanes) {
        if (heap.size() == k) {
            float lane_max = kMinusInf;
            for (size_t j = 0; j < kLanes; ++j) lane_max = logits[i + j] > lane_max ? logits[i + j] : lane_max;
            if (!(lane_max > heap.front().logit)) continue;
        }
        for (size_t j = 0; j < kLanes; ++j) consider(i + j);
    }
    for (; i < logits.size(); ++i) consider(i);
    std::sort(heap.begin(), heap.end(), higher);
    return heap;
}

// Whether a penalty changes some logit once there is a history (penalties_apply without the history).
bool penalties_configured(const SamplerConfig& config) {
    const bool off = config.repeat_penalty == 1.0f && config.frequency_penalty == 0.0f && config.presence_penalty == 0.0f;
    return !off && config.penalty_last_n != 0;
}

void check_config(const SamplerConfig& c) {
    if (!(c.repeat_penalty > 0.0f)) {
        throw Error(ErrorKind::Usage, "sampler: repeat_penalty must be > 0 (got " + std::to_string(c.repeat_penalty) + ")");
    }
    if (c.penalty_last_n < -1) {
        throw Error(ErrorKind::Usage, "sampler: penalty_last_n must be >= -1 (got " + std::to_string(c.penalty_last_n) + ")");
    }
    if (std::isnan(c.temperature) || std::isnan(c.top_p) || std::isnan(c.min_p)) {
        throw Error(ErrorKind::Usage, "sampler: temperature, top_p and min_p must be numbers");
    }
}

}  // namespace

bool penalties_apply(std::span<const int32_t> history, const SamplerConfig& config) {
    return penalties_configured(config) && !history.empty();
}

int32_t device_top_k_for(const SamplerConfig& config, int32_t max_k) {
    const bool fits = config.top_k >= 1 && config.top_k <= max_k;
    return config.temperature > 0.0f && !penalties_configured(config) && fits ? config.top_k : 0;
}

void apply_penalties(std::vector<float>& logits, std::span<const int32_t> history, const SamplerConfig& config) {
    if (!penalties_apply(history, config)) return;
    const size_t window = config.penalty_last_n < 0 ? history.size()
                                                    : std::min(history.size(), static_cast<size_t>(config.penalty_last_n));
    std::unordered_map<int32_t, int32_t> counts;
    for (int32_t id : history.subspan(history.size() - window)) {
        if (id < 0 || static_cast<size_t>(id) >= logits.size()) {
            throw Error(ErrorKind::Usage, "sampler: history token id " + std::to_string(id) +
                                              " is out of range (vocabulary size " + std::to_string(logits.size()) + ")");
        }
        ++counts[id];
    }
    for (const auto& [id, count] : counts) {
        float& l = logits[static_cast<size_t>(id)];
        l = l > 0.0f ? l / config.repeat_penalty : l * config.repeat_penalty;
        l -= static_cast<float>(count) * config.frequency_penalty + config.presence_penalty;
    }
}

int32_t greedy_token(std::span<const float> logits) {
    // What std::max_element gives: the first of equal maxima (the lowest id), NaN never chosen except
    // as logit 0 (it compares false both ways, so nothing replaces it).
    if (logits.empty() || std::isnan(logits[0])) return 0;
    return static_cast<int32_t>(first_largest(logits));
}

std::vector<Candidate> sorted_candidates(std::span<const float> logits, int32_t top_k) {
    if (top_k > 0 && static_cast<size_t>(top_k) < logits.size()) return top_k_candidates(logits, static_cast<size_t>(top_k));
    // Every candidate, all sorted (top-k off, or k at least the vocabulary).
    std::vector<Candidate> c;
    c.reserve(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        if (logits[i] != -std::numeric_limits<float>::infinity()) c.push_back({static_cast<int32_t>(i), logits[i]});
    }
    std::sort(c.begin(), c.end(), higher);
    return c;
}

std::vector<double> softmax(const std::vector<Candidate>& c, float temperature) {
    std::vector<double> p(c.size());
    if (c.empty()) return p;
    double max_logit = -std::numeric_limits<double>::infinity();
    for (const auto& x : c) max_logit = std::max(max_logit, static_cast<double>(x.logit));
    double sum = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
        p[i] = std::exp((static_cast<double>(c[i].logit) - max_logit) / static_cast<double>(temperature));
        sum += p[i];
    }
    for (double& v : p) v /= sum;
    return p;
}

void apply_top_p(std::vector<Candidate>& c, float top_p) {
    if (top_p >= 1.0f || c.size() <= 1) return;
    const std::vector<double> p = softmax(c, 1.0f);
    double cumulative = 0.0;
    size_t keep = c.size();
    for (size_t i = 0; i < c.size(); ++i) {
        cumulative += p[i];
        if (cumulative >= static_cast<double>(top_p)) {
            keep = i + 1;
            break;
        }
    }
    c.resize(std::max<size_t>(keep, 1));
}

void apply_min_p(std::vector<Candidate>& c, float min_p) {
    if (min_p <= 0.0f || c.size() <= 1) return;
    // p_i >= min_p * p_max  <=>  logit_i >= logit_max + log(min_p)  (c is sorted, c[0] is the max).
    const double threshold = static_cast<double>(c.front().logit) + std::log(static_cast<double>(min_p));
    size_t keep = 1;
    while (keep < c.size() && static_cast<double>(c[keep].logit) >= threshold) ++keep;
    c.resize(keep);
}

Sampler::Sampler(SamplerConfig config) : config_(config), rng_(config.seed) { check_config(config_); }

void Sampler::reseed(uint64_t seed) {
    config_.seed = seed;
    rng_.seed(seed);
}

bool Sampler::is_plain_greedy(std::span<const int32_t> history) const {
    return config_.temperature <= 0.0f && !penalties_apply(history, config_);
}

int32_t Sampler::sample(std::span<const float> logits_in, std::span<const int32_t> history) {
    check_logits(logits_in);
    // A penalized copy only where a penalty applies (a copy of 248,320 logits costs ~0.1 ms a token).
    std::vector<float> penalized;
    std::span<const float> logits = logits_in;
    if (penalties_apply(history, config_)) {
        penalized.assign(logits_in.begin(), logits_in.end());
        apply_penalties(penalized, history, config_);
        logits = penalized;
    }
    // The best logit is -inf only when every one is (no NaN came in, and greedy_token never picks one
    // past id 0).
    if (config_.temperature <= 0.0f) {
        const int32_t best = greedy_token(logits);
        if (logits[static_cast<size_t>(best)] == kMinusInf) every_logit_minus_inf();
        return best;
    }

    return choose(sorted_candidates(logits, config_.top_k));  // -inf logits left out
}

bool Sampler::takes_top_k(std::span<const int32_t> history, int32_t device_k) const {
    return config_.temperature > 0.0f && !penalties_apply(history, config_) && device_k > 0 &&
           config_.top_k == device_k;
}

int32_t Sampler::sample_from_top(std::span<const int32_t> ids, std::span<const float> values) {
    if (ids.size() != values.size())
        throw Error(ErrorKind::Internal, "sampler: " + std::to_string(ids.size()) + " top-k ids but " +
                                             std::to_string(values.size()) + " values");
    std::vector<Candidate> c;
    c.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] >= 0) c.push_back({ids[i], values[i]});
    return choose(std::move(c));
}

int32_t Sampler::choose(std::vector<Candidate> c) {
    if (c.empty()) every_logit_minus_inf();
    apply_top_p(c, config_.top_p);
    apply_min_p(c, config_.min_p);
    const std::vector<double> p = softmax(c, config_.temperature);

    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    double cumulative = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
        cumulative += p[i];
        if (u < cumulative) return c[i].id;
    }
    return c.back().id;  // rounding left u just above the last cumulative sum
}

}  // namespace dense::text
