// A tiny expression language for model descriptions: shapes ("n_embd", "2*key_dim + ssm_inner_size"),
// checks ("n_head % n_head_kv == 0") and the layer schedule ("(il + 1) % full_attn_interval == 0").
//
// Grammar (C precedence): ternary ?:, ||, &&, == != < <= > >=, + -, * / %, unary - !, parentheses,
// integer literals, float literals, identifiers. Values are int64 or double; integer arithmetic is
// checked (overflow, division by zero -> error). Parsed once, evaluated many times.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dense::model {

using Number = std::variant<int64_t, double>;

// Resolves an identifier; return nullopt for unknown names (evaluation then fails naming it).
using Resolver = std::function<std::optional<Number>(const std::string& name)>;

class Expr {
public:
    // Throws dense::Error(Config) with `where` (e.g. "models/qwen35.yaml: tensors.global[0].shape[1]")
    // and the column of the problem.
    static Expr parse(const std::string& text, const std::string& where);

    Number eval(const Resolver& resolve) const;
    int64_t eval_int(const Resolver& resolve) const;  // error if the result is not an integer
    bool eval_bool(const Resolver& resolve) const;    // integer != 0

    const std::string& text() const noexcept { return text_; }
    std::vector<std::string> identifiers() const;     // every identifier it uses

    struct Node;

private:
    std::string text_;
    std::string where_;
    std::shared_ptr<const Node> root_;
};

}  // namespace dense::model
