#include "model/model_binding.hpp"

#include "core/error.hpp"

#include <set>
#include <sstream>

namespace dense::model {

namespace {

constexpr int64_t kMaxLayers = 65536;  // far above any real model; stops a corrupt count from allocating

std::string substitute(std::string text, const std::string& var, const std::string& value) {
    for (size_t pos = text.find(var); pos != std::string::npos; pos = text.find(var, pos + value.size()))
        text.replace(pos, var.size(), value);
    return text;
}

Error model_error(const gguf::GgufFile& f, const std::string& what) { return Error(ErrorKind::Model, f.path() + ": " + what); }

// "(head_dim=256, head_dim_v=128)" for the identifiers an expression uses.
std::string values_of(const Expr& e, const HParams& hp, std::optional<int64_t> layer) {
    std::ostringstream os;
    std::set<std::string> seen;
    for (const auto& id : e.identifiers()) {
        if (!seen.insert(id).second) continue;
        os << (seen.size() == 1 ? "" : ", ") << id << "=";
        if (id == "il" && layer) os << *layer;
        else os << hp.describe(id);
    }
    return "(" + os.str() + ")";
}

HParamValue read_hparam(const gguf::GgufFile& f, const HParamDecl& d, const std::string& key, const HParams& so_far) {
    switch (d.type) {
        case HParamType::U32:
            if (auto v = f.get_u32_opt(key)) return static_cast<int64_t>(*v);
            break;
        case HParamType::F32:
            if (auto v = f.get_f32_opt(key)) return static_cast<double>(*v);
            break;
        case HParamType::String:
            if (auto v = f.get_string_opt(key)) return std::string(*v);
            break;
        case HParamType::I32Array:
            if (auto v = f.get_i32_array_opt(key)) {
                if (d.length && static_cast<int64_t>(v->size()) != *d.length)
                    throw model_error(f, "key '" + key + "' has " + std::to_string(v->size()) + " elements, expected " +
                                             std::to_string(*d.length));
                return std::vector<int64_t>(v->begin(), v->end());
            }
            break;
        case HParamType::BoolArray:
            if (auto v = f.get_bool_array_opt(key)) {
                std::vector<int64_t> out;
                for (bool b : *v) out.push_back(b ? 1 : 0);
                return out;
            }
            break;
        case HParamType::U32OrArray:
            if (const auto* kv = f.find_kv(key)) {
                if (kv->type() == gguf::ValueType::Array) {
                    auto v = f.get_u32_array(key);
                    return std::vector<int64_t>(v.begin(), v.end());
                }
                return static_cast<int64_t>(f.get_u32(key));
            }
            break;
        case HParamType::CountOf:
            if (const auto* arr = f.get_array_opt(key)) return static_cast<int64_t>(arr->count);
            break;
    }
    if (d.required) throw model_error(f, "required key '" + key + "' (hparam '" + d.name + "') is missing");
    if (!d.default_value) return static_cast<int64_t>(0);
    const Number n = d.default_value->eval(so_far.resolver());
    if (std::holds_alternative<int64_t>(n)) return std::get<int64_t>(n);
    return std::get<double>(n);
}

std::string shape_text(const std::vector<int64_t>& ne) {
    std::string s = "[";
    for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

std::string types_text(const std::vector<std::string>& types) {
    std::string s;
    for (const auto& t : types) s += (s.empty() ? "" : ", ") + t;
    return s;
}

class Binder {
public:
    Binder(const gguf::GgufFile& f, const ModelSpec& spec, const TypeTable& types, BoundModel& out)
        : f_(f), spec_(spec), types_(types), out_(out) {}

    // Finds and checks one tensor role; nullptr if optional and absent.
    const gguf::TensorInfo* bind(const TensorRole& role, std::optional<int64_t> layer, const std::string& where) {
        const std::string name =
            layer ? substitute(role.name_pattern, "{il}", std::to_string(*layer)) : role.name_pattern;
        std::vector<int64_t> expected;
        for (const auto& e : role.shape) expected.push_back(e.eval_int(out_.hparams.resolver(layer)));
        const gguf::TensorInfo* t = f_.find_tensor(name);
        if (t == nullptr) {
            if (role.optional) return nullptr;
            throw model_error(f_, "missing tensor '" + name + "' (" + where + " role '" + role.role + "', expected shape " +
                                      shape_text(expected) + ", type one of: " + types_text(role.types) + ")");
        }
        claimed_.insert(t->name);
        std::vector<int64_t> actual(t->ne.begin(), t->ne.begin() + std::max<size_t>(t->n_dims, 1));
        bool same = true;
        for (size_t i = 0; i < 4; ++i) {
            const int64_t want = i < expected.size() ? expected[i] : 1;
            same = same && t->ne[i] == want;
        }
        if (!same)
            throw model_error(f_, "tensor '" + name + "' has shape " + shape_text(actual) + ", expected " +
                                      shape_text(expected) + " (" + where + " role '" + role.role + "')");
        const TypeInfo* ti = types_.find(t->type);
        const std::string tname = ti ? ti->name : "type#" + std::to_string(t->type);
        bool allowed = false;
        for (const auto& a : role.types) allowed = allowed || a == tname || (a == "runtime" && ti && !ti->builtin);
        if (!allowed)
            throw model_error(f_, "tensor '" + name + "' has type " + tname + ", expected one of: " + types_text(role.types));
        return t;
    }

    void check_unclaimed() {
        for (const auto& t : f_.tensors()) {
            if (claimed_.count(t.name)) continue;
            std::string detail = "not part of the " + spec_.arch + " description";
            int64_t layer = -1;
            if (std::sscanf(std::string(t.name).c_str(), "blk.%ld.", &layer) == 1 && layer >= 0 &&
                layer < static_cast<int64_t>(out_.layers.size()))
                detail += " for layer " + std::to_string(layer) + " (kind " + out_.layers[static_cast<size_t>(layer)].kind + ")";
            throw model_error(f_, "unexpected tensor '" + std::string(t.name) + "': " + detail);
        }
    }

private:
    const gguf::GgufFile& f_;
    const ModelSpec& spec_;
    const TypeTable& types_;
    BoundModel& out_;
    std::set<std::string_view> claimed_;
};

std::vector<std::string> layer_kinds(const gguf::GgufFile& f, const ModelSpec& spec, const HParams& hp, int64_t n_layer) {
    std::vector<std::string> kinds(static_cast<size_t>(n_layer), spec.schedule.kinds.front());
    if (spec.schedule.array_key) {
        const std::string key = substitute(*spec.schedule.array_key, "{arch}", spec.arch);
        if (auto arr = f.get_bool_array_opt(key)) {
            if (static_cast<int64_t>(arr->size()) < n_layer)
                throw model_error(f, "key '" + key + "' has " + std::to_string(arr->size()) + " entries, fewer than the " +
                                         std::to_string(n_layer) + " trunk layers");
            for (int64_t il = 0; il < n_layer; ++il)
                kinds[static_cast<size_t>(il)] =
                    (*arr)[static_cast<size_t>(il)] ? spec.schedule.array_true_kind : spec.schedule.array_false_kind;
            return kinds;
        }
    }
    for (int64_t il = 0; il < n_layer; ++il) {
        for (const auto& rule : spec.schedule.rules) {
            if (rule.condition.eval_bool(hp.resolver(il))) {
                kinds[static_cast<size_t>(il)] = rule.kind;
                break;
            }
        }
    }
    return kinds;
}

}  // namespace

int64_t BoundModel::count_layers(const std::string& kind) const {
    int64_t n = 0;
    for (const auto& l : layers) n += l.kind == kind;
    return n;
}

HParams resolve_hparams(const gguf::GgufFile& f, const ModelSpec& spec) {
    const auto arch = f.get_string_opt("general.architecture");
    if (!arch) throw model_error(f, "required key 'general.architecture' is missing");
    if (*arch != spec.arch)
        throw model_error(f, "architecture '" + std::string(*arch) + "' does not match the description " +
                                 spec.source.string() + " (arch '" + spec.arch + "')");
    HParams hp;
    for (const auto& d : spec.hparams) hp.set(d.name, read_hparam(f, d, substitute(d.key, "{arch}", spec.arch), hp));
    for (const auto& [name, expr] : spec.derived) {
        const Number n = expr.eval(hp.resolver());
        if (std::holds_alternative<int64_t>(n)) hp.set(name, std::get<int64_t>(n));
        else hp.set(name, std::get<double>(n));
    }
    for (const auto& check : spec.checks)
        if (!check.eval_bool(hp.resolver()))
            throw model_error(f, "model check failed: '" + check.text() + "' " + values_of(check, hp, std::nullopt));
    return hp;
}

BoundModel bind_model(const gguf::GgufFile& f, const ModelSpec& spec, const TypeTable& types) {
    BoundModel m;
    m.arch = spec.arch;
    m.hparams = resolve_hparams(f, spec);
    const int64_t n_layer = spec.schedule.layers.eval_int(m.hparams.resolver());
    if (n_layer < 1 || n_layer > kMaxLayers)
        throw model_error(f, "layer count " + std::to_string(n_layer) + " from '" + spec.schedule.layers.text() +
                                 "' is out of range [1, " + std::to_string(kMaxLayers) + "]");
    const auto kinds = layer_kinds(f, spec, m.hparams, n_layer);

    Binder binder(f, spec, types, m);
    for (const auto& role : spec.global_tensors)
        if (const auto* t = binder.bind(role, std::nullopt, "global")) m.globals[role.role] = t;
    m.tied_output = !m.globals.count("output");

    for (int64_t il = 0; il < n_layer; ++il) {
        BoundLayer layer{il, kinds[static_cast<size_t>(il)], {}};
        const std::string where = "layer " + std::to_string(il) + " (" + layer.kind + ")";
        for (const TensorRole* role : spec.layer_roles(layer.kind))
            if (const auto* t = binder.bind(*role, il, where)) layer.tensors[role->role] = t;
        m.layers.push_back(std::move(layer));
    }
    for (const auto& block : spec.optional_blocks) {
        if (!block.present_if.eval_bool(m.hparams.resolver())) continue;
        const int64_t first = block.first_layer.eval_int(m.hparams.resolver());
        const int64_t last = block.last_layer.eval_int(m.hparams.resolver());
        if (first < 0 || last < first || last - first > kMaxLayers)
            throw model_error(f, "optional block '" + block.name + "' has a bad layer range");
        for (int64_t il = first; il <= last; ++il) {
            BoundLayer layer{il, block.name, {}};
            const std::string where = block.name + " block " + std::to_string(il);
            for (const auto& role : block.tensors)
                if (const auto* t = binder.bind(role, il, where)) layer.tensors[role.role] = t;
            m.skipped_blocks.push_back(std::move(layer));
        }
    }
    binder.check_unclaimed();

    // Rule 18 of the GGUF spec: special token ids must be inside the vocabulary (llama.cpp warns).
    if (const auto n_vocab = m.hparams.number("n_vocab"); n_vocab && std::holds_alternative<int64_t>(*n_vocab)) {
        for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                "tokenizer.ggml.padding_token_id", "tokenizer.ggml.unknown_token_id"}) {
            const auto* kv = f.find_kv(key);
            if (kv == nullptr || kv->type() != gguf::ValueType::UInt32) continue;
            const uint32_t id = std::get<uint32_t>(kv->value);
            if (id >= std::get<int64_t>(*n_vocab))
                m.warnings.push_back(std::string(key) + " = " + std::to_string(id) + " is outside the vocabulary (" +
                                     std::to_string(std::get<int64_t>(*n_vocab)) + " tokens); ignored");
        }
    }
    return m;
}

}  // namespace dense::model
