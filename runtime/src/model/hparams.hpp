// Hyperparameters resolved from a GGUF through a model description: numbers (int or float),
// per-layer integer arrays, strings. Expressions in the description read them through resolver().
#pragma once

#include "model/expr.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dense::model {

using HParamValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;

class HParams {
public:
    void set(const std::string& name, HParamValue value);
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    const HParamValue* find(const std::string& name) const;

    // Scalar value of `name`; a per-layer array gives element `layer` (or, without a layer, its value
    // if all elements are equal). nullopt if unknown or not a number.
    std::optional<Number> number(const std::string& name, std::optional<int64_t> layer = std::nullopt) const;
    int64_t get_int(const std::string& name, std::optional<int64_t> layer = std::nullopt) const;  // throws
    double get_float(const std::string& name) const;                                               // throws

    // Resolver for expressions; `il` is the layer index when one is given.
    Resolver resolver(std::optional<int64_t> layer = std::nullopt) const;

    // In the order they were set (for printing).
    const std::vector<std::string>& names() const noexcept { return order_; }
    std::string describe(const std::string& name) const;

private:
    std::map<std::string, HParamValue> values_;
    std::vector<std::string> order_;
};

}  // namespace dense::model
