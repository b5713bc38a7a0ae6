#include "cli/generate_flags.hpp"

#include "core/error.hpp"

#include <charconv>
#include <map>

namespace dense::cli {

model::RunConfig apply_flags(model::RunConfig c, const GenerateFlags& f) {
    if (f.n_predict) c.sampling.max_tokens = *f.n_predict;
    if (f.temperature) c.sampling.temperature = *f.temperature;
    if (f.top_k) c.sampling.top_k = *f.top_k;
    if (f.top_p) c.sampling.top_p = *f.top_p;
    if (f.min_p) c.sampling.min_p = *f.min_p;
    if (f.repeat_penalty) c.sampling.repeat_penalty = *f.repeat_penalty;
    if (f.presence_penalty) c.sampling.presence_penalty = *f.presence_penalty;
    if (f.seed) c.sampling.seed = *f.seed;
    if (f.context) c.context = *f.context;
    if (f.kv_type) c.kv_type = *f.kv_type;
    c.sampling.stop.insert(c.sampling.stop.end(), f.stop.begin(), f.stop.end());
    if (f.system) c.chat.system_prompt = *f.system;
    if (f.thinking) c.chat.thinking = *f.thinking;
    if (c.context < 1) throw Error(ErrorKind::Usage, "--ctx must be at least 1");
    if (c.kv_type != "f16" && c.kv_type != "f32") throw Error(ErrorKind::Usage, "--kv-type must be f16 or f32");
    // The run config's own values passed its loader's check, so a value out of range here came from
    // a flag (-n included: max_tokens): name the flag.
    if (const model::SamplingRangeError e = model::sampling_range_error(c.sampling); !e.key.empty()) {
        static const std::map<std::string, std::string> kFlagOf = {{"temperature", "--temp"},
                                                                   {"top_k", "--top-k"},
                                                                   {"top_p", "--top-p"},
                                                                   {"min_p", "--min-p"},
                                                                   {"repeat_penalty", "--repeat-penalty"},
                                                                   {"presence_penalty", "--presence-penalty"},
                                                                   {"max_tokens", "-n"},
                                                                   {"stop", "--stop"}};
        const auto flag = kFlagOf.find(e.key);
        throw Error(ErrorKind::Usage, (flag != kFlagOf.end() ? flag->second : "sampling." + e.key) + " " + e.rule);
    }
    return c;
}

std::vector<int32_t> parse_id_list(const std::string& text) {
    std::vector<int32_t> ids;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = text.find(',', pos);
        const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        int32_t v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size())
            throw Error(ErrorKind::Usage, "bad token id '" + item + "' in id list (expected e.g. 1,2,3)");
        ids.push_back(v);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return ids;
}

}  // namespace dense::cli
