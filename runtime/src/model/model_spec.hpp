// A model description (models/<arch>.yaml) parsed and checked: what the network IS, as data.
// Parsing checks the file's own consistency (unknown keys, bad expressions, recipe steps that use
// undeclared weights or activations nobody produced); binding a GGUF to it is model_binding.hpp.
#pragma once

#include "model/expr.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dense::model {

enum class HParamType { U32, F32, String, I32Array, BoolArray, U32OrArray, CountOf };

struct HParamDecl {
    std::string name;
    std::string key;  // may contain "{arch}"
    HParamType type = HParamType::U32;
    bool required = false;
    std::optional<Expr> default_value;
    std::optional<int64_t> length;  // arrays: required element count
};

struct TensorRole {
    std::string role;                  // "ffn_up"
    std::string name_pattern;          // "blk.{il}.ffn_up.weight"
    std::vector<Expr> shape;           // ne order
    std::vector<std::string> types;    // allowed type names; "runtime" = any pack-registered format
    bool optional = false;
    std::string absent_means;          // documentation for optional tensors
};

struct ScheduleRule {
    std::string kind;
    Expr condition;
};

struct Schedule {
    Expr layers;                        // number of trunk layers
    std::vector<std::string> kinds;     // the first is the default kind
    std::optional<std::string> array_key;  // bool array: true -> array_true_kind
    std::string array_true_kind, array_false_kind;
    std::vector<ScheduleRule> rules;    // first match wins
};

struct OptionalBlock {
    std::string name;
    Expr present_if, first_layer, last_layer;
    std::vector<TensorRole> tensors;
};

struct RecipeStep {
    std::string op;
    std::vector<std::string> inputs;
    std::vector<std::string> weights;
    std::string fallback_weight;
    std::string state;
    std::vector<std::string> outputs;
};

struct ModelSpec {
    std::filesystem::path source;
    std::string arch;
    std::vector<HParamDecl> hparams;
    std::vector<std::pair<std::string, Expr>> derived;
    std::vector<Expr> checks;
    Schedule schedule;
    std::vector<TensorRole> global_tensors;
    std::vector<TensorRole> every_layer_tensors;
    std::map<std::string, std::vector<TensorRole>> kind_tensors;  // per layer kind
    std::vector<OptionalBlock> optional_blocks;
    std::map<std::string, std::vector<RecipeStep>> recipes;       // per layer kind + "ffn" + "head"

    // Throws dense::Error(Config) naming file, line and key.
    static ModelSpec load(const std::filesystem::path& path);
    static ModelSpec parse(const std::string& yaml_text, const std::filesystem::path& display_path);

    // Roles a layer of `kind` has (every_layer + kind-specific).
    std::vector<const TensorRole*> layer_roles(const std::string& kind) const;
};

// The ops a recipe may use: the core's closed list (the graph builder maps each to pack op kinds).
const std::vector<std::string>& known_recipe_ops();

// models/<arch>.yaml from: $DENSE_MODELS_DIR, <exe dir>/../share/dense-rt/models, the source tree.
std::optional<std::filesystem::path> find_model_description(const std::string& arch);

}  // namespace dense::model
