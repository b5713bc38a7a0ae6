// `dense-rt plan` on the embedded default model: the bill as text and JSON, the exit code over
// budget (3) with what would fit, the budget from the flag, the config and a (simulated) device's
// free memory, and clear errors for bad values. On a machine without a GPU the plan is for a CUDA
// device that is not here; with one, for the GPU (the budget flag still decides).
#include "common/run_command.hpp"
#include "common/test_paths.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace {

using dense::test::run_dense_rt;

nlohmann::json plan_json(const std::string& args, int expect_exit = 0, const std::string& global = "") {
    const auto r = run_dense_rt("--config configs/tiny.yaml " + global + "plan --json " + args);
    EXPECT_EQ(r.exit_code, expect_exit) << r.err;
    return nlohmann::json::parse(r.out);
}

std::string grouped(uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

TEST(CliPlan, JsonBillAddsUpAndFits) {
    const auto j = plan_json("--vram-budget 64GiB");
    uint64_t sum = 0;
    for (const auto& l : j["lines"]) {
        EXPECT_EQ(l["bytes"].get<uint64_t>() % 256, 0u) << l.dump();
        sum += l["bytes"].get<uint64_t>();
    }
    EXPECT_EQ(sum, j["peak_bytes"].get<uint64_t>());
    uint64_t allocated = 0;
    for (const auto& a : j["allocations"]) allocated += a["bytes"].get<uint64_t>();
    EXPECT_EQ(allocated, j["allocated_bytes"].get<uint64_t>());
    EXPECT_EQ(j["context"].get<int64_t>(), 512);  // configs/tiny.yaml
    EXPECT_EQ(j["kv_type"].get<std::string>(), "f16");
    EXPECT_TRUE(j["fits"].get<bool>());
    EXPECT_EQ(j["budget"]["source"].get<std::string>(), "--vram-budget");
    EXPECT_GT(j["weight_bytes"].get<uint64_t>(), 10u << 20);  // the real vocabulary's embedding
    EXPECT_GT(j["max_context"].get<int64_t>(), 512);
}

TEST(CliPlan, ContextAndKvTypeFlagsChangeTheKvLine) {
    const auto a = plan_json("--vram-budget 64GiB --context 1024");
    const auto b = plan_json("--vram-budget 64GiB --context 2048 --kv-type f32");
    EXPECT_EQ(a["context"].get<int64_t>(), 1024);
    EXPECT_EQ(b["kv_type"].get<std::string>(), "f32");
    const uint64_t per_token = a["kv_bytes_per_token"].get<uint64_t>();
    ASSERT_GT(per_token, 0u);
    EXPECT_EQ(b["kv_bytes_per_token"].get<uint64_t>(), 2 * per_token);
    auto kv = [](const nlohmann::json& j) {
        uint64_t s = 0;
        for (const auto& l : j["lines"])
            if (l["item"] == "kv_cache") s += l["bytes"].get<uint64_t>();
        return s;
    };
    EXPECT_EQ(kv(a), 1024 * per_token);
    EXPECT_EQ(kv(b), 2048 * 2 * per_token);
}

TEST(CliPlan, OverBudgetExitsThreeWithTheBillAndWhatWouldFit) {
    // A fixed prefill chunk: with `auto` a smaller chunk would absorb a few bytes over (next test).
    const std::string chunk16 = "--prefill-chunk 16 ";
    const auto fit = plan_json("--vram-budget 64GiB", 0, chunk16);
    EXPECT_EQ(fit["prefill_chunk"].get<int64_t>(), 16);
    const uint64_t peak = fit["peak_bytes"].get<uint64_t>();
    const uint64_t per_token = fit["kv_bytes_per_token"].get<uint64_t>();
    ASSERT_GT(per_token, 1u);

    // One byte short: the bill, "does not fit", one token less fits.
    const uint64_t budget = peak - 1;
    auto r = run_dense_rt("--config configs/tiny.yaml " + chunk16 + "plan --vram-budget " + std::to_string(budget));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    for (const char* s : {"KV cache", "recurrent state x 2 banks", "weights", "safety reserve", "does not fit",
                          "max context at this budget: 511 tokens", "to keep 512 tokens, 1 bytes"})
        EXPECT_NE(r.out.find(s), std::string::npos) << s << " missing from\n" << r.out;
    const auto j = plan_json("--vram-budget " + std::to_string(budget), 3, chunk16);
    EXPECT_FALSE(j["fits"].get<bool>());
    EXPECT_EQ(j["max_context"].get<int64_t>(), 511);
    EXPECT_EQ(j["bytes_to_cpu"].get<uint64_t>(), 1u);

    // Half the weights short: no context fits, that many bytes would have to move to the CPU.
    const uint64_t short_by = fit["weight_bytes"].get<uint64_t>() / 2;
    r = run_dense_rt("--config configs/tiny.yaml " + chunk16 + "plan --vram-budget " + std::to_string(peak - short_by));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.out.find("max context at this budget: none"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("to keep 512 tokens, " + grouped(short_by) + " bytes"), std::string::npos) << r.out;

    // Far too small: not even with every weight on the CPU (whatever the prefill chunk).
    r = run_dense_rt("--config configs/tiny.yaml plan --vram-budget 1MiB");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.out.find("even with every weight on the CPU"), std::string::npos) << r.out;
}

