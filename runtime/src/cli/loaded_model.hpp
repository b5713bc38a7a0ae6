// A GGUF opened, matched with its model description and bound: what every command that runs or
// inspects a model starts from. Kept behind a unique_ptr because the binding points into the file.
#pragma once

#include "gguf/gguf_file.hpp"
#include "model/model_binding.hpp"
#include "model/model_spec.hpp"
#include "model/run_config.hpp"

#include <memory>
#include <optional>

namespace dense::cli {

struct LoadedModel {
    gguf::GgufFile file;
    model::ModelSpec spec;
    model::BoundModel bound;
};

// The description to bind `file` with: config.model_description, else models/<general.architecture>.yaml;
// nullopt when the architecture has none. Throws if the file names no architecture.
std::optional<std::filesystem::path> description_for(const gguf::GgufFile& file, const model::RunConfig& config);

// Opens config.model, finds the description (config override or models/<arch>.yaml) and binds.
// Logs binding warnings. Throws dense::Error with the exact validation or binding problem.
std::unique_ptr<LoadedModel> load_model(const model::RunConfig& config);

}  // namespace dense::cli
