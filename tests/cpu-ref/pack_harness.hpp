// libdense-cpu-ref.so loaded through its three C entry points, with a minimal host table that records
// registrations and log lines. Test fixtures derive from PackHarness and run the registered ops
// through their function pointers, exactly as the runtime's executor will.
#pragma once

#include "common/test_paths.hpp"

#include <dense/sdk/pack.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace dense::test {

struct RecordingHost {
    std::vector<dense_op_impl> ops;
    std::vector<std::string> names;  // copies of impl names
    std::vector<std::pair<dense_log_level, std::string>> logs;
    dense_host_api api = dense::sdk::make_struct<dense_host_api>();

    RecordingHost() {
        api.host = this;
        api.log = [](void* h, dense_log_level level, const char* msg) {
            static_cast<RecordingHost*>(h)->logs.emplace_back(level, msg != nullptr ? msg : "(null)");
        };
        api.register_op = [](void* h, const dense_op_impl* impl) -> dense_status {
            auto* self = static_cast<RecordingHost*>(h);
            self->ops.push_back(*impl);
            self->names.emplace_back(impl->name != nullptr ? impl->name : "");
            return DENSE_OK;
        };
        api.register_type = [](void*, const dense_type_traits*, dense_type_id*) -> dense_status {
            return DENSE_E_UNSUPPORTED;
        };
        api.find_type = [](void*, const char*, dense_type_id*) -> dense_status { return DENSE_E_UNSUPPORTED; };
    }
    RecordingHost(const RecordingHost&) = delete;  // api.host points at this object
    RecordingHost& operator=(const RecordingHost&) = delete;

    const dense_op_impl* find(dense_op_kind op, dense_type_id weight, dense_type_id act) const {
        for (const auto& impl : ops)
            if (impl.op_kind == op && impl.weight_type == weight && impl.act_type == act) return &impl;
        return nullptr;
    }
};

class PackHarness : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (handle_ != nullptr) return;  // loaded once per process (packs are never unloaded)
        const auto path = dense::test::build_pack_dir() / "libdense-cpu-ref.so";
        handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(handle_, nullptr) << "dlopen " << path << ": " << dlerror();
        score_ = reinterpret_cast<dense_pack_score_fn>(dlsym(handle_, "dense_pack_score"));
        init_ = reinterpret_cast<dense_pack_init_fn>(dlsym(handle_, "dense_pack_init"));
        release_ = reinterpret_cast<dense_pack_release_fn>(dlsym(handle_, "dense_pack_release"));
    }

    void SetUp() override {
        ASSERT_NE(handle_, nullptr);
        ASSERT_NE(score_, nullptr);
        ASSERT_NE(init_, nullptr);
        ASSERT_NE(release_, nullptr);
        ASSERT_EQ(init_(&host_.api, &pack_), DENSE_OK);
        ASSERT_NE(pack_, nullptr);
    }

    void TearDown() override {
        if (pack_ != nullptr) release_(pack_);
    }

    static dense_op_call make_call(dense_op_kind op, const std::vector<dense_tensor_view>& src,
                                   const std::vector<dense_tensor_view>& dst, const void* params = nullptr) {
        auto c = dense::sdk::make_struct<dense_op_call>();
        c.op_kind = op;
        c.n_src = static_cast<uint32_t>(src.size());
        c.src = src.data();
        c.n_dst = static_cast<uint32_t>(dst.size());
        c.dst = dst.data();
        c.params = params;
        return c;
    }

    dense_status run(const dense_op_impl* impl, const dense_op_call& call) { return impl->run(impl->user, &call); }

    static inline void* handle_ = nullptr;  // never dlclose'd (packs are not unloaded)
    static inline dense_pack_score_fn score_ = nullptr;
    static inline dense_pack_init_fn init_ = nullptr;
    static inline dense_pack_release_fn release_ = nullptr;
    RecordingHost host_;
    dense_pack* pack_ = nullptr;
};

}  // namespace dense::test
