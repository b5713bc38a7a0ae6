// `dense-rt tokenize` / `detokenize`: the model file's tokenizer on its own (no weights are bound),
// for users debugging prompts and for the tokenizer conformance tests.
#include "cli/commands.hpp"
#include "gguf/gguf_file.hpp"
#include "text/tokenizer.hpp"

#include <cstdio>
#include <string>

namespace dense::cli {

int cmd_tokenize(const model::RunConfig& config, const std::string& text, bool parse_special) {
    const auto file = gguf::GgufFile::open(config.model);
    const auto tok = text::Tokenizer::from_gguf(file);
    const auto ids = tok.encode(text, parse_special);
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
    std::printf("%s\n", out.c_str());
    return 0;
}

int cmd_detokenize(const model::RunConfig& config, const std::string& ids, bool render_special) {
    const auto file = gguf::GgufFile::open(config.model);
    const auto tok = text::Tokenizer::from_gguf(file);
    const auto list = parse_id_list(ids);
    const std::string text = tok.decode(list, render_special);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
}

}  // namespace dense::cli
