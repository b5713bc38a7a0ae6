#include "llama_logits_runner.hpp"

#include "llama_runtime_abi.hpp"

#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

namespace dense::conformance {

namespace {

namespace abi = llama_abi;

constexpr const char* kLlamaLib = "libllama.v0.5.0.so";
constexpr const char* kGgmlLib = "libggml.v0.5.0.so";
constexpr const char* kPackage = "npm @node-llama-cpp/linux-x64@3.22.1";

// llama.cpp's log (it is chatty). Kept so that an error can quote what llama.cpp said about it.
struct LogState {
    std::string text;
    bool echo = false;
};
LogState& log_state() {
    static LogState state;
    return state;
}

void on_llama_log(int /*level*/, const char* text, void* /*user_data*/) {
    if (text == nullptr) return;
    LogState& s = log_state();
    if (s.echo) std::fputs(text, stderr);
    s.text += text;
    constexpr std::size_t kKeep = 1 << 16;
    if (s.text.size() > 2 * kKeep) s.text.erase(0, s.text.size() - kKeep);
}

// The last lines llama.cpp logged, for error messages.
std::string log_tail(std::size_t max_lines = 12) {
    const std::string& t = log_state().text;
    std::size_t start = t.size(), lines = 0;
    while (start > 0 && lines <= max_lines) {
        start = t.rfind('\n', start - 1);
        if (start == std::string::npos) {
            start = 0;
            break;
        }
        ++lines;
    }
    std::string tail = t.substr(start);
    while (!tail.empty() && (tail.front() == '\n')) tail.erase(0, 1);
    return tail.empty() ? "" : "\nllama.cpp log (last lines):\n" + tail;
}

void* open_library(const std::filesystem::path& path) {
    if (!std::filesystem::exists(path))
        throw OracleUnavailable("the llama.cpp oracle library " + path.string() + " is not there (fetch " + kPackage +
                                " with scripts/fetch-oracle.sh, or point --lib-dir / DENSE_LLAMA_ORACLE_DIR at it)");
    // Kept loaded for the life of the process (never dlclose'd); RUNPATH $ORIGIN finds libggml-base.so.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) throw OracleUnavailable(std::string("dlopen ") + path.string() + " failed: " + dlerror());
    return h;
}

template <class Fn>
Fn symbol(void* handle, const char* name, const std::filesystem::path& lib) {
    void* p = dlsym(handle, name);
    if (p == nullptr)
        throw Error(ErrorKind::Io, std::string("symbol ") + name + " missing in " + lib.string() +
                                       " (not the release of " + kPackage + "?)");
    return reinterpret_cast<Fn>(p);
}

// The process-wide oracle: ggml's backend registry is global, so the variant is chosen once.
class Oracle {
public:
    static Oracle& get(const std::filesystem::path& lib_dir, const std::string& variant) {
        static std::unique_ptr<Oracle> oracle;
        if (!oracle) oracle.reset(new Oracle(lib_dir, variant));
        if (oracle->variant_ != variant || oracle->lib_dir_ != lib_dir)
            throw Error(ErrorKind::Usage, "this process already pinned llama.cpp to " + oracle->lib_dir_.string() +
                                              " variant " + oracle->variant_ + "; cannot switch to " + variant);
        return *oracle;
    }

