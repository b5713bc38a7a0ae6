// One initialised CUDA pack on the real GPU (device 0), shared by every GPU test of the process:
// the built pack that scores highest for device 0, its device api, a stream, and helpers to move
// bytes and run ops. GPU tests start with
//     DENSE_REQUIRE_GPU(gpu);
// which skips the test with the reason when there is no pack or no device, and fails it when the
// GPU exists but the session cannot be set up.
#pragma once

#include "cuda/cuda_pack_support.hpp"

#include <dense/abi/dense_abi.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dense::test::cuda {

class GpuSession;

// Device memory from the pack's device api, freed on destruction.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const GpuSession* session, void* ptr, uint64_t bytes) : session_(session), ptr_(ptr), bytes_(bytes) {}
    DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer();

    void* get() const noexcept { return ptr_; }
    uint64_t bytes() const noexcept { return bytes_; }
    // ptr + offset bytes
    void* at(uint64_t offset) const noexcept { return static_cast<uint8_t*>(ptr_) + offset; }

private:
    const GpuSession* session_ = nullptr;
    void* ptr_ = nullptr;
    uint64_t bytes_ = 0;
};

class GpuSession {
public:
    struct Setup {
        GpuSession* session = nullptr;  // set when ready
        std::string skip_reason;        // no pack built / no device / no pack scores > 0
        std::string failure;            // a GPU is there but setting up failed
    };
    // Created on first use, kept for the process (never released: the stream and pack stay valid).
    static const Setup& get();

    const CudaPackLib& lib() const noexcept { return *lib_; }
    uint32_t score() const noexcept { return score_; }
    const dense_device_api& device() const noexcept { return *pack_->device; }
    void* device_user() const noexcept { return pack_->user; }  // the `user` of every device api call
    RecordingHost& host() noexcept { return host_; }
    void* stream() const noexcept { return stream_; }
    uint32_t device_index() const noexcept { return 0; }
    std::string describe() const;  // "cuda-sm90 (score 100) on NVIDIA H200 (cc 9.0)"

    // Each helper reports a failed status as a gtest failure (with the pack's log) and returns it.
    DeviceBuffer alloc(uint64_t bytes) const;
    dense_status upload(void* dst, const void* src, uint64_t bytes) const;    // on stream(), then synced
    dense_status download(void* dst, const void* src, uint64_t bytes) const;  // on stream(), then synced
    dense_status sync() const;

    // Runs `call` through the impl the pack registered for (call.op_kind, weight_type).
    dense_status run(dense_type_id weight_type, const dense_op_call& call);
    // Runs `call` through the impl registered for (call.op_kind, weight_type, act_type).
    dense_status run(dense_type_id weight_type, dense_type_id act_type, const dense_op_call& call);

private:
    GpuSession() = default;
    static Setup create();

    const CudaPackLib* lib_ = nullptr;
    uint32_t score_ = 0;
    RecordingHost host_;
    dense_pack* pack_ = nullptr;
    void* stream_ = nullptr;
    dense_hw_desc hw_{};
};

// A float view of `ne` contiguous elements (or blocks) of `type` at `data` on CUDA device 0.
dense_tensor_view cuda_view(void* data, dense_type_id type, uint32_t block_elements, uint32_t block_bytes,
                            std::initializer_list<int64_t> ne);

// A dense_op_call with its header filled, on `stream`.
dense_op_call make_call(dense_op_kind kind, const dense_tensor_view* src, const dense_tensor_view* dst,
                        const void* params, void* stream);

}  // namespace dense::test::cuda

#define DENSE_REQUIRE_GPU(var)                                                   \
    const auto& var##_setup = ::dense::test::cuda::GpuSession::get();            \
    if (!var##_setup.failure.empty()) FAIL() << var##_setup.failure;             \
    if (var##_setup.session == nullptr) GTEST_SKIP() << var##_setup.skip_reason; \
    ::dense::test::cuda::GpuSession& var = *var##_setup.session
