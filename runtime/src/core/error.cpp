#include "core/error.hpp"

namespace dense {

const char* to_string(ErrorKind kind) noexcept {
    switch (kind) {
        case ErrorKind::Io: return "io";
        case ErrorKind::Format: return "format";
        case ErrorKind::Config: return "config";
        case ErrorKind::Model: return "model";
        case ErrorKind::Pack: return "pack";
        case ErrorKind::Device: return "device";
        case ErrorKind::Numeric: return "numeric";
        case ErrorKind::Usage: return "usage";
        case ErrorKind::Internal: return "internal";
    }
    return "unknown";
}

}  // namespace dense
