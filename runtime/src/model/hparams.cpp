#include "model/hparams.hpp"

#include "core/error.hpp"

#include <sstream>

namespace dense::model {

void HParams::set(const std::string& name, HParamValue value) {
    if (!values_.count(name)) order_.push_back(name);
    values_[name] = std::move(value);
}

const HParamValue* HParams::find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
}

std::optional<Number> HParams::number(const std::string& name, std::optional<int64_t> layer) const {
    const HParamValue* v = find(name);
    if (v == nullptr) return std::nullopt;
    if (const auto* i = std::get_if<int64_t>(v)) return Number{*i};
    if (const auto* d = std::get_if<double>(v)) return Number{*d};
    if (const auto* arr = std::get_if<std::vector<int64_t>>(v)) {
        if (layer) {
            if (*layer < 0 || static_cast<size_t>(*layer) >= arr->size()) return std::nullopt;
            return Number{(*arr)[static_cast<size_t>(*layer)]};
        }
        if (!arr->empty()) {
            for (int64_t x : *arr)
                if (x != arr->front()) return std::nullopt;  // differs per layer: needs a layer
            return Number{arr->front()};
        }
    }
    return std::nullopt;
}

int64_t HParams::get_int(const std::string& name, std::optional<int64_t> layer) const {
    auto n = number(name, layer);
    if (!n || !std::holds_alternative<int64_t>(*n))
        throw Error(ErrorKind::Internal, "hparam '" + name + "' is not an integer here");
    return std::get<int64_t>(*n);
}

double HParams::get_float(const std::string& name) const {
    auto n = number(name);
    if (!n) throw Error(ErrorKind::Internal, "hparam '" + name + "' is not a number");
    return std::holds_alternative<double>(*n) ? std::get<double>(*n) : static_cast<double>(std::get<int64_t>(*n));
}

Resolver HParams::resolver(std::optional<int64_t> layer) const {
    return [this, layer](const std::string& name) -> std::optional<Number> {
        if (name == "il" && layer) return Number{*layer};
        return number(name, layer);
    };
}

std::string HParams::describe(const std::string& name) const {
    const HParamValue* v = find(name);
    if (v == nullptr) return "?";
    std::ostringstream os;
    if (const auto* i = std::get_if<int64_t>(v)) os << *i;
    else if (const auto* d = std::get_if<double>(v)) os << *d;
    else if (const auto* s = std::get_if<std::string>(v)) os << '"' << *s << '"';
    else {
        const auto& arr = std::get<std::vector<int64_t>>(*v);
        os << '[';
        for (size_t k = 0; k < arr.size(); ++k) {
            if (k == 8 && arr.size() > 10) {
                os << ", ... (" << arr.size() << " values)";
                break;
            }
            os << (k ? ", " : "") << arr[k];
        }
        os << ']';
    }
    return os.str();
}

}  // namespace dense::model
