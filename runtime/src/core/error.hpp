// The one exception type the core throws for anything a user can cause (bad file, bad YAML, bad
// flag) or a pack reports. The CLI catches it at the top, prints what() and exits non-zero; it never
// crosses the pack ABI.
#pragma once

#include <stdexcept>
#include <string>

namespace dense {

enum class ErrorKind {
    Io,           // cannot open/map/read a file
    Format,       // a file's bytes violate its format (GGUF rules)
    Config,       // run config / model description YAML problems
    Model,        // a GGUF does not match its model description
    Pack,         // kernel pack loading/selection problems
    Device,       // device probing / allocation
    Numeric,      // NaN/Inf detected
    Usage,        // bad command-line use
    Internal      // a bug
};

const char* to_string(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const noexcept { return kind_; }

private:
    ErrorKind kind_;
};

}  // namespace dense
