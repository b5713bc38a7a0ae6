#include "text/sampler.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

namespace dense::text {
namespace {

std::vector<float> random_logits(uint64_t seed, size_t n) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

std::set<int32_t> ids_of(const std::vector<Candidate>& c) {
    std::set<int32_t> s;
    for (const auto& x : c) s.insert(x.id);
    return s;
}

TEST(Sampler, GreedyPicksArgmaxLowestIdOnTies) {
    std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.9f};
    SamplerConfig cfg;
    cfg.temperature = 0.0f;
    Sampler s(cfg);
    EXPECT_EQ(s.sample(logits, {}), 1);
    const auto big = random_logits(11, 5000);
    EXPECT_EQ(s.sample(big, {}), static_cast<int32_t>(std::max_element(big.begin(), big.end()) - big.begin()));
}

// Logits drawn from a few values (many ties), with -inf and (where asked) NaN mixed in, at lengths
// around the scans' blocks of 16.
std::vector<float> tie_heavy_logits(std::mt19937_64& rng, bool with_nan) {
    const size_t n = 1 + rng() % 100;
    std::vector<float> v(n);
    for (float& x : v) {
        const auto k = rng() % 10;
        x = k == 0 ? -std::numeric_limits<float>::infinity()
            : (k == 1 && with_nan) ? std::numeric_limits<float>::quiet_NaN()
                                   : static_cast<float>(rng() % 4);
    }
    return v;
}

TEST(Sampler, GreedyTokenIsMaxElementWithTiesInfAndNaN) {
    std::mt19937_64 rng(31);
    for (int t = 0; t < 20000; ++t) {
        const auto v = tie_heavy_logits(rng, true);
        ASSERT_EQ(greedy_token(v), static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin())) << "case " << t;
    }
    for (uint64_t seed = 0; seed < 5; ++seed) {
        auto v = random_logits(40 + seed, 248320);
        v[248320 - 1 - seed] = 100.0f;  // the maximum in the tail, after the last whole block
        EXPECT_EQ(greedy_token(v), static_cast<int32_t>(248320 - 1 - seed));
        v[5 + seed] = 100.0f;  // an equal one earlier wins
        EXPECT_EQ(greedy_token(v), static_cast<int32_t>(5 + seed));
    }
}

TEST(Sampler, TopKCandidatesAreThePrefixOfTheFullOrder) {
    std::mt19937_64 rng(32);
    for (int t = 0; t < 5000; ++t) {
        const auto v = tie_heavy_logits(rng, false);
        const auto all = sorted_candidates(v, 0);  // every logit but -inf, best first (ties: lower id)
        for (const int32_t k : {1, 2, 3, 16, 40, static_cast<int32_t>(v.size()) - 1, static_cast<int32_t>(v.size())}) {
            if (k <= 0) continue;
            const auto got = sorted_candidates(v, k);
            ASSERT_EQ(got.size(), std::min<size_t>(static_cast<size_t>(k), all.size())) << "case " << t << " k " << k;
            for (size_t i = 0; i < got.size(); ++i) {
                ASSERT_EQ(got[i].id, all[i].id) << "case " << t << " k " << k << " rank " << i;
                ASSERT_EQ(got[i].logit, all[i].logit);
            }
        }
    }
}

TEST(Sampler, SameSeedSameChoicesDifferentSeedDiffers) {
    const auto logits = random_logits(12, 1000);
    SamplerConfig cfg;
    cfg.temperature = 1.5f;
    cfg.top_k = 0;
    cfg.top_p = 1.0f;
    cfg.min_p = 0.0f;
    cfg.seed = 42;
    Sampler a(cfg), b(cfg);
    cfg.seed = 43;
    Sampler c(cfg);
    std::vector<int32_t> ra, rb, rc;
    for (int i = 0; i < 200; ++i) {
        ra.push_back(a.sample(logits, {}));
        rb.push_back(b.sample(logits, {}));
        rc.push_back(c.sample(logits, {}));
    }
    EXPECT_EQ(ra, rb);
    EXPECT_NE(ra, rc);
    EXPECT_GT(std::set<int32_t>(ra.begin(), ra.end()).size(), 5u);  // really sampling, not greedy
    a.reseed(42);
    EXPECT_EQ(a.sample(logits, {}), ra[0]);
}

