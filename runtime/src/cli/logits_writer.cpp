#include "cli/logits_writer.hpp"

#include "core/error.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

namespace dense::cli {

LogitsWriter::LogitsWriter(const std::string& path, int64_t vocab) : path_(path), vocab_(vocab) {
    if (path_.empty()) return;
    out_.open(path_, std::ios::binary | std::ios::trunc);
    if (!out_) throw Error(ErrorKind::Io, path_ + ": cannot open for writing");
}

void LogitsWriter::add(int64_t position, std::span<const float> logits) {
    if (path_.empty()) return;
    if (static_cast<int64_t>(logits.size()) != vocab_) throw Error(ErrorKind::Internal, "logits row size mismatch");
    out_.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size_bytes()));
    positions_.push_back(position);
}

void LogitsWriter::finish() {
    if (path_.empty()) return;
    out_.close();
    if (!out_) throw Error(ErrorKind::Io, path_ + ": write failed");
    nlohmann::json j{{"rows", positions_.size()}, {"vocab", vocab_}, {"positions", positions_}, {"dtype", "float32"}};
    std::ofstream side(path_ + ".json", std::ios::trunc);
    side << j.dump() << "\n";
    if (!side) throw Error(ErrorKind::Io, path_ + ".json: write failed");
}

LayerDumper::LayerDumper(const std::string& dir, int64_t n_layers, int64_t n_embd) : dir_(dir), n_embd_(n_embd) {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw Error(ErrorKind::Io, dir_ + ": cannot create directory (" + ec.message() + ")");
    for (int64_t il = 0; il < n_layers; ++il) {
        char name[32];
        std::snprintf(name, sizeof name, "layer%02lld.f32", static_cast<long long>(il));
        files_.emplace_back((std::filesystem::path(dir_) / name).string(), std::ios::binary | std::ios::trunc);
        if (!files_.back()) throw Error(ErrorKind::Io, dir_ + "/" + name + ": cannot open for writing");
    }
}

void LayerDumper::add(int64_t layer, int64_t position, std::span<const float> hidden) {
    if (dir_.empty() || layer < 0 || layer >= static_cast<int64_t>(files_.size())) return;
    files_[static_cast<size_t>(layer)].write(reinterpret_cast<const char*>(hidden.data()),
                                             static_cast<std::streamsize>(hidden.size_bytes()));
    if (layer == 0) positions_.push_back(position);
}

void LayerDumper::finish() {
    if (dir_.empty()) return;
    for (auto& f : files_) {
        f.close();
        if (!f) throw Error(ErrorKind::Io, dir_ + ": write failed");
    }
    nlohmann::json j{{"layers", files_.size()}, {"n_embd", n_embd_}, {"positions", positions_}, {"dtype", "float32"}};
    std::ofstream side((std::filesystem::path(dir_) / "layers.json").string(), std::ios::trunc);
    side << j.dump() << "\n";
}

}  // namespace dense::cli
