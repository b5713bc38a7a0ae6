// Shared helpers of the text tests: the vocab fixture (loaded once per process) and its 50 cases.
#pragma once

#include "common/test_paths.hpp"
#include "gguf/gguf_file.hpp"
#include "text/tokenizer.hpp"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace dense::text::test {

inline std::filesystem::path vocab_gguf_path() { return dense::test::data_dir() / "vocab" / "ggml-vocab-qwen35.gguf"; }

inline const Tokenizer& fixture_tokenizer() {
    static const Tokenizer tok = [] {
        const auto file = gguf::GgufFile::open(vocab_gguf_path());
        return Tokenizer::from_gguf(file);
    }();
    return tok;
}

inline std::string read_file_bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct VocabCase {
    std::string text;
    std::vector<int32_t> expected;
};

// .inp: cases separated (and terminated) by "\n__ggml_vocab_test__\n"; .out: one line of ids per case.
inline std::vector<VocabCase> vocab_cases() {
    const std::string inp = read_file_bytes(vocab_gguf_path().string() + ".inp");
    const std::string out = read_file_bytes(vocab_gguf_path().string() + ".out");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<VocabCase> cases;
    for (size_t pos = 0; pos < inp.size();) {
        const size_t end = inp.find(sep, pos);
        if (end == std::string::npos) break;
        cases.push_back({inp.substr(pos, end - pos), {}});
        pos = end + sep.size();
    }
    std::istringstream lines(out);
    std::string line;
    for (auto& c : cases) {
        if (!std::getline(lines, line)) break;
        std::istringstream ids(line);
        int32_t id = 0;
        while (ids >> id) c.expected.push_back(id);
    }
    return cases;
}

}  // namespace dense::text::test