TEST(Sampler, TopKOneEqualsGreedy) {
    SamplerConfig cfg;
    cfg.temperature = 2.0f;
    cfg.top_k = 1;
    for (uint64_t seed = 0; seed < 20; ++seed) {
        const auto logits = random_logits(100 + seed, 3000);
        cfg.seed = seed;
        Sampler s(cfg);
        EXPECT_EQ(s.sample(logits, {}), greedy_token(logits));
    }
}

TEST(Sampler, SamplingFollowsTheDistribution) {
    // Two tokens with probabilities 0.8 / 0.2 at temperature 1.
    const std::vector<float> logits = {std::log(0.8f), std::log(0.2f)};
    SamplerConfig cfg;
    cfg.temperature = 1.0f;
    cfg.top_k = 0;
    cfg.top_p = 1.0f;
    cfg.min_p = 0.0f;
    cfg.seed = 7;
    Sampler s(cfg);
    int zeros = 0;
    for (int i = 0; i < 10000; ++i) zeros += s.sample(logits, {}) == 0;
    EXPECT_NEAR(zeros / 10000.0, 0.8, 0.02);
}

TEST(Sampler, TopKKeepsTheKHighest) {
    const std::vector<float> logits = {1.0f, 5.0f, 3.0f, 5.0f, -2.0f, 4.0f};
    const auto c = sorted_candidates(logits, 3);
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c[0].id, 1);  // tie with id 3: lower id first
    EXPECT_EQ(c[1].id, 3);
    EXPECT_EQ(c[2].id, 5);
}

TEST(Sampler, TopPTruncation) {
    // Probabilities 0.5, 0.25, 0.125, 0.0625, 0.0625.
    const std::vector<float> logits = {std::log(0.5f), std::log(0.25f), std::log(0.125f), std::log(0.0625f),
                                       std::log(0.0625f)};
    auto c = sorted_candidates(logits, 0);
    apply_top_p(c, 0.7f);  // 0.5 < 0.7 <= 0.75
    EXPECT_EQ(ids_of(c), (std::set<int32_t>{0, 1}));
    c = sorted_candidates(logits, 0);
    apply_top_p(c, 0.8f);  // 0.75 < 0.8 <= 0.875
    EXPECT_EQ(ids_of(c), (std::set<int32_t>{0, 1, 2}));
    c = sorted_candidates(logits, 0);
    apply_top_p(c, 0.1f);  // always at least one
    EXPECT_EQ(ids_of(c), (std::set<int32_t>{0}));
    c = sorted_candidates(logits, 0);
    apply_top_p(c, 1.0f);
    EXPECT_EQ(c.size(), 5u);
}

TEST(Sampler, MinPTruncation) {
    // Probabilities relative to the max: 1, 0.5, 0.25, 0.1, 0.01.
    const std::vector<float> logits = {0.0f, std::log(0.5f), std::log(0.25f), std::log(0.1f), std::log(0.01f)};
    auto c = sorted_candidates(logits, 0);
    apply_min_p(c, 0.2f);
    EXPECT_EQ(ids_of(c), (std::set<int32_t>{0, 1, 2}));
    c = sorted_candidates(logits, 0);
    apply_min_p(c, 0.6f);
    EXPECT_EQ(ids_of(c), (std::set<int32_t>{0}));
    c = sorted_candidates(logits, 0);
    apply_min_p(c, 0.0f);
    EXPECT_EQ(c.size(), 5u);
}

