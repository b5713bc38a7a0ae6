#include "core/error.hpp"
#include "model/expr.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <map>

namespace dense::model {
namespace {

Resolver vars(std::map<std::string, Number> m) {
    return [m](const std::string& n) -> std::optional<Number> {
        auto it = m.find(n);
        if (it == m.end()) return std::nullopt;
        return it->second;
    };
}

int64_t ev(const std::string& text, const Resolver& r = vars({})) { return Expr::parse(text, "test").eval_int(r); }

TEST(Expr, PrecedenceAndAssociativityFollowC) {
    EXPECT_EQ(ev("2 + 3 * 4"), 14);
    EXPECT_EQ(ev("(2 + 3) * 4"), 20);
    EXPECT_EQ(ev("20 / 4 / 5"), 1);
    EXPECT_EQ(ev("10 - 4 - 3"), 3);
    EXPECT_EQ(ev("7 % 4 * 2"), 6);
    EXPECT_EQ(ev("-3 + 5"), 2);
    EXPECT_EQ(ev("1 + 2 == 3 && 4 > 3"), 1);
    EXPECT_EQ(ev("0 || 0"), 0);
    EXPECT_EQ(ev("!0 + 1"), 2);
    EXPECT_EQ(ev("1 ? 5 : 6"), 5);
    EXPECT_EQ(ev("0 ? 5 : 1 ? 7 : 8"), 7);
    EXPECT_EQ(ev("3 <= 3"), 1);
    EXPECT_EQ(ev("3 != 3"), 0);
}

TEST(Expr, IdentifiersAndTheLayerScheduleRule) {
    const Expr rule = Expr::parse("(il + 1) % full_attn_interval == 0", "test");
    int full = 0;
    for (int64_t il = 0; il < 64; ++il) full += rule.eval_bool(vars({{"il", il}, {"full_attn_interval", int64_t{4}}}));
    EXPECT_EQ(full, 16);
    EXPECT_EQ(ev("2 * key_dim + inner", vars({{"key_dim", int64_t{2048}}, {"inner", int64_t{6144}}})), 10240);
    const auto ids = rule.identifiers();
    EXPECT_EQ(ids.size(), 2u);
}

TEST(Expr, FloatsMixWithIntegers) {
    const Number n = Expr::parse("eps * 2", "t").eval(vars({{"eps", 1e-6}}));
    ASSERT_TRUE(std::holds_alternative<double>(n));
    EXPECT_DOUBLE_EQ(std::get<double>(n), 2e-6);
    EXPECT_TRUE(Expr::parse("eps > 0", "t").eval_bool(vars({{"eps", 1e-6}})));
    EXPECT_THROW(Expr::parse("1.5", "t").eval_int(vars({})), Error);
}

TEST(Expr, ErrorsNameTheProblem) {
    auto message = [](const std::string& text, const Resolver& r) {
        try {
            Expr::parse(text, "models/x.yaml: shape[0]").eval(r);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Config);
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("n_embd * 2", vars({})).find("unknown name 'n_embd'"), std::string::npos);
    EXPECT_NE(message("4 / (2 - 2)", vars({})).find("division by zero"), std::string::npos);
    EXPECT_NE(message("9223372036854775807 + 1", vars({})).find("overflow"), std::string::npos);
    EXPECT_NE(message("3 * (4 + 1", vars({})).find("expected ')'"), std::string::npos);
    EXPECT_NE(message("3 $ 4", vars({})).find("column 3"), std::string::npos);
    EXPECT_NE(message("12abc", vars({})).find("bad number"), std::string::npos);
    EXPECT_NE(message("", vars({})).find("unexpected end"), std::string::npos);
    EXPECT_NE(message("1 ? 2", vars({})).find("expected ':'"), std::string::npos);
}

}  // namespace
}  // namespace dense::model
