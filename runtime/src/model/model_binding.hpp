// Binding a validated GGUF to its model description: resolve every hparam from its key (strict
// types), evaluate derived values and checks, decide each layer's kind, and find every tensor the
// description names with exactly the expected shape and an allowed type. Anything missing, extra,
// misshapen or of an unsupported type is a dense::Error(Model) naming the tensor, expected vs actual.
#pragma once

#include "core/type_table.hpp"
#include "gguf/gguf_file.hpp"
#include "model/hparams.hpp"
#include "model/model_spec.hpp"

#include <map>
#include <string>
#include <vector>

namespace dense::model {

struct BoundLayer {
    int64_t index = 0;
    std::string kind;  // a schedule kind, or the optional block's name
    std::map<std::string, const gguf::TensorInfo*> tensors;  // role -> tensor (optional ones may be absent)
};

struct BoundModel {
    std::string arch;
    HParams hparams;
    std::map<std::string, const gguf::TensorInfo*> globals;  // role -> tensor
    std::vector<BoundLayer> layers;                          // the trunk, in order
    std::vector<BoundLayer> skipped_blocks;                  // validated, never run (e.g. MTP)
    bool tied_output = false;                                // LM head = token_embd
    std::vector<std::string> warnings;                       // non-fatal findings, for the log

    int64_t count_layers(const std::string& kind) const;
};

// Resolves hparams only (no tensors): for `info` on files whose tensors do not bind, and for tests.
HParams resolve_hparams(const gguf::GgufFile& file, const ModelSpec& spec);

BoundModel bind_model(const gguf::GgufFile& file, const ModelSpec& spec,
                      const TypeTable& types = global_type_table());

}  // namespace dense::model