TEST(Sampler, TruncatedTokensAreNeverSampled) {
    const auto logits = random_logits(13, 500);
    SamplerConfig cfg;
    cfg.temperature = 3.0f;  // flat: without truncation many tokens would show up
    cfg.top_k = 0;
    cfg.top_p = 0.5f;
    cfg.min_p = 0.0f;
    cfg.seed = 5;
    auto allowed = sorted_candidates(logits, 0);
    apply_top_p(allowed, cfg.top_p);
    const auto allowed_ids = ids_of(allowed);
    Sampler s(cfg);
    std::set<int32_t> seen;
    for (int i = 0; i < 3000; ++i) seen.insert(s.sample(logits, {}));
    for (int32_t id : seen) EXPECT_TRUE(allowed_ids.count(id)) << id;
    EXPECT_GT(seen.size(), 1u);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveMultipliesNegative) {
    std::vector<float> logits = {2.0f, -2.0f, 3.0f, 1.0f, -1.0f};
    SamplerConfig cfg;
    cfg.repeat_penalty = 2.0f;
    cfg.penalty_last_n = 3;
    const std::vector<int32_t> history = {3, 0, 1, 0};  // window = last 3: {0, 1, 0}; 3 is outside
    apply_penalties(logits, history, cfg);
    EXPECT_FLOAT_EQ(logits[0], 1.0f);   // counted twice, penalized once
    EXPECT_FLOAT_EQ(logits[1], -4.0f);
    EXPECT_FLOAT_EQ(logits[2], 3.0f);
    EXPECT_FLOAT_EQ(logits[3], 1.0f);
    EXPECT_FLOAT_EQ(logits[4], -1.0f);
}

TEST(Sampler, PresenceAndFrequencyPenalties) {
    std::vector<float> logits = {2.0f, -2.0f, 3.0f};
    SamplerConfig cfg;
    cfg.presence_penalty = 0.5f;
    cfg.frequency_penalty = 0.25f;
    cfg.penalty_last_n = -1;
    apply_penalties(logits, std::vector<int32_t>{0, 0, 0, 1}, cfg);
    EXPECT_FLOAT_EQ(logits[0], 2.0f - 0.5f - 0.75f);
    EXPECT_FLOAT_EQ(logits[1], -2.0f - 0.5f - 0.25f);
    EXPECT_FLOAT_EQ(logits[2], 3.0f);
}

TEST(Sampler, PenaltyChangesTheGreedyChoice) {
    const std::vector<float> logits = {3.0f, 2.5f, 0.0f};
    SamplerConfig cfg;
    cfg.temperature = 0.0f;
    cfg.repeat_penalty = 1.5f;
    Sampler s(cfg);
    EXPECT_EQ(s.sample(logits, {}), 0);
    EXPECT_EQ(s.sample(logits, std::vector<int32_t>{0}), 1);  // 3 / 1.5 = 2 < 2.5
}

