// llama.cpp's tokenizer as a test oracle: libllama.v0.5.0.so of the npm package
// @node-llama-cpp/linux-x64@3.22.1, loaded at run time with dlopen (never linked), found in
// $DENSE_LLAMA_ORACLE_DIR, else <repo>/.oracle/lib. The vocab GGUF is loaded with vocab_only = true.
//
// We do not include llama.h: the few functions and the one struct we need are declared below from the
// facts of that release's C ABI (x86-64). The struct layout is checked by its size (80 bytes) and the
// offset of vocab_only (72), measured against the release's header.
#pragma once

#include "common/test_paths.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dense::text::test {

namespace llama_abi {

// struct llama_model_params of llama.cpp v0.5.0 (node-llama-cpp 3.22.1); enums are int-sized.
struct ModelParams {
    void* devices;
    const void* tensor_buft_overrides;
    int32_t n_gpu_layers;
    int32_t split_mode;
    int32_t load_mode;
    int32_t lazy_mode;
    int32_t main_gpu;
    const float* tensor_split;
    void* progress_callback;
    void* progress_callback_user_data;
    const void* kv_overrides;
    bool vocab_only;
    bool check_tensors;
    bool use_extra_bufts;
    bool no_host;
    bool no_alloc;
    bool load_mtp;
};
static_assert(sizeof(ModelParams) == 80 && offsetof(ModelParams, vocab_only) == 72,
              "llama_model_params layout of llama.cpp v0.5.0 on x86-64");

using LogCallback = void (*)(int level, const char* text, void* user_data);
using LogSet = void (*)(LogCallback, void*);
using ModelDefaultParams = ModelParams (*)();
using ModelLoadFromFile = void* (*)(const char* path, ModelParams params);
using ModelGetVocab = const void* (*)(const void* model);
using VocabNTokens = int32_t (*)(const void* vocab);
using Tokenize = int32_t (*)(const void* vocab, const char* text, int32_t text_len, int32_t* tokens,
                             int32_t n_tokens_max, bool add_special, bool parse_special);
using TokenToPiece = int32_t (*)(const void* vocab, int32_t token, char* buf, int32_t length, int32_t lstrip,
                                 bool special);

}  // namespace llama_abi

class LlamaTokenizerOracle {
public:
    static LlamaTokenizerOracle& instance() {
        static LlamaTokenizerOracle oracle;
        return oracle;
    }

    static std::filesystem::path dir() {
        if (const char* env = std::getenv("DENSE_LLAMA_ORACLE_DIR"); env != nullptr && *env != '\0') return env;
        return dense::test::source_dir() / ".oracle" / "lib";
    }

    // Empty when usable; else why not (the tests skip with it).
    const std::string& problem() const { return problem_; }

    int32_t n_tokens() const { return n_tokens_(vocab_); }

    std::vector<int32_t> tokenize(std::string_view text, bool parse_special) const {
        std::vector<int32_t> ids(text.size() + 16);
        int32_t n = tokenize_(vocab_, text.data(), static_cast<int32_t>(text.size()), ids.data(),
                              static_cast<int32_t>(ids.size()), /*add_special=*/false, parse_special);
        if (n < 0) {
            ids.resize(static_cast<size_t>(-n));
            n = tokenize_(vocab_, text.data(), static_cast<int32_t>(text.size()), ids.data(),
                          static_cast<int32_t>(ids.size()), false, parse_special);
        }
        ids.resize(static_cast<size_t>(n < 0 ? 0 : n));
        return ids;
    }

    std::string piece(int32_t id, bool special) const {
        std::string buf(64, '\0');
        int32_t n = to_piece_(vocab_, id, buf.data(), static_cast<int32_t>(buf.size()), 0, special);
        if (n < 0) {
            buf.resize(static_cast<size_t>(-n));
            n = to_piece_(vocab_, id, buf.data(), static_cast<int32_t>(buf.size()), 0, special);
        }
        buf.resize(static_cast<size_t>(n < 0 ? 0 : n));
        return buf;
    }

private:
    LlamaTokenizerOracle() {
        const auto lib = dir() / "libllama.v0.5.0.so";
        if (!std::filesystem::exists(lib)) {
            problem_ = "the llama.cpp oracle library " + lib.string() +
                       " is not there; run scripts/fetch-oracle.sh or set DENSE_LLAMA_ORACLE_DIR to a folder with "
                       "libllama.v0.5.0.so, libggml.v0.5.0.so and libggml-base.so of @node-llama-cpp/linux-x64@3.22.1";
            return;
        }
        // Kept for the life of the process (never dlclose'd). Its RUNPATH ($ORIGIN) finds libggml*.so.
        void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            problem_ = std::string("dlopen ") + lib.string() + " failed: " + dlerror();
            return;
        }
        auto sym = [&](const char* name) {
            void* p = dlsym(h, name);
            if (p == nullptr && problem_.empty()) problem_ = std::string("symbol ") + name + " missing in " + lib.string();
            return p;
        };
        auto log_set = reinterpret_cast<llama_abi::LogSet>(sym("llama_log_set"));
        auto default_params = reinterpret_cast<llama_abi::ModelDefaultParams>(sym("llama_model_default_params"));
        auto load = reinterpret_cast<llama_abi::ModelLoadFromFile>(sym("llama_model_load_from_file"));
        auto get_vocab = reinterpret_cast<llama_abi::ModelGetVocab>(sym("llama_model_get_vocab"));
        n_tokens_ = reinterpret_cast<llama_abi::VocabNTokens>(sym("llama_vocab_n_tokens"));
        tokenize_ = reinterpret_cast<llama_abi::Tokenize>(sym("llama_tokenize"));
        to_piece_ = reinterpret_cast<llama_abi::TokenToPiece>(sym("llama_token_to_piece"));
        if (!problem_.empty()) return;

        log_set([](int, const char*, void*) {}, nullptr);  // the loader is chatty on stderr
        llama_abi::ModelParams params = default_params();
        params.vocab_only = true;
        const auto gguf = dense::test::data_dir() / "vocab" / "ggml-vocab-qwen35.gguf";
        model_ = load(gguf.c_str(), params);
        if (model_ == nullptr) {
            problem_ = "llama_model_load_from_file(" + gguf.string() + ", vocab_only) failed";
            return;
        }
        vocab_ = get_vocab(model_);
    }

    std::string problem_;
    void* model_ = nullptr;
    const void* vocab_ = nullptr;
    llama_abi::VocabNTokens n_tokens_ = nullptr;
    llama_abi::Tokenize tokenize_ = nullptr;
    llama_abi::TokenToPiece to_piece_ = nullptr;
};

#define DENSE_REQUIRE_TOKENIZER_ORACLE(oracle)                       \
    auto& oracle = ::dense::text::test::LlamaTokenizerOracle::instance(); \
    if (!oracle.problem().empty()) GTEST_SKIP() << oracle.problem()

}  // namespace dense::text::test
