// Environment variable `name` set to `value` for a scope (nullptr name: nothing changes); the previous
// value comes back at its end. For the CUDA packs' A/B switches that are read on every call (the
// GEMM kernel choice, DENSE_CUDA_GEMV_BULK), so one test process can run both sides.
#pragma once

#include <cstdlib>
#include <string>

namespace dense::test::cuda {

class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (name_ == nullptr) return;
        if (const char* old = std::getenv(name_)) {
            old_ = old;
            had_ = true;
        }
        ::setenv(name_, value, 1);
    }
    ~ScopedEnv() {
        if (name_ == nullptr) return;
        if (had_)
            ::setenv(name_, old_.c_str(), 1);
        else
            ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

}  // namespace dense::test::cuda