    std::string device_description;
    abi::ModelDefaultParams model_default_params = nullptr;
    abi::ModelLoadFromFile model_load = nullptr;
    abi::ModelFree model_free = nullptr;
    abi::ModelGetVocab model_get_vocab = nullptr;
    abi::VocabNTokens vocab_n_tokens = nullptr;
    abi::ContextDefaultParams context_default_params = nullptr;
    abi::InitFromModel init_from_model = nullptr;
    abi::Free free_context = nullptr;
    abi::NCtx n_ctx = nullptr;
    abi::Decode decode = nullptr;
    abi::GetLogitsIth get_logits_ith = nullptr;

private:
    Oracle(const std::filesystem::path& lib_dir, const std::string& variant) : lib_dir_(lib_dir), variant_(variant) {
        const auto llama_path = lib_dir / kLlamaLib;
        const auto ggml_path = lib_dir / kGgmlLib;
        const auto cpu_path = lib_dir / ("libggml-cpu-" + variant + ".so");
        if (!std::filesystem::exists(cpu_path))
            throw OracleUnavailable("no CPU variant library " + cpu_path.string() + " (variants are named " +
                                    "libggml-cpu-<variant>.so, e.g. haswell)");
        void* llama = open_library(llama_path);
        void* ggml = open_library(ggml_path);  // already loaded as libllama's dependency: same handle

        auto log_set = symbol<abi::LogSet>(llama, "llama_log_set", llama_path);
        auto backend_init = symbol<abi::BackendInit>(llama, "llama_backend_init", llama_path);
        auto backend_load = symbol<abi::BackendLoad>(ggml, "ggml_backend_load", ggml_path);
        auto reg_count = symbol<abi::BackendRegCount>(ggml, "ggml_backend_reg_count", ggml_path);
        auto dev_count = symbol<abi::BackendDevCount>(ggml, "ggml_backend_dev_count", ggml_path);
        auto dev_get = symbol<abi::BackendDevGet>(ggml, "ggml_backend_dev_get", ggml_path);
        auto dev_description = symbol<abi::BackendDevDescription>(ggml, "ggml_backend_dev_description", ggml_path);
        model_default_params = symbol<abi::ModelDefaultParams>(llama, "llama_model_default_params", llama_path);
        model_load = symbol<abi::ModelLoadFromFile>(llama, "llama_model_load_from_file", llama_path);
        model_free = symbol<abi::ModelFree>(llama, "llama_model_free", llama_path);
        model_get_vocab = symbol<abi::ModelGetVocab>(llama, "llama_model_get_vocab", llama_path);
        vocab_n_tokens = symbol<abi::VocabNTokens>(llama, "llama_vocab_n_tokens", llama_path);
        context_default_params = symbol<abi::ContextDefaultParams>(llama, "llama_context_default_params", llama_path);
        init_from_model = symbol<abi::InitFromModel>(llama, "llama_init_from_model", llama_path);
        free_context = symbol<abi::Free>(llama, "llama_free", llama_path);
        n_ctx = symbol<abi::NCtx>(llama, "llama_n_ctx", llama_path);
        decode = symbol<abi::Decode>(llama, "llama_decode", llama_path);
        get_logits_ith = symbol<abi::GetLogitsIth>(llama, "llama_get_logits_ith", llama_path);

        // First, so that ggml's backend loading logs through us too.
        log_set(&on_llama_log, nullptr);

        // This build registers no backend statically (each CPU variant is its own library). If one were
        // already registered, llama.cpp would use it beside ours and the variant would not be pinned.
        if (reg_count() != 0)
            throw Error(ErrorKind::Internal, "a ggml backend is already registered before pinning the CPU variant");
        if (backend_load(cpu_path.c_str()) == nullptr)
            throw OracleUnavailable("ggml_backend_load(" + cpu_path.string() +
                                    ") refused it (this CPU may lack the variant's instruction set)" + log_tail());
        if (reg_count() != 1 || dev_count() < 1)
            throw Error(ErrorKind::Internal, "after loading " + cpu_path.string() + ": " + std::to_string(reg_count()) +
                                                 " backends, " + std::to_string(dev_count()) +
                                                 " devices (expected 1 CPU)");
        // Safe now: it only loads all backends when none is registered.
        backend_init();
        if (reg_count() != 1) throw Error(ErrorKind::Internal, "llama_backend_init registered more backends");
        const char* desc = dev_description(dev_get(0));
        device_description = desc != nullptr ? desc : "";

        // Sanity check of the declared struct layouts against the library's own defaults (a different
        // release would not match these facts of v0.5.0).
        const abi::ContextParams cd = context_default_params();
        const abi::ModelParams md = model_default_params();
        if (cd.n_ctx != 512 || cd.n_ubatch != 512 || cd.n_seq_max != 1 || cd.flash_attn_type != abi::kFlashAttnAuto ||
            cd.type_k != abi::kGgmlTypeF16 || cd.type_v != abi::kGgmlTypeF16 || md.vocab_only || !md.use_extra_bufts)
            throw Error(ErrorKind::Internal, "llama.cpp's default parameters do not match the declared ABI of " +
                                                 std::string(kPackage) + " (another release in " + lib_dir.string() +
                                                 "?)");
    }