// `prefill_chunk: auto` (the tiny config's): the default 512-token chunk's scratch one byte over the
// budget, the plan halves the chunk and fits, and says so (exit 0, the bill at 256 tokens).
TEST(CliPlan, AutoPrefillChunkStepsDownToFit) {
    const auto fit = plan_json("--vram-budget 64GiB");
    EXPECT_EQ(fit["prefill_chunk"].get<int64_t>(), 512);
    const uint64_t budget = fit["peak_bytes"].get<uint64_t>() - 1;
    const auto r = run_dense_rt("--config configs/tiny.yaml plan --vram-budget " + std::to_string(budget));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("prompts run 256 tokens per batched step"), std::string::npos) << r.out;
    const auto j = plan_json("--vram-budget " + std::to_string(budget));
    EXPECT_TRUE(j["fits"].get<bool>());
    EXPECT_EQ(j["prefill_chunk"].get<int64_t>(), 256);
}

TEST(CliPlan, OverBudgetShowsTheRowSplitAndAllowCpuSplitAcceptsIt) {
    // The budget: half the weights short of the bill at a split's prompt chunk (64), which an `auto`
    // plan over budget bills (the default 512's larger scratch would leave less to move).
    const auto fit = plan_json("--vram-budget 64GiB --prefill-chunk 64");
    EXPECT_TRUE(fit["row_split"].is_null());
    EXPECT_EQ(fit["cpu_read_bytes"].get<uint64_t>(), 0u);
    const uint64_t budget = fit["peak_bytes"].get<uint64_t>() - fit["weight_bytes"].get<uint64_t>() / 2;
    const std::string flag = "--vram-budget " + std::to_string(budget);

    auto r = run_dense_rt("--config configs/tiny.yaml plan " + flag);
    EXPECT_EQ(r.exit_code, 3) << r.err;  // by default over budget stays over budget
    for (const char* s : {"host tables it would use: token_embd.weight", "row split it would use", "ffn_gate", "ffn_up",
                          "fits the budget; the CPU reads"})
        EXPECT_NE(r.out.find(s), std::string::npos) << s << " missing from\n" << r.out;

    const auto j = plan_json(flag + " --allow-cpu-split", 0);
    EXPECT_FALSE(j["fits"].get<bool>());  // the all-on-GPU bill still does not
    ASSERT_TRUE(j["row_split"].is_object()) << j.dump();
    EXPECT_TRUE(j["row_split"]["fits"].get<bool>());
    EXPECT_LE(j["row_split"]["peak_bytes"].get<uint64_t>(), budget);
    // The 64 MiB bus staging ring is larger than this whole model: `bus_read_share: auto` (the
    // default) gives it up, and the CPU reads every host row, token by token.
    EXPECT_EQ(j["row_split"]["bus_read_share"].get<double>(), 0.0) << j.dump();
    EXPECT_EQ(j["row_split"]["bus_staging_bytes"].get<uint64_t>(), 0u) << j.dump();
    // Off the GPU: token_embd whole as a host table (read by row over the bus), then CPU rows.
    EXPECT_EQ(j["row_split"]["host_tables"], nlohmann::json::array({"token_embd.weight"})) << j.dump();
    EXPECT_GE(j["row_split"]["cpu_read_bytes"].get<uint64_t>() + j["row_split"]["host_table_bytes"].get<uint64_t>(),
              j["bytes_to_cpu"].get<uint64_t>());
    uint64_t moved = 0;
    for (const auto& k : j["row_split"]["kinds"]) moved += k["cpu_bytes"].get<uint64_t>();
    EXPECT_EQ(moved, j["row_split"]["cpu_read_bytes"].get<uint64_t>());

    // No split can help: still exit 3.
    r = run_dense_rt("--config configs/tiny.yaml plan --vram-budget 1MiB --allow-cpu-split");
    EXPECT_EQ(r.exit_code, 3) << r.err;
}

