#include "text/sampler.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace dense::text {

namespace {

bool higher(const Candidate& a, const Candidate& b) noexcept {
    return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
}

void check_logits(std::span<const float> logits) {
    if (logits.empty()) throw Error(ErrorKind::Usage, "sampler: empty logits");
    bool any_finite = false;
    for (size_t i = 0; i < logits.size(); ++i) {
        if (std::isnan(logits[i])) {
            throw Error(ErrorKind::Numeric, "sampler: logit of token " + std::to_string(i) + " is NaN");
        }
        any_finite = any_finite || logits[i] != -std::numeric_limits<float>::infinity();
    }
    if (!any_finite) throw Error(ErrorKind::Numeric, "sampler: every logit is -inf");
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

void apply_penalties(std::vector<float>& logits, std::span<const int32_t> history, const SamplerConfig& config) {
    const bool off = config.repeat_penalty == 1.0f && config.frequency_penalty == 0.0f && config.presence_penalty == 0.0f;
    if (off || config.penalty_last_n == 0 || history.empty()) return;
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
    // max_element returns the first of equal maxima: the lowest id.
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

std::vector<Candidate> sorted_candidates(std::span<const float> logits, int32_t top_k) {
    std::vector<Candidate> c;
    c.reserve(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        if (logits[i] != -std::numeric_limits<float>::infinity()) c.push_back({static_cast<int32_t>(i), logits[i]});
    }
    if (top_k > 0 && static_cast<size_t>(top_k) < c.size()) {
        // Only the k best need an order: partial sort instead of sorting the whole vocabulary.
        std::partial_sort(c.begin(), c.begin() + top_k, c.end(), higher);
        c.resize(static_cast<size_t>(top_k));
    } else {
        std::sort(c.begin(), c.end(), higher);
    }
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

int32_t Sampler::sample(std::span<const float> logits_in, std::span<const int32_t> history) {
    check_logits(logits_in);
    std::vector<float> logits(logits_in.begin(), logits_in.end());
    apply_penalties(logits, history, config_);
    if (config_.temperature <= 0.0f) return greedy_token(logits);

    std::vector<Candidate> c = sorted_candidates(logits, config_.top_k);
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
