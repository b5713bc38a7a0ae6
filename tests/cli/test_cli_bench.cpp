// `dense-rt bench` on the embedded default model (on the CPU in CI): the markdown table has a row
// per test and depth, the JSON carries the same numbers, the plot is an SVG, and bad flags are
// refused with exit 1. (Speed itself is never asserted: benchmarks measure, tests check behaviour.)
#include "common/run_command.hpp"
#include "common/test_paths.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

using dense::test::run_dense_rt;

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CliBench, TableJsonAndPlotAgree) {
    const auto dir = std::filesystem::temp_directory_path() / ("dense-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto json = dir / "bench.json", svg = dir / "bench.svg";
    const auto r = run_dense_rt("--config configs/tiny.yaml bench -p 3 -n 2 -d 0,5 -r 2 --ceiling-buffer 0.05 --json " +
                                json.string() + " --plot " + svg.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* row : {"| pp3 | 0 |", "| tg2 | 0 |", "| pp3 | 5 |", "| tg2 | 5 |"})
        EXPECT_NE(r.out.find(row), std::string::npos) << row << " missing from\n" << r.out;
    EXPECT_NE(r.out.find("pure read"), std::string::npos) << r.out;

    const auto j = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(j["tests"].size(), 4u);
    for (const auto& t : j["tests"]) {
        ASSERT_EQ(t["tok_per_s"].size(), 2u) << t.dump();
        EXPECT_GT(t["mean_tok_per_s"].get<double>(), 0.0);
    }
    EXPECT_EQ(j["tests"][2]["depth"].get<int>(), 5);
    EXPECT_GT(j["bandwidth_ceiling"]["read_gbs"].get<double>(), 0.0);
    EXPECT_GT(j["weight_bytes_per_token"].get<uint64_t>(), 1000000u);
    // A tg row's bytes: weights + state + KV of its mean history (depth + (2 + 1) / 2 positions).
    const double weights = j["weight_bytes_per_token"].get<double>(), state = j["state_bytes_per_token"].get<double>(),
                 kv = j["kv_bytes_per_position"].get<double>();
    EXPECT_GT(state, 0.0);
    EXPECT_GT(kv, 0.0);
    EXPECT_DOUBLE_EQ(j["tests"][3]["bytes_moved_per_token"].get<double>(), weights + state + kv * 6.5);
    EXPECT_NE(r.out.find("| all bytes GB/s |"), std::string::npos) << r.out;
    const std::string plot = slurp(svg);
    EXPECT_EQ(plot.rfind("<svg", 0), 0u);
    EXPECT_NE(plot.find("tg2"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(CliBench, BadFlagsAreRefused) {
    auto r = run_dense_rt("--config configs/tiny.yaml bench -d 0,x");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("-d expects"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml bench -r 0");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("-r must be at least 1"), std::string::npos) << r.err;
    r = run_dense_rt("bench --gemv-only --gemv-formats q4_k,nope");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("unknown weight format 'nope'"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml --kv-type q8 bench -p 0 -n 1 -r 1");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--kv-type must be f16 or f32"), std::string::npos) << r.err;
    r = run_dense_rt("bench --cpu-rows --cpu-rows-gib 0");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--cpu-rows-gib must be in (0, 64]"), std::string::npos) << r.err;
}

// --kv-type reaches the bench (its KV cache, the plan it checks, the report).
TEST(CliBench, KvTypeFlagIsUsed) {
    const auto json = std::filesystem::temp_directory_path() / ("dense-bench-kv-" + std::to_string(::getpid()) + ".json");
    for (const char* kv : {"f32", "f16"}) {
        const auto r = run_dense_rt(std::string("--config configs/tiny.yaml --kv-type ") + kv +
                                    " bench -p 0 -n 2 -d 0 -r 1 --ceiling-buffer 0.01 --json " + json.string());
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(nlohmann::json::parse(slurp(json))["kv_type"].get<std::string>(), kv);
    }
    std::filesystem::remove(json);
}

// --repeat-nodes (a timing experiment): the table and the JSON say which nodes ran twice, and a word
// that names no node of the step is refused rather than measured as "free".
TEST(CliBench, RepeatNodesIsLabelledAndChecked) {
    const auto json = std::filesystem::temp_directory_path() / ("dense-bench-rep-" + std::to_string(::getpid()) + ".json");
    auto r = run_dense_rt("--config configs/tiny.yaml bench -p 0 -n 2 -d 0 -r 1 --ceiling-buffer 0.01 --repeat-nodes "
                          "rms_norm,conv1d --json " + json.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("TIMING EXPERIMENT (--repeat-nodes): nodes whose implementation name contains 'rms_norm', "
                         "'conv1d' ran twice per step"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(nlohmann::json::parse(slurp(json))["repeated_nodes"], nlohmann::json({"rms_norm", "conv1d"}));
    std::filesystem::remove(json);
    r = run_dense_rt("--config configs/tiny.yaml bench -p 0 -n 2 -d 0 -r 1 --ceiling-buffer 0.01 --repeat-nodes rms_nrom");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--repeat-nodes 'rms_nrom' names no node of the token step"), std::string::npos) << r.err;
    r = run_dense_rt("bench --gemv-only --repeat-nodes rms_norm");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--repeat-nodes needs a model"), std::string::npos) << r.err;
}

// The row split's CPU side alone: a row per format, source and thread count (plus the read rows),
// the same numbers in the JSON, and the temporary file of the "file" source removed afterwards.
TEST(CliBench, CpuRowsTableAndJson) {
    const auto dir = std::filesystem::temp_directory_path() / ("dense-bench-rows-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto json = dir / "rows.json";
    const auto r = run_dense_rt("bench --cpu-rows --cpu-threads 1,2 --cpu-rows-gib 0.05 -r 1 --gemv-formats q4_k,iq2_s --json " +
                                json.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* row : {"| q4_k | anon | 1 |", "| q4_k | file | 2 |", "| iq2_s | file | 1 |", "| read | anon | 2 |"})
        EXPECT_NE(r.out.find(row), std::string::npos) << row << " missing from\n" << r.out;
    const auto j = nlohmann::json::parse(slurp(json));
    ASSERT_EQ(j["cpu_rows"].size(), 10u);  // 2 formats x 2 sources x 2 thread counts + 2 read rows
    for (const auto& row : j["cpu_rows"]) {
        EXPECT_GT(row["gbs"].get<double>(), 0.0) << row.dump();
        EXPECT_GT(row["bytes"].get<uint64_t>(), 0u) << row.dump();
    }
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
        EXPECT_EQ(e.path().filename().string().rfind("dense-rt-cpu-rows-", 0), std::string::npos) << e.path() << " left behind";
    std::filesystem::remove_all(dir);
}

}  // namespace