TEST(CliPlan, BudgetFromTheConfigAndFromASimulatedDevice) {
    const auto dir = dense::test::scratch_dir("plan-config");
    const auto cfg = dir / "budget.yaml";
    std::ofstream(cfg) << "model: " << (dense::test::source_dir() / "models/tiny/qwen35-tiny-seed-iq4.gguf").string()
                       << "\ncontext: 512\nvram_budget: 1MiB\n";
    auto r = run_dense_rt("--config " + dense::test::shell_quote(cfg.string()) + " plan");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.out.find("vram_budget in " + cfg.string()), std::string::npos) << r.out;
    // The flag wins over the config.
    r = run_dense_rt("--config " + dense::test::shell_quote(cfg.string()) + " plan --vram-budget 64GiB");
    EXPECT_EQ(r.exit_code, 0) << r.err;

    // A simulated 8 GiB card: its free memory is the budget.
    r = dense::test::run_command("cd " + dense::test::shell_quote(dense::test::source_dir().string()) +
                                 " && DENSE_FAKE_DEVICES='cuda:8.9:8GiB:Test Card' " +
                                 dense::test::shell_quote(dense::test::cli_path().string()) +
                                 " --config configs/tiny.yaml plan");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("free memory of cuda:0 (Test Card"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("simulated"), std::string::npos) << r.out;
    std::filesystem::remove_all(dir);
}

TEST(CliPlan, BadValuesAreClearErrors) {
    auto r = run_dense_rt("--config configs/tiny.yaml plan --vram-budget 8XB");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--vram-budget: '8XB' is not a size"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml plan --vram-budget 0");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--vram-budget: '0' is not a size"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml plan --vram-budget 8GiB --context 0");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--context must be at least 1"), std::string::npos) << r.err;
    r = run_dense_rt("--config configs/tiny.yaml plan --vram-budget 8GiB --kv-type q8");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("--kv-type must be f16 or f32"), std::string::npos) << r.err;
    // Checked as the flag is parsed, for every command (packs too, which loads no run config).
    for (const char* cmd : {"plan --vram-budget 8GiB", "packs"}) {
        r = run_dense_rt(std::string("--config configs/tiny.yaml --bus-read-share 1.5 ") + cmd);
        EXPECT_NE(r.exit_code, 0) << cmd;
        EXPECT_NE(r.err.find("'1.5' is not 'auto' or a share between 0 and 1"), std::string::npos) << cmd << ": " << r.err;
        r = run_dense_rt(std::string("--config configs/tiny.yaml --bus-read-share half ") + cmd);
        EXPECT_NE(r.exit_code, 0) << cmd;
        EXPECT_NE(r.err.find("'half' is not 'auto'"), std::string::npos) << cmd << ": " << r.err;
    }
    for (const char* ok : {"auto", "0.25"}) {
        r = run_dense_rt(std::string("--config configs/tiny.yaml --bus-read-share ") + ok + " plan --vram-budget 8GiB");
        EXPECT_EQ(r.exit_code, 0) << ok << ": " << r.err;
    }

    const auto dir = dense::test::scratch_dir("plan-bad-config");
    const auto cfg = dir / "bad.yaml";
    std::ofstream(cfg) << "model: x.gguf\nvram_budget: lots\n";
    r = run_dense_rt("--config " + dense::test::shell_quote(cfg.string()) + " plan");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("'vram_budget' must be 'auto' or a size"), std::string::npos) << r.err;
    std::filesystem::remove_all(dir);
}

TEST(CliPlan, WithoutAGpuOrABudgetThereIsNothingToPlanAgainst) {
    // No GPU for the driver (or no driver) and no simulated ones: only a budget says what to plan for.
    auto r = dense::test::run_command(
        "cd " + dense::test::shell_quote(dense::test::source_dir().string()) +
        " && CUDA_VISIBLE_DEVICES= DENSE_FAKE_DEVICES= " + dense::test::shell_quote(dense::test::cli_path().string()) +
        " --config configs/tiny.yaml plan");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.err.find("no VRAM budget for a CUDA device (none here)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--vram-budget"), std::string::npos) << r.err;
}

TEST(CliPlan, GenerateIsHeldToTheBudgetOnlyOnAGpu) {
    // A simulated GPU with a pack (CUDA builds) is where the run would go: over budget it is refused
    // with the bill before anything is allocated. Without a pack for it (CPU-only builds) the run
    // goes to the CPU, where a VRAM budget does not apply.
    const auto r = dense::test::run_command("cd " + dense::test::shell_quote(dense::test::source_dir().string()) +
                                            " && DENSE_FAKE_DEVICES='cuda:9.0:16GiB:Test Card' " +
                                            dense::test::shell_quote(dense::test::cli_path().string()) +
                                            " --config configs/tiny.yaml -p hi -n 1 --vram-budget 1MiB");
    if (r.err.find("does not fit") != std::string::npos) {
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_NE(r.err.find("nothing was allocated"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("KV cache"), std::string::npos) << r.err;
    } else {
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find("the VRAM budget (--vram-budget) does not apply"), std::string::npos) << r.err;
    }
}

}  // namespace
