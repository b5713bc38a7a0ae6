// The llama.cpp CPU libraries as a test oracle, loaded at run time (never linked). Fetched by
// scripts/fetch-oracle.sh; found in $DENSE_LLAMA_ORACLE_DIR, else <repo>/.oracle/lib. Tests that need
// it call DENSE_REQUIRE_ORACLE(...) and skip with the reason and the fetch command when it is absent.
#pragma once

#include "common/test_paths.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace dense::test::quant {

// ggml's C signatures (facts of its ABI, as exported by the libraries).
using GgmlDequantizeRow = void (*)(const void* blocks, float* y, int64_t k);
using GgmlQuantizeRowRef = void (*)(const float* x, void* blocks, int64_t k);
using GgmlVecDot = void (*)(int n, float* s, std::size_t bs, const void* vx, std::size_t bx, const void* vy,
                            std::size_t by, int nrc);
using GgmlFp32ToHalfRow = void (*)(const float* x, uint16_t* y, int64_t n);

class LlamaOracle {
public:
    static LlamaOracle& instance() {
        static LlamaOracle oracle;
        return oracle;
    }

    static std::filesystem::path dir() {
        if (const char* env = std::getenv("DENSE_LLAMA_ORACLE_DIR"); env != nullptr && *env != '\0') return env;
        return source_dir() / ".oracle" / "lib";
    }

    // Empty if libggml-base.so is loaded; else why not.
    const std::string& base_problem() const { return base_problem_; }
    // Empty if libggml-cpu-haswell.so is loaded (needs AVX2/FMA/F16C/BMI2); else why not.
    const std::string& cpu_problem() const { return cpu_problem_; }

    // A symbol of libggml-base.so / libggml-cpu-haswell.so, or nullptr.
    void* base_symbol(const std::string& name) const { return base_ != nullptr ? dlsym(base_, name.c_str()) : nullptr; }
    void* cpu_symbol(const std::string& name) const { return cpu_ != nullptr ? dlsym(cpu_, name.c_str()) : nullptr; }

    static std::string fetch_hint() {
        return "the llama.cpp oracle is not available (looked in " + dir().string() +
               "); run scripts/fetch-oracle.sh or set DENSE_LLAMA_ORACLE_DIR";
    }

private:
    LlamaOracle() {
        const auto base = dir() / "libggml-base.so";
        if (!std::filesystem::exists(base)) {
            base_problem_ = fetch_hint();
            cpu_problem_ = base_problem_;
            return;
        }
        // Handles are kept for the life of the process (never dlclose'd).
        base_ = dlopen(base.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (base_ == nullptr) {
            base_problem_ = std::string("dlopen ") + base.string() + " failed: " + dlerror();
            cpu_problem_ = base_problem_;
            return;
        }
        __builtin_cpu_init();
        if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c") &&
              __builtin_cpu_supports("bmi2"))) {
            cpu_problem_ = "this CPU lacks AVX2/FMA/F16C/BMI2 needed by libggml-cpu-haswell.so";
            return;
        }
        const auto cpu = dir() / "libggml-cpu-haswell.so";
        cpu_ = dlopen(cpu.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (cpu_ == nullptr) {
            cpu_problem_ = std::string("dlopen ") + cpu.string() + " failed: " + dlerror();
            return;
        }
        // Fills ggml's CPU-side conversion tables; harmless if the vec_dot code does not use them.
        if (auto init = reinterpret_cast<void (*)()>(dlsym(cpu_, "ggml_cpu_init")); init != nullptr) init();
    }

    void* base_ = nullptr;
    void* cpu_ = nullptr;
    std::string base_problem_;
    std::string cpu_problem_;
};

// ggml's symbol spelling of our type names: "q4_k" -> "q4_K".
inline std::string ggml_symbol_name(std::string name) {
    if (name.size() >= 2 && name.compare(name.size() - 2, 2, "_k") == 0) name.back() = 'K';
    return name;
}

template <class Fn>
Fn oracle_fn(void* symbol) {
    return reinterpret_cast<Fn>(symbol);
}

}  // namespace dense::test::quant

#define DENSE_REQUIRE_ORACLE_BASE()                                                       \
    do {                                                                                  \
        if (!::dense::test::quant::LlamaOracle::instance().base_problem().empty())        \
            GTEST_SKIP() << ::dense::test::quant::LlamaOracle::instance().base_problem(); \
    } while (0)

#define DENSE_REQUIRE_ORACLE_CPU()                                                       \
    do {                                                                                 \
        if (!::dense::test::quant::LlamaOracle::instance().cpu_problem().empty())        \
            GTEST_SKIP() << ::dense::test::quant::LlamaOracle::instance().cpu_problem(); \
    } while (0)