// The device path (TOP_K, ABI 1.15): the k best as a device returns them (sorted_candidates' order,
// padded with id -1 past the candidates), drawn from by sample_from_top, give the token sample() gives
// over all the logits, step after step from the same seed: the same candidates, the same random draws.
// Logits with ties, -inf and fewer candidates than k included; choose() over sorted_candidates too.
TEST(Sampler, DrawingFromTheTopKIsTheSameTokenAsFromAllTheLogits) {
    struct Setting {
        float temperature, top_p, min_p;
        int32_t top_k;
    };
    const Setting settings[] = {
        {0.8f, 0.95f, 0.05f, 40}, {2.0f, 1.0f, 0.0f, 64}, {1.0f, 0.5f, 0.0f, 1}, {0.3f, 0.9f, 0.1f, 7}};
    std::mt19937_64 shape(77);
    int draws = 0, not_the_best = 0;
    for (const Setting& st : settings) {
        for (uint64_t seed = 0; seed < 40; ++seed) {
            SamplerConfig cfg;
            cfg.temperature = st.temperature;
            cfg.top_k = st.top_k;
            cfg.top_p = st.top_p;
            cfg.min_p = st.min_p;
            cfg.seed = 1000 + seed;
            Sampler host(cfg), device(cfg), chooser(cfg);
            std::vector<int32_t> history;
            for (int step = 0; step < 12; ++step) {
                std::vector<float> logits = random_logits(seed * 100 + static_cast<uint64_t>(step), 3000);
                for (int i = 0; i < 20; ++i) logits[shape() % logits.size()] = 9.0f;  // ties among the best
                for (int i = 0; i < 50; ++i) logits[shape() % logits.size()] = -std::numeric_limits<float>::infinity();
                if (step % 4 == 3)  // fewer candidates than k: the device pads
                    for (size_t i = 0; i < logits.size(); ++i)
                        if (i % 500 != 0) logits[i] = -std::numeric_limits<float>::infinity();
                const auto top = sorted_candidates(logits, cfg.top_k);
                std::vector<int32_t> ids(static_cast<size_t>(cfg.top_k), -1);
                std::vector<float> values(static_cast<size_t>(cfg.top_k), -std::numeric_limits<float>::infinity());
                for (size_t i = 0; i < top.size(); ++i) {
                    ids[i] = top[i].id;
                    values[i] = top[i].logit;
                }
                ASSERT_TRUE(device.takes_top_k(history, cfg.top_k));
                const int32_t want = host.sample(logits, history);
                ASSERT_EQ(device.sample_from_top(ids, values), want) << "seed " << seed << " step " << step;
                ASSERT_EQ(chooser.choose(sorted_candidates(logits, cfg.top_k)), want)
                    << "seed " << seed << " step " << step;
                history.push_back(want);
                not_the_best += want != top.front().id;
                ++draws;
            }
        }
    }
    EXPECT_EQ(draws, 4 * 40 * 12);
    EXPECT_GT(not_the_best, 200) << "the settings really sample (not only the best token)";
    // No candidate (every slot padded) is the same error as every logit -inf.
    Sampler s(SamplerConfig{});
    try {
        (void)s.sample_from_top(std::vector<int32_t>(40, -1),
                                std::vector<float>(40, -std::numeric_limits<float>::infinity()));
        ADD_FAILURE() << "no error for a top k without candidates";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Numeric);
        EXPECT_NE(std::string(e.what()).find("every logit is -inf"), std::string::npos) << e.what();
    }
}

// takes_top_k: only where sample() would draw from exactly the device's k best, unchanged; and the k
// a run asks the device for (device_top_k_for) is one that every history then takes.
TEST(Sampler, TakesTheDevicesTopKOnlyWhereSampleWouldDrawFromThem) {
    SamplerConfig cfg;  // temperature 0.8, top_k 40, no penalty
    const std::vector<int32_t> history = {1, 2, 3};
    EXPECT_TRUE(Sampler(cfg).takes_top_k(history, 40));
    EXPECT_TRUE(Sampler(cfg).takes_top_k({}, 40));
    EXPECT_FALSE(Sampler(cfg).takes_top_k(history, 64)) << "the device kept another k";
    EXPECT_FALSE(Sampler(cfg).takes_top_k(history, 0));
    EXPECT_EQ(device_top_k_for(cfg, 64), 40);
    EXPECT_EQ(device_top_k_for(cfg, 39), 0) << "more than the device may keep";
    SamplerConfig greedy = cfg;
    greedy.temperature = 0.0f;
    EXPECT_FALSE(Sampler(greedy).takes_top_k(history, 40));
    EXPECT_EQ(device_top_k_for(greedy, 64), 0);
    SamplerConfig all = cfg;
    all.top_k = 0;  // every logit is a candidate
    EXPECT_FALSE(Sampler(all).takes_top_k(history, 0));
    EXPECT_EQ(device_top_k_for(all, 64), 0);
    SamplerConfig penalized = cfg;
    penalized.repeat_penalty = 1.1f;
    EXPECT_FALSE(Sampler(penalized).takes_top_k(history, 40)) << "a penalty changes the logits first";
    EXPECT_TRUE(Sampler(penalized).takes_top_k({}, 40)) << "nothing to penalize yet";
    EXPECT_EQ(device_top_k_for(penalized, 64), 0);
    for (const auto edit : {+[](SamplerConfig& c) { c.presence_penalty = 0.5f; },
                            +[](SamplerConfig& c) { c.frequency_penalty = 0.5f; }}) {
        SamplerConfig c = cfg;
        edit(c);
        EXPECT_FALSE(Sampler(c).takes_top_k(history, 40));
        EXPECT_EQ(device_top_k_for(c, 64), 0);
    }
    penalized.penalty_last_n = 0;  // the window is off: no penalty ever applies
    EXPECT_TRUE(Sampler(penalized).takes_top_k(history, 40));
    EXPECT_EQ(device_top_k_for(penalized, 64), 40);
}

