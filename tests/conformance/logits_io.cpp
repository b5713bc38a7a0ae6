#include "logits_io.hpp"

#include "core/error.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace dense::conformance {

namespace {

using nlohmann::json;

[[noreturn]] void format_error(const std::filesystem::path& path, const std::string& what) {
    throw Error(ErrorKind::Format, path.string() + ": " + what);
}

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::Io, "cannot open " + path.string());
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A non-negative integer field of the sidecar.
std::size_t size_field(const json& j, const char* key, const std::filesystem::path& path) {
    if (!j.contains(key)) format_error(path, std::string("missing key \"") + key + "\"");
    const json& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
        format_error(path, std::string("key \"") + key + "\" must be a non-negative integer, got " + v.dump());
    return v.get<std::size_t>();
}

}  // namespace

std::filesystem::path sidecar_path(const std::filesystem::path& logits_path) {
    return std::filesystem::path(logits_path.string() + ".json");
}

LogitMatrix read_logits(const std::filesystem::path& path) {
    return path.extension() == ".txt" ? read_golden_text(path) : read_logits_f32(path);
}

LogitMatrix read_golden_text(const std::filesystem::path& path) {
    std::istringstream in(read_text(path));
    LogitMatrix m;
    m.source = path.string();
    std::string line;
    std::size_t line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty()) continue;
        std::istringstream ls(line);
        std::string tag;
        int64_t pos = 0;
        if (!(ls >> tag >> pos) || tag != "pos")
            format_error(path, "line " + std::to_string(line_no) + " does not start with \"pos <P>\"");
        std::vector<float> row;
        float v = 0.0f;
        while (ls >> v) row.push_back(v);
        if (!ls.eof()) format_error(path, "line " + std::to_string(line_no) + " has a token that is not a number");
        if (row.empty()) format_error(path, "line " + std::to_string(line_no) + " has no logits");
        if (m.rows == 0) m.vocab = row.size();
        if (row.size() != m.vocab)
            format_error(path, "line " + std::to_string(line_no) + " has " + std::to_string(row.size()) +
                                   " logits, earlier lines have " + std::to_string(m.vocab));
        m.positions.push_back(pos);
        m.values.insert(m.values.end(), row.begin(), row.end());
        ++m.rows;
    }
    if (m.rows == 0) format_error(path, "no \"pos\" lines");
    return m;
}

LogitMatrix read_logits_f32(const std::filesystem::path& path) {
    const auto side = sidecar_path(path);
    json j;
    try {
        j = json::parse(read_text(side));
    } catch (const json::exception& e) {
        format_error(side, std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) format_error(side, "the sidecar must be a JSON object");

    LogitMatrix m;
    m.source = path.string();
    m.rows = size_field(j, "rows", side);
    m.vocab = size_field(j, "vocab", side);
    if (m.vocab == 0) format_error(side, "\"vocab\" is 0");
    if (!j.contains("positions") || !j.at("positions").is_array()) format_error(side, "missing array \"positions\"");
    for (const json& p : j.at("positions")) {
        if (!p.is_number_integer()) format_error(side, "\"positions\" holds a non-integer: " + p.dump());
        m.positions.push_back(p.get<int64_t>());
    }
    if (m.positions.size() != m.rows)
        format_error(side, "\"positions\" has " + std::to_string(m.positions.size()) + " entries but \"rows\" is " +
                               std::to_string(m.rows));
    if (j.contains("dtype") && j.at("dtype") != "float32")
        format_error(side, "\"dtype\" is " + j.at("dtype").dump() + "; only float32 logits are supported");
    for (const auto& [key, value] : j.items())
        if (key != "rows" && key != "vocab" && key != "positions") m.metadata[key] = value.dump();

    // Read straight into the matrix: full-vocabulary files are hundreds of MB.
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::Io, "cannot open " + path.string());
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    const std::size_t expected = m.rows * m.vocab * sizeof(float);
    if (ec) throw Error(ErrorKind::Io, "cannot stat " + path.string() + ": " + ec.message());
    if (size != expected)
        format_error(path, std::to_string(size) + " bytes, but rows " + std::to_string(m.rows) + " x vocab " +
                               std::to_string(m.vocab) + " x 4 = " + std::to_string(expected) + " (from " +
                               side.string() + ")");
    m.values.resize(m.rows * m.vocab);  // x86-64 and the format are both little-endian
    in.read(reinterpret_cast<char*>(m.values.data()), static_cast<std::streamsize>(expected));
    if (!in) throw Error(ErrorKind::Io, "read failed: " + path.string());
    return m;
}

void write_logits(const std::filesystem::path& path, const LogitMatrix& m) {
    if (m.values.size() != m.rows * m.vocab || m.positions.size() != m.rows)
        throw Error(ErrorKind::Internal, "write_logits(" + path.string() + "): inconsistent matrix");
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        if (!out) throw Error(ErrorKind::Io, "cannot create " + path.string());
        out.write(reinterpret_cast<const char*>(m.values.data()),
                  static_cast<std::streamsize>(m.values.size() * sizeof(float)));
        if (!out) throw Error(ErrorKind::Io, "write failed: " + path.string());
    }
    nlohmann::ordered_json j = nlohmann::ordered_json::object();  // rows, vocab, positions first: easy to read
    j["rows"] = m.rows;
    j["vocab"] = m.vocab;
    j["positions"] = m.positions;
    for (const auto& [key, value] : m.metadata) j[key] = nlohmann::ordered_json::parse(value);
    const auto side = sidecar_path(path);
    std::ofstream out(side, std::ios::trunc);
    if (!out) throw Error(ErrorKind::Io, "cannot create " + side.string());
    out << j.dump() << "\n";
    if (!out) throw Error(ErrorKind::Io, "write failed: " + side.string());
}

}  // namespace dense::conformance
