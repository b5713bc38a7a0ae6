// Token sampling from one step's logits.
//
// Pipeline, in this order (the same order as llama.cpp's default chain, so the same settings mean the
// same thing):
//   1. penalties over the last `penalty_last_n` history tokens, each distinct token once:
//        repetition (llama.cpp style): logit > 0 -> logit / repeat_penalty, else logit * repeat_penalty;
//        frequency: logit -= count * frequency_penalty;  presence: logit -= presence_penalty
//   2. temperature <= 0: greedy, the highest penalized logit wins (ties -> lowest id); stop here.
//   3. top-k: keep the k highest logits (ties -> lower ids first); k <= 0 keeps all.
//   4. top-p: softmax over what is left, keep the smallest prefix (highest first) whose probabilities
//      sum to >= top_p (at least one token); top_p >= 1 keeps all.
//   5. min-p: keep tokens whose probability is >= min_p * the highest one; min_p <= 0 keeps all.
//   6. temperature: logits / temperature.
//   7. sample from the softmax of what is left with a std::mt19937_64 seeded by `seed`: the draw is
//      u = (next() >> 11) * 2^-53 in [0, 1), so results are identical across standard libraries.
// Steps 4 and 5 use probabilities at temperature 1 (before step 6), as llama.cpp does.
//
// Errors: dense::Error(ErrorKind::Numeric) for a NaN logit (naming the id) or when every logit is -inf;
// ErrorKind::Usage for empty logits, a history id outside the logits, or bad settings (negative
// temperature stays allowed = greedy).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace dense::text {

struct SamplerConfig {
    float temperature = 0.8f;
    int32_t top_k = 40;
    float top_p = 0.95f;
    float min_p = 0.05f;
    float repeat_penalty = 1.0f;     // 1 = off
    float frequency_penalty = 0.0f;  // 0 = off
    float presence_penalty = 0.0f;   // 0 = off
    int32_t penalty_last_n = 64;     // history window for the penalties; 0 = off, -1 = whole history
    uint64_t seed = 0;
};

// A token still in the running and its (possibly adjusted) logit.
struct Candidate {
    int32_t id;
    float logit;
};

// The steps, exposed for tests and for callers that build their own chain. Each keeps `c` sorted by
// logit descending (ties: lower id first) once sorted; penalties work on a full logits vector.
bool penalties_apply(std::span<const int32_t> history, const SamplerConfig& config);  // would change a logit
// The k a device may keep for a sampler of this config (its top_k, where it samples, configures no
// penalty and 1 <= top_k <= max_k), else 0: a Sampler of it then takes_top_k(history, k) for any history.
int32_t device_top_k_for(const SamplerConfig& config, int32_t max_k);
void apply_penalties(std::vector<float>& logits, std::span<const int32_t> history, const SamplerConfig& config);
// The first index of the largest logit (std::max_element's answer, in blocked passes: sampler.cpp).
int32_t greedy_token(std::span<const float> logits);
// Logits other than -inf as candidates, best first; top_k > 0 keeps the k best (NaN logits are left
// out there; Sampler::sample rejects them before).
std::vector<Candidate> sorted_candidates(std::span<const float> logits, int32_t top_k);  // top-k included
void apply_top_p(std::vector<Candidate>& c, float top_p);
void apply_min_p(std::vector<Candidate>& c, float min_p);
// Probabilities of `c` at the given temperature (softmax of logit / temperature).
std::vector<double> softmax(const std::vector<Candidate>& c, float temperature);

class Sampler {
public:
    explicit Sampler(SamplerConfig config);

    // Picks the next token from `logits` (one value per vocabulary id) given the ids produced so far.
    int32_t sample(std::span<const float> logits, std::span<const int32_t> history);
    // Whether sample() would be greedy_token(logits) for this history (temperature <= 0, no penalty
    // applies): then a device's own greedy choice over the same logits is the same token.
    bool is_plain_greedy(std::span<const int32_t> history) const;
    // Whether sample() would draw from the `device_k` best logits unchanged for this history
    // (temperature > 0, no penalty applies, the config's top_k is device_k): then a device's own k
    // best (TOP_K) over the same logits are the candidates sample() would build, and
    // sample_from_top() on them is the same token, drawn from the same random sequence.
    bool takes_top_k(std::span<const int32_t> history, int32_t device_k) const;
    // sample() from its top-k step on, given the k best logits as a device returned them: ids[i],
    // values[i] best first (what sorted_candidates gives), slots with id -1 (fewer candidates than
    // k) left out. Only where takes_top_k() says so.
    int32_t sample_from_top(std::span<const int32_t> ids, std::span<const float> values);
    // sample()'s steps after top-k: top-p, min-p, temperature and the draw, over candidates sorted as
    // sorted_candidates() leaves them (-inf logits left out). Temperature > 0. Numeric error when `c`
    // is empty (every logit was -inf).
    int32_t choose(std::vector<Candidate> c);

    const SamplerConfig& config() const noexcept { return config_; }
    // Restarts the random sequence (same seed -> same choices for the same inputs).
    void reseed(uint64_t seed);

private:
    SamplerConfig config_;
    std::mt19937_64 rng_;
};

}  // namespace dense::text
