// Shared helpers for the pack-stage tests: log capture, policies limited to the test packs, and
// device lists that do not depend on the machine the tests run on.
#pragma once

#include "common/test_paths.hpp"
#include "packs/device_probe.hpp"
#include "packs/pack_manager.hpp"
#include "packs/pack_policy.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dense::test {

struct LogLine {
    spdlog::level::level_enum level;
    std::string text;
};

// Routes spdlog's default logger into memory for the lifetime of the object.
class LogCapture {
public:
    LogCapture() : sink_(std::make_shared<Sink>()), previous_(spdlog::default_logger()) {
        auto logger = std::make_shared<spdlog::logger>("capture", sink_);
        logger->set_level(spdlog::level::trace);
        spdlog::set_default_logger(logger);
    }
    ~LogCapture() { spdlog::set_default_logger(previous_); }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    std::vector<LogLine> lines() const {
        std::lock_guard lock(sink_->lines_mutex);
        return sink_->lines;
    }
    // Lines at `level` or above that contain every one of `needles`.
    std::vector<std::string> matching(spdlog::level::level_enum level, const std::vector<std::string>& needles) const {
        std::vector<std::string> out;
        for (const auto& l : lines()) {
            if (l.level < level) continue;
            if (std::all_of(needles.begin(), needles.end(),
                            [&](const std::string& n) { return l.text.find(n) != std::string::npos; }))
                out.push_back(l.text);
        }
        return out;
    }
    std::string dump() const {
        std::string s;
        for (const auto& l : lines())
            s += "  [" + std::string(spdlog::level::to_string_view(l.level).data()) + "] " + l.text + "\n";
        return s;
    }

private:
    struct Sink : spdlog::sinks::base_sink<std::mutex> {
        mutable std::mutex lines_mutex;
        std::vector<LogLine> lines;

    protected:
        void sink_it_(const spdlog::details::log_msg& msg) override {
            std::lock_guard lock(lines_mutex);
            lines.push_back({msg.level, std::string(msg.payload.data(), msg.payload.size())});
        }
        void flush_() override {}
    };
    std::shared_ptr<Sink> sink_;
    std::shared_ptr<spdlog::logger> previous_;
};

inline std::filesystem::path test_pack(const std::string& name) {
    return test_pack_dir() / ("libdense-" + name + ".so");
}

// A policy that loads only `paths` (no $DENSE_PACK_PATH, no install dir).
inline packs::PackPolicy only(std::vector<std::filesystem::path> paths) {
    packs::PackPolicy p;
    p.paths = std::move(paths);
    p.use_env = false;
    p.use_default_dir = false;
    return p;
}

// A fixed CPU description (AVX2 + FMA + F16C, 8 cores, 32 GiB), independent of the test machine.
inline packs::DeviceInfo test_cpu() {
    packs::DeviceInfo d;
    d.hw = packs::make_hw_desc(DENSE_DEVICE_CPU, 0);
    std::strncpy(d.hw.name, "test cpu", sizeof d.hw.name - 1);
    d.hw.cpu_features = DENSE_CPU_SSE42 | DENSE_CPU_AVX | DENSE_CPU_AVX2 | DENSE_CPU_FMA | DENSE_CPU_F16C;
    d.hw.cpu_logical_cores = 8;
    d.hw.total_memory_bytes = 32ull << 30;
    d.hw.free_memory_bytes = 24ull << 30;
    return d;
}

// The test CPU followed by the simulated GPUs of a DENSE_FAKE_DEVICES-style spec ("" = none).
inline std::vector<packs::DeviceInfo> devices_with(const std::string& fake_spec) {
    std::vector<packs::DeviceInfo> out = {test_cpu()};
    for (auto& d : packs::parse_fake_devices(fake_spec, 0)) out.push_back(std::move(d));
    return out;
}

// The test packs are part of the same build (tests/packs-broken): missing ones are a failure.
#define DENSE_REQUIRE_TEST_PACKS()                                                 \
    ASSERT_TRUE(std::filesystem::exists(::dense::test::test_pack("test-minimal"))) \
        << "test packs not built in " << ::dense::test::test_pack_dir() << " (target dense_test_packs)"

}  // namespace dense::test
