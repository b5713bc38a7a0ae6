// Strict YAML reading for our two YAML files (model descriptions, run configs): every mapping is
// checked against the keys we know, and every scalar is converted with a check, so a typo or a
// wrong type is an error naming the file, line, and the full key path ("sampling.top_k") instead
// of being silently ignored.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dense::model {

class YamlFile {
public:
    // Parses the file; syntax errors become dense::Error(Config) with file:line:col.
    static YamlFile load(const std::filesystem::path& path);
    static YamlFile parse(const std::string& text, const std::filesystem::path& display_path);

    const YAML::Node& root() const noexcept { return root_; }
    const std::filesystem::path& path() const noexcept { return path_; }

    // "configs/x.yaml:12:3: <what>" as a dense::Error(Config).
    [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const;
    [[noreturn]] void fail(const std::string& what) const;

    // Requires `node` to be a mapping whose keys are all in `allowed`.
    void require_map(const YAML::Node& node, const std::string& key_path) const;
    void check_keys(const YAML::Node& node, const std::string& key_path, std::initializer_list<std::string_view> allowed) const;

    std::string get_string(const YAML::Node& node, const std::string& key_path) const;
    int64_t get_int(const YAML::Node& node, const std::string& key_path) const;
    double get_double(const YAML::Node& node, const std::string& key_path) const;
    bool get_bool(const YAML::Node& node, const std::string& key_path) const;
    std::vector<std::string> get_string_list(const YAML::Node& node, const std::string& key_path) const;
    // A scalar or a list of scalars, as strings.
    std::vector<std::string> get_string_or_list(const YAML::Node& node, const std::string& key_path) const;

private:
    std::filesystem::path path_;
    YAML::Node root_;
};

// The whole file as text; dense::Error(Io) naming the path if it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
std::string join_key(const std::string& parent, const std::string& key);

}  // namespace dense::model
