// The slice of llama.cpp's and ggml's C ABI that llama-logits uses, for the release bundled with npm
// @node-llama-cpp/linux-x64@3.22.1 (libllama.v0.5.0.so, libggml.v0.5.0.so), x86-64 only.
//
// We never include llama.h (the oracle is dlopen'ed, never linked, and its headers are not part of our
// build). The structs are declared from the facts of that release's header and their layout is pinned
// by static_asserts on size and on field offsets measured against it; enums are int-sized there.
// The same approach (and the same ModelParams facts) as tests/text/llama_tokenizer_oracle.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dense::conformance::llama_abi {

// enum ggml_type values used for the KV cache.
inline constexpr int32_t kGgmlTypeF32 = 0;
inline constexpr int32_t kGgmlTypeF16 = 1;
// enum llama_flash_attn_type
inline constexpr int32_t kFlashAttnAuto = -1;
inline constexpr int32_t kFlashAttnDisabled = 0;
inline constexpr int32_t kFlashAttnEnabled = 1;
// enum llama_load_mode / llama_lazy_mode
inline constexpr int32_t kLoadModeMmap = 1;
inline constexpr int32_t kLazyModeOff = 0;

// struct llama_model_params
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
    bool use_extra_bufts;  // CPU "extra" buffer types = weight repacking (and AMX/KleidiAI where built)
    bool no_host;
    bool no_alloc;
    bool load_mtp;
};
static_assert(sizeof(ModelParams) == 80, "llama_model_params size");
static_assert(offsetof(ModelParams, load_mode) == 24 && offsetof(ModelParams, vocab_only) == 72 &&
                  offsetof(ModelParams, use_extra_bufts) == 74 && offsetof(ModelParams, load_mtp) == 77,
              "llama_model_params field offsets");

// struct llama_context_params
struct ContextParams {
    uint32_t n_ctx;
    uint32_t n_batch;
    uint32_t n_ubatch;
    uint32_t n_seq_max;
    uint32_t n_rs_seq;
    uint32_t n_outputs_max;
    uint32_t n_outputs_max_per_seq;
    int32_t n_threads;
    int32_t n_threads_batch;
    int32_t ctx_type;
    int32_t rope_scaling_type;
    int32_t pooling_type;
    int32_t attention_type;
    int32_t flash_attn_type;
    float rope_freq_base;
    float rope_freq_scale;
    float yarn_ext_factor;
    float yarn_attn_factor;
    float yarn_beta_fast;
    float yarn_beta_slow;
    uint32_t yarn_orig_ctx;
    float defrag_thold;
    void* cb_eval;
    void* cb_eval_user_data;
    int32_t type_k;
    int32_t type_v;
    void* abort_callback;
    void* abort_callback_data;
    bool embeddings;
    bool offload_kqv;
    bool no_perf;
    bool op_offload;
    bool swa_full;
    bool kv_unified;
    void* samplers;
    std::size_t n_samplers;
    void* ctx_other;
};
static_assert(sizeof(ContextParams) == 160, "llama_context_params size");
static_assert(offsetof(ContextParams, n_threads) == 28 && offsetof(ContextParams, flash_attn_type) == 52 &&
                  offsetof(ContextParams, cb_eval) == 88 && offsetof(ContextParams, type_k) == 104 &&
                  offsetof(ContextParams, type_v) == 108 && offsetof(ContextParams, embeddings) == 128 &&
                  offsetof(ContextParams, kv_unified) == 133 && offsetof(ContextParams, samplers) == 136 &&
                  offsetof(ContextParams, ctx_other) == 152,
              "llama_context_params field offsets");

// struct llama_batch (passed by value to llama_decode); the caller owns every array.
struct Batch {
    int32_t n_tokens;
    int32_t* token;
    float* embd;
    int32_t* pos;
    int32_t* n_seq_id;
    int32_t** seq_id;
    int8_t* logits;  // non-zero: produce this token's output row
};
static_assert(sizeof(Batch) == 56 && offsetof(Batch, token) == 8 && offsetof(Batch, logits) == 48,
              "llama_batch layout");

using LogCallback = void (*)(int level, const char* text, void* user_data);

// libllama.v0.5.0.so
using LogSet = void (*)(LogCallback, void*);
using BackendInit = void (*)();
using BackendFree = void (*)();
using ModelDefaultParams = ModelParams (*)();
using ModelLoadFromFile = void* (*)(const char* path, ModelParams params);
using ModelFree = void (*)(void* model);
using ModelGetVocab = const void* (*)(const void* model);
using VocabNTokens = int32_t (*)(const void* vocab);
using ContextDefaultParams = ContextParams (*)();
using InitFromModel = void* (*)(void* model, ContextParams params);
using Free = void (*)(void* ctx);
using NCtx = uint32_t (*)(const void* ctx);
using Decode = int32_t (*)(void* ctx, Batch batch);
using GetLogitsIth = float* (*)(void* ctx, int32_t i);

// libggml.v0.5.0.so (the backend registry) and libggml-base.so
using BackendLoad = void* (*)(const char* path);  // returns ggml_backend_reg_t or nullptr
using BackendRegCount = std::size_t (*)();
using BackendDevCount = std::size_t (*)();
using BackendDevGet = void* (*)(std::size_t index);
using BackendDevDescription = const char* (*)(void* dev);
using BackendRegName = const char* (*)(void* reg);

}  // namespace dense::conformance::llama_abi
