#include "cli/loaded_model.hpp"

#include "core/error.hpp"

#include <spdlog/spdlog.h>

namespace dense::cli {

std::optional<std::filesystem::path> description_for(const gguf::GgufFile& file, const model::RunConfig& config) {
    if (config.model_description) return *config.model_description;
    const auto arch = file.get_string_opt("general.architecture");
    if (!arch) throw Error(ErrorKind::Model, file.path() + ": required key 'general.architecture' is missing");
    return model::find_model_description(std::string(*arch));
}

std::unique_ptr<LoadedModel> load_model(const model::RunConfig& config) {
    gguf::GgufFile file = gguf::GgufFile::open(config.model);
    const auto description = description_for(file, config);
    if (!description)
        throw Error(ErrorKind::Model, file.path() + ": architecture '" +
                                          std::string(file.get_string("general.architecture")) +
                                          "' has no model description (models/<arch>.yaml); dense-rt cannot run it");
    model::ModelSpec spec = model::ModelSpec::load(*description);
    auto loaded = std::unique_ptr<LoadedModel>(new LoadedModel{std::move(file), std::move(spec), {}});
    loaded->bound = model::bind_model(loaded->file, loaded->spec);
    for (const auto& w : loaded->bound.warnings) spdlog::warn("{}: {}", loaded->file.path(), w);
    return loaded;
}

}  // namespace dense::cli
