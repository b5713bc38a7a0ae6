// A run config (configs/*.yaml): how to RUN a model — which file, context, VRAM budget, placement,
// pack preferences, sampling and chat defaults. Every key is checked: an unknown key or a wrong type
// is an error naming the file, line and key path. Relative paths are relative to the config file.
// Command-line flags override fields after loading (see cli/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dense::model {

enum class Placement {
    Auto,     // plan decides: all on the GPU if it fits, else split rows onto the CPU
    GpuOnly,  // fail (with the bill) if the weights do not fit on the GPU
    Cpu       // run everything on the CPU packs
};

struct SamplingConfig {
    double temperature = 0.8;  // 0 = greedy
    int64_t top_k = 40;        // 0 = off
    double top_p = 0.95;       // 1 = off
    double min_p = 0.05;       // 0 = off
    double repeat_penalty = 1.0;
    int64_t repeat_last_n = 64;
    double presence_penalty = 0.0;
    uint64_t seed = 0;         // 0 = pick one from the clock (printed)
    int64_t max_tokens = 256;
    std::vector<std::string> stop;
};

struct PacksConfig {
    std::vector<std::filesystem::path> paths;
    std::vector<std::string> prefer;
    std::vector<std::string> deny;
    std::optional<std::string> force;
};

struct ChatConfig {
    std::string system_prompt;
    bool thinking = false;
};

// The largest prefill_chunk a config may ask for: beyond it a batched step's buffers grow with no
// further saving (the weight is already read once per 512 tokens).
inline constexpr int64_t kMaxPrefillChunk = 512;
// bus_read_share: auto (any negative share means it; plan/bus_share.hpp chooses the share).
inline constexpr double kAutoBusShare = -1.0;

struct RunConfig {
    std::filesystem::path source;               // the config file ("" for defaults)
    std::filesystem::path model;                // the GGUF
    std::optional<std::filesystem::path> model_description;  // models/<arch>.yaml override
    int64_t context = 4096;                     // tokens of KV cache to plan and allocate
    std::optional<uint64_t> vram_budget;        // bytes; nullopt = what the device reports free
    std::string vram_budget_source;             // where it came from: "vram_budget in F", "--vram-budget"
    std::string kv_type = "f16";                // f16 | f32
    Placement placement = Placement::Auto;
    int64_t threads = 0;                        // CPU threads; 0 = all cores
    bool keep_page_cache = false;               // GPU: leave the uploaded weights in the page cache
    // GPU with a row split: the share (0..1) of the weight rows that do not fit in VRAM which the GPU
    // reads itself from host memory over PCIe, beside the CPU computing the rest (exec/bus_rows.hpp);
    // kAutoBusShare ("auto", the default): chosen at load from rates measured there
    // (plan/bus_share.hpp).
    double bus_read_share = kAutoBusShare;
    // Prompt tokens per batched prefill step (exec::SessionOptions::prefill_chunk); -1: the device's
    // default (256 on a GPU, lowered to as little as 16 by the VRAM plan; 1 = token by token on the CPU).
    int64_t prefill_chunk = -1;
    PacksConfig packs;
    SamplingConfig sampling;
    ChatConfig chat;

    // Throws dense::Error(Config/Io).
    static RunConfig load(const std::filesystem::path& path);
    static RunConfig parse(const std::string& yaml_text, const std::filesystem::path& display_path);
    // The architecture's defaults for a bare `-m model.gguf` run.
    static RunConfig defaults_for(const std::filesystem::path& model);
};

const char* to_string(Placement p) noexcept;

// The first sampling setting outside its range, as its key under `sampling:` ("top_p") and the rule
// it breaks ("must be in (0, 1]"); NaN breaks every rule. Empty key when all are valid. The run
// config's loader and the command-line flags (which override it) both check with this, so a value is
// refused the same way wherever it comes from.
struct SamplingRangeError {
    std::string key;
    std::string rule;
};
SamplingRangeError sampling_range_error(const SamplingConfig& s);

}  // namespace dense::model
