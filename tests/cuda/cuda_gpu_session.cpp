#include "cuda/cuda_gpu_session.hpp"

#include <dense/sdk/pack.hpp>

#include <cstdio>

namespace dense::test::cuda {

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        this->~DeviceBuffer();
        session_ = other.session_;
        ptr_ = other.ptr_;
        bytes_ = other.bytes_;
        other.ptr_ = nullptr;
        other.bytes_ = 0;
    }
    return *this;
}

DeviceBuffer::~DeviceBuffer() {
    if (session_ != nullptr && ptr_ != nullptr) {
        session_->device().free(session_->device_user(), session_->device_index(), ptr_);
    }
    ptr_ = nullptr;
}

const GpuSession::Setup& GpuSession::get() {
    static const Setup setup = create();
    return setup;
}

GpuSession::Setup GpuSession::create() {
    Setup s;
    const auto& packs = built_cuda_packs();
    if (packs.empty()) {
        s.skip_reason = no_cuda_packs_reason();
        return s;
    }
    for (const CudaPackLib& lib : packs)
        if (!lib.usable()) {
            s.failure = lib.load_error;
            return s;
        }
    const GpuProbe& probe = probe_gpu();
    if (!probe.found) {
        s.skip_reason = probe.reason;
        return s;
    }
    const CudaPackLib* best = nullptr;
    uint32_t best_score = 0;
    std::string scores;
    for (const CudaPackLib& lib : packs) {
        const uint32_t score = lib.score(&probe.device0);
        scores += (scores.empty() ? "" : ", ") + lib.name + " scores " + std::to_string(score);
        if (score > best_score) {
            best = &lib;
            best_score = score;
        }
    }
    const std::string device = std::string(probe.device0.name) + " (cc " + std::to_string(probe.device0.cuda_cc_major) +
                               "." + std::to_string(probe.device0.cuda_cc_minor) + ", driver " +
                               std::to_string(probe.device0.cuda_driver_version) + ")";
    if (best == nullptr) {
        s.skip_reason = "no built CUDA pack can run on device 0, " + device + ": " + scores;
        return s;
    }
    auto* session = new GpuSession();  // kept for the life of the process
    session->lib_ = best;
    session->score_ = best_score;
    session->hw_ = probe.device0;
    const dense_status init = best->init(session->host_.api(), &session->pack_);
    if (init != DENSE_OK || session->pack_ == nullptr) {
        s.failure =
            best->name + ": dense_pack_init returned " + std::to_string(init) + "\n" + session->host_.log_text();
        return s;
    }
    if (session->pack_->device == nullptr) {
        s.failure = best->name + ": the pack has no device api";
        return s;
    }
    const dense_device_api& dev = *session->pack_->device;
    uint64_t free_bytes = 0, total_bytes = 0;
    if (dev.mem_info(session->pack_->user, 0, &free_bytes, &total_bytes) != DENSE_OK || total_bytes == 0) {
        s.failure = best->name + ": mem_info failed on " + device + " although the driver reports it\n" +
                    session->host_.log_text();
        return s;
    }
    if (dev.stream_create(session->pack_->user, 0, &session->stream_) != DENSE_OK) {
        s.failure = best->name + ": stream_create failed\n" + session->host_.log_text();
        return s;
    }
    std::printf("[ cuda     ] %s\n", session->describe().c_str());
    s.session = session;
    return s;
}

std::string GpuSession::describe() const {
    return lib_->name + " (score " + std::to_string(score_) + ") on " + hw_.name + " (cc " +
           std::to_string(hw_.cuda_cc_major) + "." + std::to_string(hw_.cuda_cc_minor) + ", driver " +
           std::to_string(hw_.cuda_driver_version) + ", " + std::to_string(hw_.cuda_sm_count) + " SMs)";
}

DeviceBuffer GpuSession::alloc(uint64_t bytes) const {
    void* p = nullptr;
    const dense_status s = device().alloc(pack_->user, device_index(), bytes, &p);
    EXPECT_EQ(s, DENSE_OK) << "alloc(" << bytes << ")\n" << host_.log_text();
    return DeviceBuffer(s == DENSE_OK ? this : nullptr, p, bytes);
}

dense_status GpuSession::upload(void* dst, const void* src, uint64_t bytes) const {
    dense_status s = device().copy_to_device(pack_->user, device_index(), dst, src, bytes, stream_);
    if (s == DENSE_OK) s = sync();
    EXPECT_EQ(s, DENSE_OK) << "upload of " << bytes << " bytes\n" << host_.log_text();
    return s;
}

dense_status GpuSession::download(void* dst, const void* src, uint64_t bytes) const {
    dense_status s = device().copy_to_host(pack_->user, device_index(), dst, src, bytes, stream_);
    if (s == DENSE_OK) s = sync();
    EXPECT_EQ(s, DENSE_OK) << "download of " << bytes << " bytes\n" << host_.log_text();
    return s;
}

dense_status GpuSession::sync() const {
    const dense_status s = device().stream_sync(pack_->user, device_index(), stream_);
    EXPECT_EQ(s, DENSE_OK) << "stream_sync\n" << host_.log_text();
    return s;
}

dense_status GpuSession::run(dense_type_id weight_type, const dense_op_call& call) {
    const dense_op_impl* impl = host_.find_op(call.op_kind, weight_type);
    if (impl == nullptr) {
        ADD_FAILURE() << lib_->name << " registered no CUDA impl of op " << call.op_kind << " for type " << weight_type;
        return DENSE_E_UNSUPPORTED;
    }
    return impl->run(impl->user, &call);
}

dense_status GpuSession::run(dense_type_id weight_type, dense_type_id act_type, const dense_op_call& call) {
    const dense_op_impl* impl = host_.find_op(call.op_kind, weight_type, act_type);
    if (impl == nullptr) {
        ADD_FAILURE() << lib_->name << " registered no CUDA impl of op " << call.op_kind << " for weight type "
                      << weight_type << " and activation type " << act_type;
        return DENSE_E_UNSUPPORTED;
    }
    return impl->run(impl->user, &call);
}

dense_tensor_view cuda_view(void* data, dense_type_id type, uint32_t block_elements, uint32_t block_bytes,
                            std::initializer_list<int64_t> ne) {
    dense_tensor_view v{};
    v.data = data;
    v.type = type;
    v.device_kind = DENSE_DEVICE_CUDA;
    v.device_index = 0;
    for (int i = 0; i < 4; ++i) v.ne[i] = 1;
    int i = 0;
    for (int64_t n : ne) v.ne[i++] = n;
    v.nb[0] = block_bytes;
    v.nb[1] = v.nb[0] * (v.ne[0] / block_elements);
    v.nb[2] = v.nb[1] * v.ne[1];
    v.nb[3] = v.nb[2] * v.ne[2];
    return v;
}

dense_op_call make_call(dense_op_kind kind, const dense_tensor_view* src, const dense_tensor_view* dst,
                        const void* params, void* stream) {
    auto c = dense::sdk::make_struct<dense_op_call>();
    c.op_kind = kind;
    c.n_src = 1;
    c.src = src;
    c.n_dst = 1;
    c.dst = dst;
    c.params = params;
    c.stream = stream;
    return c;
}

}  // namespace dense::test::cuda