TEST(Sampler, Errors) {
    SamplerConfig cfg;
    Sampler s(cfg);
    std::vector<float> logits = {1.0f, std::numeric_limits<float>::quiet_NaN()};
    try {
        (void)s.sample(logits, {});
        ADD_FAILURE() << "no error for a NaN logit";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Numeric);
        EXPECT_NE(std::string(e.what()).find("token 1"), std::string::npos) << e.what();
    }
    // The same inside the blocked scans (sampler.cpp scans 16 logits at a time): a NaN deep in a
    // vocabulary-sized vector is named by its id; all -inf is an error at any length.
    auto big = random_logits(21, 5000);
    big[1234] = std::numeric_limits<float>::quiet_NaN();
    try {
        (void)s.sample(big, {});
        ADD_FAILURE() << "no error for a NaN logit at 1234";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Numeric);
        EXPECT_NE(std::string(e.what()).find("token 1234 "), std::string::npos) << e.what();
    }
    const float ninf = -std::numeric_limits<float>::infinity();
    EXPECT_THROW((void)s.sample(std::vector<float>{ninf, ninf}, {}), Error);
    EXPECT_THROW((void)s.sample(std::vector<float>(5000, ninf), {}), Error);
    EXPECT_THROW((void)s.sample(std::vector<float>{}, {}), Error);
    // All -inf is found by each choice: greedy, top-k, and every candidate sorted (top_k 0).
    for (const auto& [temperature, top_k] : {std::pair{0.0f, 40}, std::pair{0.8f, 40}, std::pair{0.8f, 0}}) {
        SamplerConfig c;
        c.temperature = temperature;
        c.top_k = top_k;
        Sampler t(c);
        for (const size_t n : {size_t{2}, size_t{5000}}) {
            try {
                (void)t.sample(std::vector<float>(n, ninf), {});
                ADD_FAILURE() << "no error for " << n << " -inf logits at temperature " << temperature << ", top_k " << top_k;
            } catch (const Error& e) {
                EXPECT_EQ(e.kind(), ErrorKind::Numeric);
                EXPECT_NE(std::string(e.what()).find("every logit is -inf"), std::string::npos) << e.what();
            }
        }
        EXPECT_EQ(t.sample(std::vector<float>{ninf, ninf, 1.0f}, {}), 2) << temperature << " " << top_k;
    }
    // A penalty that takes every logit to -inf is the same error, not a pick from no candidates.
    {
        SamplerConfig c;
        c.frequency_penalty = std::numeric_limits<float>::infinity();
        Sampler t(c);
        EXPECT_THROW((void)t.sample(std::vector<float>{1.0f, 2.0f}, std::vector<int32_t>{0, 1}), Error);
    }
    cfg.repeat_penalty = 1.3f;
    Sampler p(cfg);
    EXPECT_THROW((void)p.sample(std::vector<float>{1.0f, 2.0f}, std::vector<int32_t>{5}), Error);
    cfg.repeat_penalty = 0.0f;
    EXPECT_THROW(Sampler{cfg}, Error);
}

}  // namespace
}  // namespace dense::text
