#include "model/run_config.hpp"

#include "core/units.hpp"
#include "model/yaml_strict.hpp"

#include <cmath>

namespace dense::model {

namespace {

std::filesystem::path resolve_path(const std::filesystem::path& config, const std::string& p) {
    std::filesystem::path path(p);
    if (path.is_relative() && !config.empty()) path = config.parent_path() / path;
    return path.lexically_normal();
}

void parse_sampling(const YamlFile& f, const YAML::Node& n, SamplingConfig& s) {
    const std::string kp = "sampling";
    f.check_keys(n, kp, {"temperature", "top_k", "top_p", "min_p", "repeat_penalty", "repeat_last_n",
                         "presence_penalty", "seed", "max_tokens", "stop"});
    if (n["temperature"]) s.temperature = f.get_double(n["temperature"], kp + ".temperature");
    if (n["top_k"]) s.top_k = f.get_int(n["top_k"], kp + ".top_k");
    if (n["top_p"]) s.top_p = f.get_double(n["top_p"], kp + ".top_p");
    if (n["min_p"]) s.min_p = f.get_double(n["min_p"], kp + ".min_p");
    if (n["repeat_penalty"]) s.repeat_penalty = f.get_double(n["repeat_penalty"], kp + ".repeat_penalty");
    if (n["repeat_last_n"]) s.repeat_last_n = f.get_int(n["repeat_last_n"], kp + ".repeat_last_n");
    if (n["presence_penalty"]) s.presence_penalty = f.get_double(n["presence_penalty"], kp + ".presence_penalty");
    if (n["seed"]) {
        const int64_t seed = f.get_int(n["seed"], kp + ".seed");
        if (seed < 0) f.fail(n["seed"], "'sampling.seed' must be >= 0");
        s.seed = static_cast<uint64_t>(seed);
    }
    if (n["max_tokens"]) s.max_tokens = f.get_int(n["max_tokens"], kp + ".max_tokens");
    if (n["stop"]) s.stop = f.get_string_or_list(n["stop"], kp + ".stop");
    if (const SamplingRangeError e = sampling_range_error(s); !e.key.empty())
        f.fail(n[e.key], "'sampling." + e.key + "' " + e.rule);
}

void parse_packs(const YamlFile& f, const YAML::Node& n, PacksConfig& p) {
    f.check_keys(n, "packs", {"paths", "prefer", "deny", "force"});
    if (n["paths"])
        for (const auto& s : f.get_string_or_list(n["paths"], "packs.paths")) p.paths.push_back(resolve_path(f.path(), s));
    if (n["prefer"]) p.prefer = f.get_string_or_list(n["prefer"], "packs.prefer");
    if (n["deny"]) p.deny = f.get_string_or_list(n["deny"], "packs.deny");
    if (n["force"] && !n["force"].IsNull()) p.force = f.get_string(n["force"], "packs.force");
}

}  // namespace

SamplingRangeError sampling_range_error(const SamplingConfig& s) {
    // Written so that NaN fails each test.
    if (!(s.temperature >= 0)) return {"temperature", "must be >= 0"};
    if (s.top_k < 0) return {"top_k", "must be >= 0"};
    if (!(s.top_p > 0 && s.top_p <= 1)) return {"top_p", "must be in (0, 1]"};
    if (!(s.min_p >= 0 && s.min_p < 1)) return {"min_p", "must be in [0, 1)"};
    if (!(s.repeat_penalty > 0 && std::isfinite(s.repeat_penalty))) return {"repeat_penalty", "must be > 0"};
    if (s.repeat_last_n < -1) return {"repeat_last_n", "must be >= -1 (-1 = the whole history)"};
    if (!std::isfinite(s.presence_penalty)) return {"presence_penalty", "must be a finite number"};
    if (s.max_tokens < 0) return {"max_tokens", "must be >= 0"};
    // An empty stop string would end every generation before its first token; nobody means that.
    for (const std::string& stop : s.stop)
        if (stop.empty()) return {"stop", "must not be an empty string"};
    return {};
}

const char* to_string(Placement p) noexcept {
    switch (p) {
        case Placement::Auto: return "auto";
        case Placement::GpuOnly: return "gpu-only";
        case Placement::Cpu: return "cpu";
    }
    return "?";
}

RunConfig RunConfig::load(const std::filesystem::path& path) { return parse(read_text_file(path), path); }

RunConfig RunConfig::parse(const std::string& yaml_text, const std::filesystem::path& display_path) {
    const YamlFile f = YamlFile::parse(yaml_text, display_path);
    const YAML::Node& root = f.root();
    f.check_keys(root, "", {"model", "model_description", "context", "vram_budget", "kv_type", "placement",
                            "threads", "keep_page_cache", "bus_read_share", "prefill_chunk", "packs", "sampling",
                            "chat"});
    RunConfig c;
    c.source = display_path;
    if (!root["model"]) f.fail("missing required key 'model' (path of the GGUF file, relative to this config)");
    c.model = resolve_path(display_path, f.get_string(root["model"], "model"));
    if (root["model_description"])
        c.model_description = resolve_path(display_path, f.get_string(root["model_description"], "model_description"));
    if (root["context"]) {
        c.context = f.get_int(root["context"], "context");
        if (c.context < 1) f.fail(root["context"], "'context' must be >= 1 token");
    }
    if (root["vram_budget"]) {
        const std::string text = f.get_string(root["vram_budget"], "vram_budget");
        if (text != "auto") {
            auto bytes = parse_byte_size(text);
            if (!bytes || *bytes == 0)
                f.fail(root["vram_budget"], "'vram_budget' must be 'auto' or a size like 8GiB, got '" + text + "'");
            c.vram_budget = *bytes;
            c.vram_budget_source = "vram_budget in " + display_path.string();
        }
    }
    if (root["kv_type"]) {
        c.kv_type = f.get_string(root["kv_type"], "kv_type");
        if (c.kv_type != "f16" && c.kv_type != "f32")
            f.fail(root["kv_type"], "'kv_type' must be f16 or f32, got '" + c.kv_type + "'");
    }
    if (root["placement"]) {
        const std::string p = f.get_string(root["placement"], "placement");
        if (p == "auto") c.placement = Placement::Auto;
        else if (p == "gpu-only") c.placement = Placement::GpuOnly;
        else if (p == "cpu") c.placement = Placement::Cpu;
        else f.fail(root["placement"], "'placement' must be auto, gpu-only or cpu, got '" + p + "'");
    }
    if (root["keep_page_cache"]) c.keep_page_cache = f.get_bool(root["keep_page_cache"], "keep_page_cache");
    if (root["bus_read_share"]) {
        const bool is_auto =
            root["bus_read_share"].IsScalar() && root["bus_read_share"].Scalar() == "auto";
        c.bus_read_share = is_auto ? kAutoBusShare : f.get_double(root["bus_read_share"], "bus_read_share");
        if (!is_auto && !(c.bus_read_share >= 0.0 && c.bus_read_share <= 1.0))
            f.fail(root["bus_read_share"], "'bus_read_share' must be 'auto' or between 0 and 1 (the share of the rows "
                                           "that do not fit in VRAM which the GPU reads over PCIe)");
    }
    if (root["prefill_chunk"]) {
        const std::string text = f.get_string(root["prefill_chunk"], "prefill_chunk");
        if (text != "auto") {
            c.prefill_chunk = f.get_int(root["prefill_chunk"], "prefill_chunk");
            if (c.prefill_chunk < 1 || c.prefill_chunk > kMaxPrefillChunk)
                f.fail(root["prefill_chunk"], "'prefill_chunk' must be 'auto' or 1.." + std::to_string(kMaxPrefillChunk) +
                                                  " prompt tokens per batched step (1: token by token)");
        }
    }
    if (root["threads"]) {
        c.threads = f.get_int(root["threads"], "threads");
        if (c.threads < 0) f.fail(root["threads"], "'threads' must be >= 0");
    }
    if (root["packs"]) parse_packs(f, root["packs"], c.packs);
    if (root["sampling"]) parse_sampling(f, root["sampling"], c.sampling);
    if (root["chat"]) {
        f.check_keys(root["chat"], "chat", {"system_prompt", "thinking"});
        if (root["chat"]["system_prompt"])
            c.chat.system_prompt = f.get_string(root["chat"]["system_prompt"], "chat.system_prompt");
        if (root["chat"]["thinking"]) c.chat.thinking = f.get_bool(root["chat"]["thinking"], "chat.thinking");
    }
    return c;
}

RunConfig RunConfig::defaults_for(const std::filesystem::path& model) {
    RunConfig c;
    c.model = model;
    return c;
}

}  // namespace dense::model
