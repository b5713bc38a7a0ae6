#include "model/expr.hpp"

#include "core/error.hpp"

#include <cctype>
#include <cmath>
#include <limits>

namespace dense::model {

struct Expr::Node {
    enum class Kind { Int, Float, Ident, Unary, Binary, Ternary } kind;
    int64_t i = 0;
    double f = 0;
    std::string name;  // identifier or operator
    std::shared_ptr<const Node> a, b, c;
};

namespace {

using NodeP = std::shared_ptr<const Expr::Node>;

Error expr_error(const std::string& where, const std::string& text, size_t col, const std::string& what) {
    return Error(ErrorKind::Config,
                 where + ": " + what + " in expression '" + text + "' at column " + std::to_string(col + 1));
}

class Parser {
public:
    Parser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

    NodeP parse_all() {
        NodeP n = ternary();
        skip_ws();
        if (pos_ != s_.size()) throw expr_error(where_, s_, pos_, "unexpected '" + std::string(1, s_[pos_]) + "'");
        return n;
    }

private:
    const std::string& s_;
    const std::string& where_;
    size_t pos_ = 0;

    void skip_ws() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool eat(const char* op) {
        skip_ws();
        const size_t n = std::char_traits<char>::length(op);
        if (s_.compare(pos_, n, op) != 0) return false;
        // don't split "<=" into "<" "=" or "&&" into "&": longest operators are tried first by callers
        pos_ += n;
        return true;
    }
    static NodeP make_bin(const std::string& op, NodeP a, NodeP b) {
        auto n = std::make_shared<Expr::Node>();
        n->kind = Expr::Node::Kind::Binary;
        n->name = op;
        n->a = std::move(a);
        n->b = std::move(b);
        return n;
    }
    NodeP ternary() {
        NodeP cond = logical_or();
        if (eat("?")) {
            NodeP yes = ternary();
            if (!eat(":")) throw expr_error(where_, s_, pos_, "expected ':'");
            NodeP no = ternary();
            auto n = std::make_shared<Expr::Node>();
            n->kind = Expr::Node::Kind::Ternary;
            n->a = cond;
            n->b = yes;
            n->c = no;
            return n;
        }
        return cond;
    }
    NodeP logical_or() {
        NodeP l = logical_and();
        while (eat("||")) l = make_bin("||", l, logical_and());
        return l;
    }
    NodeP logical_and() {
        NodeP l = comparison();
        while (eat("&&")) l = make_bin("&&", l, comparison());
        return l;
    }
    NodeP comparison() {
        NodeP l = additive();
        for (;;) {
            if (eat("==")) l = make_bin("==", l, additive());
            else if (eat("!=")) l = make_bin("!=", l, additive());
            else if (eat("<=")) l = make_bin("<=", l, additive());
            else if (eat(">=")) l = make_bin(">=", l, additive());
            else if (eat("<")) l = make_bin("<", l, additive());
            else if (eat(">")) l = make_bin(">", l, additive());
            else return l;
        }
    }
    NodeP additive() {
        NodeP l = multiplicative();
        for (;;) {
            if (eat("+")) l = make_bin("+", l, multiplicative());
            else if (eat("-")) l = make_bin("-", l, multiplicative());
            else return l;
        }
    }
    NodeP multiplicative() {
        NodeP l = unary();
        for (;;) {
            if (eat("*")) l = make_bin("*", l, unary());
            else if (eat("/")) l = make_bin("/", l, unary());
            else if (eat("%")) l = make_bin("%", l, unary());
            else return l;
        }
    }
    NodeP unary() {
        for (const char* op : {"-", "!"}) {
            if (eat(op)) {
                auto n = std::make_shared<Expr::Node>();
                n->kind = Expr::Node::Kind::Unary;
                n->name = op;
                n->a = unary();
                return n;
            }
        }
        return primary();
    }
    NodeP primary() {
        skip_ws();
        if (pos_ >= s_.size()) throw expr_error(where_, s_, pos_, "unexpected end");
        const char c = s_[pos_];
        if (c == '(') {
            ++pos_;
            NodeP n = ternary();
            if (!eat(")")) throw expr_error(where_, s_, pos_, "expected ')'");
            return n;
        }
        auto n = std::make_shared<Expr::Node>();
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
            const size_t start = pos_;
            bool is_float = false;
            while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                        ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')))) {
                if (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E') is_float = true;
                ++pos_;
            }
            const std::string lit = s_.substr(start, pos_ - start);
            try {
                size_t used = 0;
                if (is_float) {
                    n->kind = Expr::Node::Kind::Float;
                    n->f = std::stod(lit, &used);
                } else {
                    n->kind = Expr::Node::Kind::Int;
                    n->i = std::stoll(lit, &used);
                }
                if (used != lit.size()) throw std::invalid_argument(lit);
            } catch (const std::exception&) {
                throw expr_error(where_, s_, start, "bad number '" + lit + "'");
            }
            return n;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            const size_t start = pos_;
            while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
            n->kind = Expr::Node::Kind::Ident;
            n->name = s_.substr(start, pos_ - start);
            return n;
        }
        throw expr_error(where_, s_, pos_, "unexpected '" + std::string(1, c) + "'");
    }
};

bool is_int(const Number& v) { return std::holds_alternative<int64_t>(v); }
double as_double(const Number& v) { return is_int(v) ? static_cast<double>(std::get<int64_t>(v)) : std::get<double>(v); }
bool truthy(const Number& v) { return is_int(v) ? std::get<int64_t>(v) != 0 : std::get<double>(v) != 0.0; }

struct Evaluator {
    const std::string& text;
    const std::string& where;
    const Resolver& resolve;

