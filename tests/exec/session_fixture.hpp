// Shared setup for executor tests: the cpu-ref pack from the build tree, the qwen35 description, and
// helpers to read llama.cpp's golden logits.
#pragma once

#include "common/pack_loading.hpp"
#include "common/test_paths.hpp"
#include "exec/session.hpp"
#include "gguf/gguf_file.hpp"
#include "model/model_binding.hpp"
#include "packs/pack_manager.hpp"
#include "text/sampler.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dense::test {

inline packs::PackManager& cpu_ref_packs() {
    // Never destroyed: packs stay loaded for the whole process (pack_manager.hpp).
    static packs::PackManager* pm = load_packs_from({build_pack_dir() / "libdense-cpu-ref.so"}).release();
    return *pm;
}

inline const model::ModelSpec& qwen35_spec() {
    static const model::ModelSpec spec = model::ModelSpec::load(source_dir() / "models" / "qwen35.yaml");
    return spec;
}

// A bound model kept alive with its file.
struct Model {
    gguf::GgufFile file;
    model::BoundModel bound;
};

inline std::unique_ptr<Model> bind_file(gguf::GgufFile file) {
    auto m = std::unique_ptr<Model>(new Model{std::move(file), {}});
    m->bound = model::bind_model(m->file, qwen35_spec());
    return m;
}

inline std::unique_ptr<exec::Session> make_session(const Model& m, int64_t n_ctx, dense_type_id kv = DENSE_TYPE_F32,
                                                   int32_t device_top_k = 0) {
    exec::SessionOptions o;
    o.n_ctx = n_ctx;
    o.kv_type = kv;
    o.device_top_k = device_top_k;
    return std::make_unique<exec::Session>(m.bound, qwen35_spec(), cpu_ref_packs(), o);
}

// After a step (or prompt) with logits: `steps` more token steps with logits, each fed the session's
// own greedy choice (Session::greedy_token, ARGMAX on the session's device), which must be there and
// must be the host's scan over the same logits (text::greedy_token). Returns the last choice.
inline int32_t expect_device_greedy_chain(exec::Session& s, int steps, const std::string& where) {
    const auto first = s.greedy_token();
    EXPECT_TRUE(first.has_value()) << where << ": the device's packs register ARGMAX";
    if (!first) return 0;
    EXPECT_EQ(*first, text::greedy_token(s.logits())) << where << ", before the chain";
    int32_t tok = *first;
    for (int i = 0; i < steps; ++i) {
        s.step(tok, true);
        const auto chosen = s.greedy_token();
        EXPECT_TRUE(chosen.has_value()) << where << ", step " << i;
        if (!chosen) return tok;
        EXPECT_EQ(*chosen, text::greedy_token(s.logits())) << where << ", step " << i;
        tok = *chosen;
    }
    return tok;
}

// After a step (or prompt) with logits: the session's k best logits (Session::top_k, TOP_K on the
// session's device) must be there and must be the host's candidates over the same logits
// (text::sorted_candidates), ids and value bits, padded with (-1, -inf). Returns the device's ones.
inline std::optional<exec::TopCandidates> expect_device_top_k(const exec::Session& s, int32_t k,
                                                              const std::string& where) {
    const auto top = s.top_k();
    EXPECT_TRUE(top.has_value()) << where << ": the device's packs register TOP_K";
    if (!top) return top;
    const auto want = text::sorted_candidates(s.logits(), k);
    EXPECT_EQ(top->ids.size(), static_cast<size_t>(k)) << where;
    EXPECT_EQ(top->values.size(), static_cast<size_t>(k)) << where;
    int wrong = 0;
    for (size_t i = 0; i < top->ids.size() && i < top->values.size(); ++i) {
        const bool some = i < want.size();
        const int32_t id = some ? want[i].id : -1;
        const float value = some ? want[i].logit : -std::numeric_limits<float>::infinity();
        const bool same =
            top->ids[i] == id && std::bit_cast<uint32_t>(top->values[i]) == std::bit_cast<uint32_t>(value);
        if (!same && wrong++ < 3) {
            ADD_FAILURE() << where << ", slot " << i << ": device id " << top->ids[i] << " value " << top->values[i]
                          << ", host id " << id << " value " << value;
        }
    }
    EXPECT_EQ(wrong, 0) << where;
    return top;
}

inline std::vector<int32_t> golden_tokens() {
    std::ifstream in(data_dir() / "golden-tiny" / "tokens.txt");
    std::vector<int32_t> ids;
    std::string item;
    while (std::getline(in, item, ',')) ids.push_back(std::stoi(item));
    return ids;
}

// "pos P v0 v1 ..." lines -> rows of logits.
inline std::vector<std::vector<float>> golden_logits(const std::string& file) {
    std::ifstream in(data_dir() / "golden-tiny" / file);
    std::vector<std::vector<float>> rows;
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        std::string word;
        int pos = 0;
        ls >> word >> pos;
        std::vector<float> row;
        for (float v; ls >> v;) row.push_back(v);
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace dense::test