    std::filesystem::path lib_dir_;
    std::string variant_;
};

std::string json_string(const std::string& s) {
    return nlohmann::json(s).dump();
}

}  // namespace

std::vector<int32_t> parse_ids(const std::string& text) {
    std::vector<int32_t> ids;
    std::istringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.erase(0, 1);
        while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
        long long v = 0;
        std::size_t used = 0;
        try {
            v = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (item.empty() || used != item.size() || v < 0 || v > INT32_MAX)
            throw Error(ErrorKind::Usage, "token ids: \"" + item + "\" is not a non-negative 32-bit integer");
        ids.push_back(static_cast<int32_t>(v));
    }
    if (ids.empty()) throw Error(ErrorKind::Usage, "token ids: none given");
    return ids;
}

std::vector<std::size_t> parse_batch_schedule(const std::string& text) {
    if (text == "all") return {};
    std::vector<std::size_t> schedule;
    for (int32_t n : parse_ids(text)) {
        if (n == 0) throw Error(ErrorKind::Usage, "batch: a batch of 0 tokens");
        schedule.push_back(static_cast<std::size_t>(n));
    }
    return schedule;
}

std::string batch_schedule_to_string(const std::vector<std::size_t>& schedule) {
    if (schedule.empty()) return "all";
    std::string s;
    for (std::size_t n : schedule) s += (s.empty() ? "" : ",") + std::to_string(n);
    return s;
}

LogitMatrix run_llama_logits(const LlamaRunOptions& options) {
    if (options.kv != "f32" && options.kv != "f16")
        throw Error(ErrorKind::Usage, "KV type \"" + options.kv + "\": expected f32 or f16");
    if (options.ids.empty()) throw Error(ErrorKind::Usage, "no token ids");
    if (!std::filesystem::is_regular_file(options.model))
        throw Error(ErrorKind::Io, "model file " + options.model.string() + " does not exist");
    log_state().echo = options.verbose;
    Oracle& o = Oracle::get(options.lib_dir, options.variant);

    abi::ModelParams mp = o.model_default_params();
    mp.n_gpu_layers = 0;
    mp.load_mode = abi::kLoadModeMmap;
    mp.lazy_mode = abi::kLazyModeOff;
    mp.use_extra_bufts = false;  // no repacked weight layouts: plain ggml blocks, the plain vec_dot paths
    const auto model_deleter = [&o](void* m) { o.model_free(m); };
    std::unique_ptr<void, decltype(model_deleter)> model(o.model_load(options.model.c_str(), mp), model_deleter);
    if (!model)
        throw Error(ErrorKind::Model, "llama.cpp could not load the model " + options.model.string() + log_tail());

    const int32_t n_vocab = o.vocab_n_tokens(o.model_get_vocab(model.get()));
    if (n_vocab <= 0)
        throw Error(ErrorKind::Model,
                    options.model.string() + ": llama.cpp reports a vocab of " + std::to_string(n_vocab));
    for (std::size_t i = 0; i < options.ids.size(); ++i)
        if (options.ids[i] >= n_vocab)
            throw Error(ErrorKind::Usage, "token id " + std::to_string(options.ids[i]) + " at index " +
                                              std::to_string(i) + " is out of range: the vocab of " +
                                              options.model.string() + " has " + std::to_string(n_vocab) + " tokens");

    const std::size_t n = options.ids.size();
    std::size_t max_chunk = options.batch_schedule.empty() ? n : 1;
    for (std::size_t c : options.batch_schedule) max_chunk = std::max(max_chunk, std::min(c, n));

    abi::ContextParams cp = o.context_default_params();
    cp.n_ctx = static_cast<uint32_t>(n);  // llama.cpp pads it (to 256)
    // One decode call = one ubatch, so the schedule is exactly what runs.
    cp.n_batch = cp.n_ubatch = static_cast<uint32_t>(max_chunk);
    cp.n_seq_max = 1;
    cp.n_threads = cp.n_threads_batch = 1;  // a fixed reduction order
    cp.flash_attn_type = options.flash_attn ? abi::kFlashAttnEnabled : abi::kFlashAttnDisabled;
    cp.type_k = cp.type_v = options.kv == "f32" ? abi::kGgmlTypeF32 : abi::kGgmlTypeF16;
    cp.op_offload = false;
    cp.no_perf = true;
    const auto ctx_deleter = [&o](void* c) { o.free_context(c); };
    std::unique_ptr<void, decltype(ctx_deleter)> ctx(o.init_from_model(model.get(), cp), ctx_deleter);
    if (!ctx)
        throw Error(ErrorKind::Model, "llama.cpp could not create a context for " + options.model.string() +
                                          " (n_ctx " + std::to_string(n) + ", kv " + options.kv + ", flash attention " +
                                          (options.flash_attn ? "on" : "off") + ")" + log_tail());
    if (o.n_ctx(ctx.get()) < n) throw Error(ErrorKind::Internal, "llama.cpp gave a context smaller than the prompt");

    LogitMatrix m;
    m.rows = n;
    m.vocab = static_cast<std::size_t>(n_vocab);
    m.values.resize(n * m.vocab);
    int32_t seq0 = 0;
    std::size_t done = 0, step = 0;
    while (done < n) {
        std::size_t chunk = n - done;
        if (!options.batch_schedule.empty())
            chunk = std::min(chunk, options.batch_schedule[std::min(step, options.batch_schedule.size() - 1)]);
        std::vector<int32_t> token(options.ids.begin() + static_cast<std::ptrdiff_t>(done),
                                   options.ids.begin() + static_cast<std::ptrdiff_t>(done + chunk));
        std::vector<int32_t> pos(chunk), n_seq_id(chunk, 1);
        std::vector<int32_t*> seq_id(chunk, &seq0);
        std::vector<int8_t> want_logits(chunk, 1);  // every position: teacher-forced comparison
        for (std::size_t i = 0; i < chunk; ++i) pos[i] = static_cast<int32_t>(done + i);
        abi::Batch batch{static_cast<int32_t>(chunk), token.data(), nullptr, pos.data(), n_seq_id.data(), seq_id.data(),
                         want_logits.data()};
        const int32_t rc = o.decode(ctx.get(), batch);
        if (rc != 0)
            throw Error(ErrorKind::Model, "llama_decode returned " + std::to_string(rc) + " for positions " +
                                              std::to_string(done) + ".." + std::to_string(done + chunk - 1) +
                                              log_tail());
        for (std::size_t i = 0; i < chunk; ++i) {
            const float* row = o.get_logits_ith(ctx.get(), static_cast<int32_t>(i));
            if (row == nullptr)
                throw Error(ErrorKind::Internal,
                            "llama_get_logits_ith(" + std::to_string(i) + ") returned null" + log_tail());
            std::memcpy(m.values.data() + (done + i) * m.vocab, row, m.vocab * sizeof(float));
        }
        done += chunk;
        ++step;
    }

    for (std::size_t i = 0; i < n; ++i) m.positions.push_back(static_cast<int64_t>(i));
    m.source = options.model.string();
    m.metadata["dtype"] = json_string("float32");  // as dense-rt's sidecar says it
    m.metadata["model"] = json_string(options.model.string());
    m.metadata["producer"] = json_string(std::string("llama.cpp CPU, ") + kPackage);
    m.metadata["variant"] = json_string(options.variant);
    m.metadata["device"] = json_string(o.device_description);
    m.metadata["kv"] = json_string(options.kv);
    m.metadata["flash_attn"] = json_string(options.flash_attn ? "on" : "off");
    m.metadata["batch"] = json_string(batch_schedule_to_string(options.batch_schedule));
    m.metadata["threads"] = "1";
    m.metadata["ids"] = nlohmann::json(options.ids).dump();
    return m;
}

}  // namespace dense::conformance