    Error fail(const std::string& what) const {
        return Error(ErrorKind::Config, where + ": " + what + " while evaluating '" + text + "'");
    }

    Number eval(const Expr::Node& n) const {
        using K = Expr::Node::Kind;
        switch (n.kind) {
            case K::Int: return n.i;
            case K::Float: return n.f;
            case K::Ident: {
                auto v = resolve(n.name);
                if (!v) throw fail("unknown name '" + n.name + "'");
                return *v;
            }
            case K::Unary: {
                const Number a = eval(*n.a);
                if (n.name == "!") return static_cast<int64_t>(!truthy(a));
                if (is_int(a)) {
                    if (std::get<int64_t>(a) == std::numeric_limits<int64_t>::min()) throw fail("integer overflow");
                    return -std::get<int64_t>(a);
                }
                return -std::get<double>(a);
            }
            case K::Ternary: return truthy(eval(*n.a)) ? eval(*n.b) : eval(*n.c);
            case K::Binary: return binary(n);
        }
        throw fail("bad node");
    }

    Number binary(const Expr::Node& n) const {
        const std::string& op = n.name;
        if (op == "&&") return static_cast<int64_t>(truthy(eval(*n.a)) && truthy(eval(*n.b)));
        if (op == "||") return static_cast<int64_t>(truthy(eval(*n.a)) || truthy(eval(*n.b)));
        const Number a = eval(*n.a);
        const Number b = eval(*n.b);
        if (is_int(a) && is_int(b)) {
            const int64_t x = std::get<int64_t>(a), y = std::get<int64_t>(b);
            int64_t r = 0;
            if (op == "+") { if (__builtin_add_overflow(x, y, &r)) throw fail("integer overflow"); return r; }
            if (op == "-") { if (__builtin_sub_overflow(x, y, &r)) throw fail("integer overflow"); return r; }
            if (op == "*") { if (__builtin_mul_overflow(x, y, &r)) throw fail("integer overflow"); return r; }
            if (op == "/" || op == "%") {
                if (y == 0) throw fail("division by zero");
                if (x == std::numeric_limits<int64_t>::min() && y == -1) throw fail("integer overflow");
                return op == "/" ? x / y : x % y;
            }
            if (op == "==") return static_cast<int64_t>(x == y);
            if (op == "!=") return static_cast<int64_t>(x != y);
            if (op == "<") return static_cast<int64_t>(x < y);
            if (op == "<=") return static_cast<int64_t>(x <= y);
            if (op == ">") return static_cast<int64_t>(x > y);
            if (op == ">=") return static_cast<int64_t>(x >= y);
        } else {
            const double x = as_double(a), y = as_double(b);
            if (op == "+") return x + y;
            if (op == "-") return x - y;
            if (op == "*") return x * y;
            if (op == "/") return x / y;
            if (op == "%") return std::fmod(x, y);
            if (op == "==") return static_cast<int64_t>(x == y);
            if (op == "!=") return static_cast<int64_t>(x != y);
            if (op == "<") return static_cast<int64_t>(x < y);
            if (op == "<=") return static_cast<int64_t>(x <= y);
            if (op == ">") return static_cast<int64_t>(x > y);
            if (op == ">=") return static_cast<int64_t>(x >= y);
        }
        throw fail("unknown operator '" + op + "'");
    }
};

void collect(const Expr::Node* n, std::vector<std::string>& out) {
    if (n == nullptr) return;
    if (n->kind == Expr::Node::Kind::Ident) out.push_back(n->name);
    collect(n->a.get(), out);
    collect(n->b.get(), out);
    collect(n->c.get(), out);
}

}  // namespace

Expr Expr::parse(const std::string& text, const std::string& where) {
    Expr e;
    e.text_ = text;
    e.where_ = where;
    e.root_ = Parser(e.text_, e.where_).parse_all();
    return e;
}

Number Expr::eval(const Resolver& resolve) const { return Evaluator{text_, where_, resolve}.eval(*root_); }

int64_t Expr::eval_int(const Resolver& resolve) const {
    const Number v = eval(resolve);
    if (!is_int(v)) throw Error(ErrorKind::Config, where_ + ": expression '" + text_ + "' must give an integer");
    return std::get<int64_t>(v);
}

bool Expr::eval_bool(const Resolver& resolve) const { return truthy(eval(resolve)); }

std::vector<std::string> Expr::identifiers() const {
    std::vector<std::string> out;
    collect(root_.get(), out);
    return out;
}

}  // namespace dense::model
