#include "model/yaml_strict.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dense::model {

namespace {

std::string where(const std::filesystem::path& path, const YAML::Mark& mark) {
    if (mark.is_null()) return path.string();
    return path.string() + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::Io, path.string() + ": cannot open (" + std::strerror(errno) + ")");
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw Error(ErrorKind::Io, path.string() + ": read error");
    return ss.str();
}

YamlFile YamlFile::load(const std::filesystem::path& path) { return parse(read_text_file(path), path); }

YamlFile YamlFile::parse(const std::string& text, const std::filesystem::path& display_path) {
    YamlFile f;
    f.path_ = display_path;
    try {
        f.root_ = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw Error(ErrorKind::Config, where(display_path, e.mark) + ": YAML syntax error: " + e.msg);
    }
    return f;
}

void YamlFile::fail(const YAML::Node& at, const std::string& what) const {
    throw Error(ErrorKind::Config, where(path_, at.Mark()) + ": " + what);
}

void YamlFile::fail(const std::string& what) const { throw Error(ErrorKind::Config, path_.string() + ": " + what); }

void YamlFile::require_map(const YAML::Node& node, const std::string& key_path) const {
    if (!node.IsMap()) fail(node, "'" + key_path + "' must be a mapping");
}

void YamlFile::check_keys(const YAML::Node& node, const std::string& key_path,
                          std::initializer_list<std::string_view> allowed) const {
    require_map(node, key_path.empty() ? "(top level)" : key_path);
    for (const auto& kv : node) {
        const std::string key = kv.first.Scalar();
        bool known = false;
        for (auto a : allowed) known = known || key == a;
        if (!known) {
            std::string list;
            for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
            fail(kv.first, "unknown key '" + join_key(key_path, key) + "' (allowed here: " + list + ")");
        }
    }
}

std::string YamlFile::get_string(const YAML::Node& node, const std::string& key_path) const {
    if (!node.IsScalar()) fail(node, "'" + key_path + "' must be a string");
    return node.Scalar();
}

int64_t YamlFile::get_int(const YAML::Node& node, const std::string& key_path) const {
    if (!node.IsScalar()) fail(node, "'" + key_path + "' must be an integer");
    try {
        return node.as<int64_t>();
    } catch (const YAML::Exception&) {
        fail(node, "'" + key_path + "' must be an integer, got '" + node.Scalar() + "'");
    }
}

double YamlFile::get_double(const YAML::Node& node, const std::string& key_path) const {
    if (!node.IsScalar()) fail(node, "'" + key_path + "' must be a number");
    try {
        return node.as<double>();
    } catch (const YAML::Exception&) {
        fail(node, "'" + key_path + "' must be a number, got '" + node.Scalar() + "'");
    }
}

bool YamlFile::get_bool(const YAML::Node& node, const std::string& key_path) const {
    if (!node.IsScalar()) fail(node, "'" + key_path + "' must be true or false");
    try {
        return node.as<bool>();
    } catch (const YAML::Exception&) {
        fail(node, "'" + key_path + "' must be true or false, got '" + node.Scalar() + "'");
    }
}

std::vector<std::string> YamlFile::get_string_list(const YAML::Node& node, const std::string& key_path) const {
    if (!node.IsSequence()) fail(node, "'" + key_path + "' must be a list");
    std::vector<std::string> out;
    for (size_t i = 0; i < node.size(); ++i) out.push_back(get_string(node[i], key_path + "[" + std::to_string(i) + "]"));
    return out;
}

std::vector<std::string> YamlFile::get_string_or_list(const YAML::Node& node, const std::string& key_path) const {
    if (node.IsScalar()) return {node.Scalar()};
    return get_string_list(node, key_path);
}

std::string join_key(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
}

}  // namespace dense::model
