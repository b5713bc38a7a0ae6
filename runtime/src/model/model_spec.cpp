#include "model/model_spec.hpp"

#include "core/error.hpp"
#include "core/install_prefix.hpp"
#include "model/yaml_strict.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <unistd.h>

namespace dense::model {

namespace {

HParamType parse_hparam_type(const YamlFile& f, const YAML::Node& n, const std::string& key_path) {
    const std::string t = f.get_string(n, key_path);
    if (t == "u32") return HParamType::U32;
    if (t == "f32") return HParamType::F32;
    if (t == "string") return HParamType::String;
    if (t == "i32_array") return HParamType::I32Array;
    if (t == "bool_array") return HParamType::BoolArray;
    if (t == "u32_or_array") return HParamType::U32OrArray;
    if (t == "count_of") return HParamType::CountOf;
    f.fail(n, "'" + key_path + "': unknown hparam type '" + t +
                  "' (u32, f32, string, i32_array, bool_array, u32_or_array, count_of)");
}

Expr parse_expr(const YamlFile& f, const YAML::Node& n, const std::string& key_path) {
    const std::string text = f.get_string(n, key_path);
    const std::string where = f.path().string() + ":" + std::to_string(n.Mark().line + 1) + ": " + key_path;
    return Expr::parse(text, where);
}

std::vector<std::string> expand_types(const YamlFile& f, const YAML::Node& n, const std::string& key_path,
                                      const std::map<std::string, std::vector<std::string>>& sets) {
    if (n.IsScalar()) {
        auto it = sets.find(n.Scalar());
        if (it != sets.end()) return it->second;
    }
    return f.get_string_or_list(n, key_path);
}

TensorRole parse_role(const YamlFile& f, const std::string& role, const YAML::Node& n, const std::string& key_path,
                      const std::map<std::string, std::vector<std::string>>& sets) {
    f.check_keys(n, key_path, {"name", "shape", "types", "optional", "absent_means"});
    if (!n["name"] || !n["shape"] || !n["types"]) f.fail(n, "'" + key_path + "' needs name, shape and types");
    TensorRole r;
    r.role = role;
    r.name_pattern = f.get_string(n["name"], key_path + ".name");
    const YAML::Node& shape = n["shape"];
    if (!shape.IsSequence() || shape.size() < 1 || shape.size() > 4)
        f.fail(shape, "'" + key_path + ".shape' must be a list of 1 to 4 expressions");
    for (size_t i = 0; i < shape.size(); ++i)
        r.shape.push_back(parse_expr(f, shape[i], key_path + ".shape[" + std::to_string(i) + "]"));
    r.types = expand_types(f, n["types"], key_path + ".types", sets);
    if (n["optional"]) r.optional = f.get_bool(n["optional"], key_path + ".optional");
    if (n["absent_means"]) r.absent_means = f.get_string(n["absent_means"], key_path + ".absent_means");
    return r;
}

std::vector<TensorRole> parse_roles(const YamlFile& f, const YAML::Node& n, const std::string& key_path,
                                    const std::map<std::string, std::vector<std::string>>& sets) {
    f.require_map(n, key_path);
    std::vector<TensorRole> out;
    for (const auto& kv : n) {
        const std::string role = kv.first.Scalar();
        out.push_back(parse_role(f, role, kv.second, join_key(key_path, role), sets));
    }
    return out;
}

RecipeStep parse_step(const YamlFile& f, const YAML::Node& n, const std::string& key_path) {
    f.check_keys(n, key_path, {"op", "in", "weight", "fallback_weight", "state", "out"});
    if (!n["op"] || !n["out"]) f.fail(n, "'" + key_path + "' needs op and out");
    RecipeStep s;
    s.op = f.get_string(n["op"], key_path + ".op");
    if (n["in"]) s.inputs = f.get_string_or_list(n["in"], key_path + ".in");
    if (n["weight"]) s.weights = f.get_string_or_list(n["weight"], key_path + ".weight");
    if (n["fallback_weight"]) s.fallback_weight = f.get_string(n["fallback_weight"], key_path + ".fallback_weight");
    if (n["state"]) s.state = f.get_string(n["state"], key_path + ".state");
    s.outputs = f.get_string_or_list(n["out"], key_path + ".out");
    return s;
}

// Every step's op is known, its inputs were produced before (or are the residual stream h), and its
// weights are roles the layer kind declares.
void check_recipe(const YamlFile& f, const YAML::Node& node, const std::string& name,
                  const std::vector<RecipeStep>& steps, const std::set<std::string>& roles) {
    const auto& ops = known_recipe_ops();
    std::set<std::string> available = {"h"};
    for (size_t i = 0; i < steps.size(); ++i) {
        const RecipeStep& s = steps[i];
        const std::string at = "recipes." + name + "[" + std::to_string(i) + "]";
        if (std::find(ops.begin(), ops.end(), s.op) == ops.end()) f.fail(node[i], at + ": unknown op '" + s.op + "'");
        for (const auto& in : s.inputs)
            if (!available.count(in)) f.fail(node[i], at + ": input '" + in + "' is not produced by an earlier step");
        std::vector<std::string> weights = s.weights;
        if (!s.fallback_weight.empty()) weights.push_back(s.fallback_weight);
        for (const auto& w : weights)
            if (!roles.count(w)) f.fail(node[i], at + ": weight '" + w + "' is not a tensor role of '" + name + "'");
        for (const auto& out : s.outputs) available.insert(out);
    }
}

}  // namespace

const std::vector<std::string>& known_recipe_ops() {
    static const std::vector<std::string> ops = {
        "embed_row", "rms_norm",        "rms_norm_heads",   "gemv",           "gemv_add",
        "conv1d_causal_silu", "gdn_gates", "l2_norm_heads", "gated_delta_rule", "gated_rms_norm",
        "rope_neox", "attention_gated", "swiglu"};
    return ops;
}

std::vector<const TensorRole*> ModelSpec::layer_roles(const std::string& kind) const {
    std::vector<const TensorRole*> out;
    for (const auto& r : every_layer_tensors) out.push_back(&r);
    auto it = kind_tensors.find(kind);
    if (it != kind_tensors.end())
        for (const auto& r : it->second) out.push_back(&r);
    return out;
}

ModelSpec ModelSpec::load(const std::filesystem::path& path) {
    return parse(read_text_file(path), path);
}

ModelSpec ModelSpec::parse(const std::string& yaml_text, const std::filesystem::path& display_path) {
    const YamlFile f = YamlFile::parse(yaml_text, display_path);
    const YAML::Node& root = f.root();
    f.check_keys(root, "", {"arch", "hparams", "derived", "checks", "schedule", "type_sets", "tensors",
                            "optional_blocks", "recipes"});
    for (const char* k : {"arch", "hparams", "schedule", "tensors", "recipes"})
        if (!root[k]) f.fail("missing required top-level key '" + std::string(k) + "'");

    ModelSpec spec;
    spec.source = display_path;
    spec.arch = f.get_string(root["arch"], "arch");

    f.require_map(root["hparams"], "hparams");
    std::set<std::string> names;
    for (const auto& kv : root["hparams"]) {
        const std::string name = kv.first.Scalar();
        const std::string kp = "hparams." + name;
        f.check_keys(kv.second, kp, {"key", "type", "required", "default", "length"});
        if (!kv.second["key"] || !kv.second["type"]) f.fail(kv.second, "'" + kp + "' needs key and type");
        HParamDecl d;
        d.name = name;
        d.key = f.get_string(kv.second["key"], kp + ".key");
        d.type = parse_hparam_type(f, kv.second["type"], kp + ".type");
        if (kv.second["required"]) d.required = f.get_bool(kv.second["required"], kp + ".required");
        if (kv.second["default"]) d.default_value = parse_expr(f, kv.second["default"], kp + ".default");
        if (kv.second["length"]) d.length = f.get_int(kv.second["length"], kp + ".length");
        if (d.required && d.default_value) f.fail(kv.second, "'" + kp + "' is required and has a default");
        if (!names.insert(name).second) f.fail(kv.first, "duplicate hparam '" + name + "'");
        spec.hparams.push_back(std::move(d));
    }
    if (root["derived"]) {
        f.require_map(root["derived"], "derived");
        for (const auto& kv : root["derived"]) {
            const std::string name = kv.first.Scalar();
            if (!names.insert(name).second) f.fail(kv.first, "derived '" + name + "' redefines a name");
            spec.derived.emplace_back(name, parse_expr(f, kv.second, "derived." + name));
        }
    }
    if (root["checks"]) {
        if (!root["checks"].IsSequence()) f.fail(root["checks"], "'checks' must be a list");
        for (size_t i = 0; i < root["checks"].size(); ++i)
            spec.checks.push_back(parse_expr(f, root["checks"][i], "checks[" + std::to_string(i) + "]"));
    }

    // schedule
    const YAML::Node& sch = root["schedule"];
    f.check_keys(sch, "schedule", {"layers", "kinds", "from_array", "rules"});
    if (!sch["layers"] || !sch["kinds"]) f.fail(sch, "'schedule' needs layers and kinds");
    spec.schedule.layers = parse_expr(f, sch["layers"], "schedule.layers");
    spec.schedule.kinds = f.get_string_list(sch["kinds"], "schedule.kinds");
    if (spec.schedule.kinds.empty()) f.fail(sch["kinds"], "'schedule.kinds' is empty");
    const std::set<std::string> kinds(spec.schedule.kinds.begin(), spec.schedule.kinds.end());
    auto require_kind = [&](const YAML::Node& n, const std::string& kind, const std::string& kp) {
        if (!kinds.count(kind)) f.fail(n, "'" + kp + "': '" + kind + "' is not one of schedule.kinds");
    };
    if (sch["from_array"]) {
        const YAML::Node& fa = sch["from_array"];
        f.check_keys(fa, "schedule.from_array", {"key", "when_true", "when_false"});
        spec.schedule.array_key = f.get_string(fa["key"], "schedule.from_array.key");
        spec.schedule.array_true_kind = f.get_string(fa["when_true"], "schedule.from_array.when_true");
        spec.schedule.array_false_kind = f.get_string(fa["when_false"], "schedule.from_array.when_false");
        require_kind(fa["when_true"], spec.schedule.array_true_kind, "schedule.from_array.when_true");
        require_kind(fa["when_false"], spec.schedule.array_false_kind, "schedule.from_array.when_false");
    }
    if (sch["rules"]) {
        if (!sch["rules"].IsSequence()) f.fail(sch["rules"], "'schedule.rules' must be a list");
        for (size_t i = 0; i < sch["rules"].size(); ++i) {
            const YAML::Node& r = sch["rules"][i];
            const std::string kp = "schedule.rules[" + std::to_string(i) + "]";
            f.check_keys(r, kp, {"kind", "if"});
            ScheduleRule rule{f.get_string(r["kind"], kp + ".kind"), parse_expr(f, r["if"], kp + ".if")};
            require_kind(r["kind"], rule.kind, kp + ".kind");
            spec.schedule.rules.push_back(std::move(rule));
        }
    }

    // tensors
    std::map<std::string, std::vector<std::string>> sets;
    if (root["type_sets"]) {
        f.require_map(root["type_sets"], "type_sets");
        for (const auto& kv : root["type_sets"])
            sets[kv.first.Scalar()] = f.get_string_list(kv.second, "type_sets." + kv.first.Scalar());
    }
    const YAML::Node& tensors = root["tensors"];
    f.require_map(tensors, "tensors");
    for (const auto& kv : tensors) {
        const std::string group = kv.first.Scalar();
        auto roles = parse_roles(f, kv.second, "tensors." + group, sets);
        if (group == "global") spec.global_tensors = std::move(roles);
        else if (group == "every_layer") spec.every_layer_tensors = std::move(roles);
        else if (kinds.count(group)) spec.kind_tensors[group] = std::move(roles);
        else f.fail(kv.first, "unknown key 'tensors." + group + "' (global, every_layer, or a schedule kind)");
    }
    if (root["optional_blocks"]) {
        f.require_map(root["optional_blocks"], "optional_blocks");
        for (const auto& kv : root["optional_blocks"]) {
            const std::string kp = "optional_blocks." + kv.first.Scalar();
            f.check_keys(kv.second, kp, {"present_if", "first_layer", "last_layer", "tensors"});
            for (const char* k : {"present_if", "first_layer", "last_layer", "tensors"})
                if (!kv.second[k]) f.fail(kv.second, "'" + kp + "' needs " + k);
            spec.optional_blocks.push_back(OptionalBlock{
                kv.first.Scalar(), parse_expr(f, kv.second["present_if"], kp + ".present_if"),
                parse_expr(f, kv.second["first_layer"], kp + ".first_layer"),
                parse_expr(f, kv.second["last_layer"], kp + ".last_layer"),
                parse_roles(f, kv.second["tensors"], kp + ".tensors", sets)});
        }
    }

    // recipes
    const YAML::Node& recipes = root["recipes"];
    f.require_map(recipes, "recipes");
    std::set<std::string> global_roles, every_roles;
    for (const auto& r : spec.global_tensors) global_roles.insert(r.role);
    for (const auto& r : spec.every_layer_tensors) every_roles.insert(r.role);
    for (const auto& kv : recipes) {
        const std::string name = kv.first.Scalar();
        const YAML::Node& list = kv.second;
        if (!list.IsSequence()) f.fail(list, "'recipes." + name + "' must be a list of steps");
        std::vector<RecipeStep> steps;
        for (size_t i = 0; i < list.size(); ++i)
            steps.push_back(parse_step(f, list[i], "recipes." + name + "[" + std::to_string(i) + "]"));
        std::set<std::string> roles;
        if (name == "head") roles = global_roles;
        else if (name == "ffn") roles = every_roles;
        else if (kinds.count(name)) {
            roles = every_roles;
            for (const auto& r : spec.kind_tensors[name]) roles.insert(r.role);
        } else {
            f.fail(kv.first, "unknown key 'recipes." + name + "' (head, ffn, or a schedule kind)");
        }
        check_recipe(f, list, name, steps, roles);
        spec.recipes[name] = std::move(steps);
    }
    for (const auto& k : spec.schedule.kinds)
        if (!spec.recipes.count(k)) f.fail(recipes, "no recipe for layer kind '" + k + "'");
    return spec;
}

std::optional<std::filesystem::path> find_model_description(const std::string& arch) {
    namespace fs = std::filesystem;
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("DENSE_MODELS_DIR"); env && *env) dirs.emplace_back(env);
    if (const auto prefix = install_prefix()) dirs.push_back(*prefix / "share" / "dense-rt" / "models");
    std::error_code ec;
#ifdef DENSE_SOURCE_MODELS_DIR
    dirs.emplace_back(DENSE_SOURCE_MODELS_DIR);
#endif
    for (const auto& d : dirs) {
        const fs::path p = d / (arch + ".yaml");
        if (fs::is_regular_file(p, ec)) return p;
    }
    return std::nullopt;
}

}  // namespace dense::model
