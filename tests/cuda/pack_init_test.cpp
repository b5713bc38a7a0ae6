// dense_pack_init / dense_pack_release of the CUDA packs and the validation of op calls. None of
// this needs a GPU: init makes no CUDA call, and a malformed call is refused on the host before any
// device work. Runs wherever the packs were built.
#include "cpu-ref/quant_test_support.hpp"
#include "cuda/cuda_pack_support.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace dense::test::cuda {
namespace {

class CudaPackInit : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (built_cuda_packs().empty()) GTEST_SKIP() << no_cuda_packs_reason();
        for (const CudaPackLib& lib : built_cuda_packs())
            if (lib.name == GetParam()) lib_ = &lib;
        ASSERT_NE(lib_, nullptr) << GetParam() << " was not built although other CUDA packs were";
        ASSERT_TRUE(lib_->usable()) << lib_->load_error;
        ASSERT_EQ(lib_->init(host_.api(), &pack_), DENSE_OK) << host_.log_text();
        ASSERT_NE(pack_, nullptr);
    }
    void TearDown() override {
        if (pack_ != nullptr) lib_->release(pack_);
    }

    const CudaPackLib* lib_ = nullptr;
    RecordingHost host_;
    dense_pack* pack_ = nullptr;
};

TEST_P(CudaPackInit, DescribesItselfAsACudaPackWithADeviceApi) {
    EXPECT_EQ(pack_->hdr.abi_major, DENSE_ABI_MAJOR);
    EXPECT_EQ(pack_->hdr.struct_size, sizeof(dense_pack));
    EXPECT_STREQ(pack_->name, GetParam().c_str());
    ASSERT_NE(pack_->version, nullptr);
    EXPECT_NE(std::string(pack_->version).find("CUDA runtime 13."), std::string::npos) << pack_->version;
    EXPECT_EQ(pack_->device_kind, DENSE_DEVICE_CUDA);
    ASSERT_NE(pack_->device, nullptr);
    const dense_device_api& dev = *pack_->device;
    EXPECT_EQ(dev.hdr.abi_major, DENSE_ABI_MAJOR);
    EXPECT_EQ(dev.hdr.struct_size, sizeof(dense_device_api));
    EXPECT_TRUE(dev.alloc && dev.free && dev.copy_to_device && dev.copy_to_host && dev.stream_create &&
                dev.stream_destroy && dev.stream_sync && dev.mem_info);
    EXPECT_TRUE(host_.logs().empty()) << host_.log_text();
}

TEST_P(CudaPackInit, RegistersDequantizeAndEmbedRowForEveryStorableFormat) {
    std::set<std::string> names;
    for (const auto& op : host_.ops()) {
        EXPECT_EQ(op.impl.device_kind, DENSE_DEVICE_CUDA) << op.name;
        const bool fused_quantize = op.impl.op_kind == DENSE_OP_RMS_NORM || op.impl.op_kind == DENSE_OP_GATED_RMS_NORM ||
                                    op.impl.op_kind == DENSE_OP_SWIGLU;  // dense_abi.h, "fused quantization"
        if (op.impl.op_kind != DENSE_OP_GEMV_Q && op.impl.op_kind != DENSE_OP_QUANTIZE_ACT &&
            op.impl.op_kind != DENSE_OP_GEMV_Q_MULTI && op.impl.op_kind != DENSE_OP_GEMM_Q) {  // keyed by activation
            EXPECT_TRUE(op.impl.act_type == DENSE_TYPE_NONE || (fused_quantize && op.impl.act_type == DENSE_TYPE_Q8_32))
                << op.name;
        }
        EXPECT_NE(op.impl.run, nullptr) << op.name;
        EXPECT_TRUE(names.insert(op.name).second) << "duplicate impl name " << op.name;
        EXPECT_EQ(op.name.rfind(GetParam() + ".", 0), 0u) << op.name;
    }
    const auto formats = quant::storable_formats();
    ASSERT_EQ(formats.size(), 15u);
    std::size_t weight_ops = 0;  // other op families (activation ops, GEMV) register more impls
    for (const auto& op : host_.ops())
        weight_ops += op.impl.op_kind == DENSE_OP_DEQUANTIZE || op.impl.op_kind == DENSE_OP_EMBED_ROW ? 1 : 0;
    EXPECT_EQ(weight_ops, 2 * formats.size());
    for (const auto* f : formats) {
        EXPECT_NE(host_.find_op(DENSE_OP_DEQUANTIZE, f->type), nullptr) << f->name;
        EXPECT_NE(host_.find_op(DENSE_OP_EMBED_ROW, f->type), nullptr) << f->name;
    }
}

TEST_P(CudaPackInit, NullArgumentsAreRefused) {
    dense_pack* p = nullptr;
    EXPECT_EQ(lib_->init(nullptr, &p), DENSE_E_INVALID_ARGUMENT);
    EXPECT_EQ(lib_->init(host_.api(), nullptr), DENSE_E_INVALID_ARGUMENT);
    auto other = *host_.api();
    other.hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR + 1);
    EXPECT_EQ(lib_->init(&other, &p), DENSE_E_ABI);
    EXPECT_EQ(p, nullptr);
    lib_->release(nullptr);  // harmless
}

// ---- validation of op calls (fake device pointers: never dereferenced on the host) -------------

// A well-formed call of `kind` on q4_k data, which each mutation below breaks in one way.
struct CallFixture {
    // Fake device addresses: validation must refuse bad calls without touching memory.
    void* src_data = reinterpret_cast<void*>(uintptr_t{0x7f0000000000});
    void* dst_data = reinterpret_cast<void*>(uintptr_t{0x7f0000100000});
    dense_tensor_view src{};
    dense_tensor_view dst{};
    dense_embed_row_params params = dense::sdk::make_struct<dense_embed_row_params>();
    dense_op_call call = dense::sdk::make_struct<dense_op_call>();

    explicit CallFixture(dense_op_kind kind) {
        constexpr int64_t D = 512, V = 6;  // two q4_k blocks per row
        src.data = src_data;
        src.type = DENSE_TYPE_Q4_K;
        src.device_kind = DENSE_DEVICE_CUDA;
        src.ne[0] = D;
        src.ne[1] = V;
        src.ne[2] = src.ne[3] = 1;
        src.nb[0] = 144;
        src.nb[1] = 288;
        src.nb[2] = src.nb[3] = 288 * V;
        dst.data = dst_data;
        dst.type = DENSE_TYPE_F32;
        dst.device_kind = DENSE_DEVICE_CUDA;
        dst.ne[0] = kind == DENSE_OP_EMBED_ROW ? D : D * V;
        dst.ne[1] = dst.ne[2] = dst.ne[3] = 1;
        dst.nb[0] = 4;
        dst.nb[1] = dst.nb[2] = dst.nb[3] = 4 * dst.ne[0];
        params.row = V - 1;
        call.op_kind = kind;
        call.n_src = 1;
        call.src = &src;
        call.n_dst = 1;
        call.dst = &dst;
        call.params = kind == DENSE_OP_EMBED_ROW ? &params : nullptr;
    }
};

struct Mutation {
    const char* what;
    std::function<void(CallFixture&)> apply;
    dense_status expected = DENSE_E_INVALID_ARGUMENT;
};

std::vector<Mutation> common_mutations() {
    return {
        {"src type is not the impl's type", [](CallFixture& f) { f.src.type = DENSE_TYPE_Q6_K; }},
        {"dst is not F32", [](CallFixture& f) { f.dst.type = DENSE_TYPE_F16; }},
        {"src on the CPU", [](CallFixture& f) { f.src.device_kind = DENSE_DEVICE_CPU; }},
        {"dst on the CPU", [](CallFixture& f) { f.dst.device_kind = DENSE_DEVICE_CPU; }},
        {"src and dst on different devices", [](CallFixture& f) { f.dst.device_index = 1; }},
        {"NULL src data", [](CallFixture& f) { f.src.data = nullptr; }},
        {"NULL dst data", [](CallFixture& f) { f.dst.data = nullptr; }},
        {"row length not a multiple of the block", [](CallFixture& f) { f.src.ne[0] = 500; }},
        {"wrong block stride", [](CallFixture& f) { f.src.nb[0] = 128; }},
        {"non-contiguous rows", [](CallFixture& f) { f.src.nb[1] = 300; }},
        {"zero-sized dimension", [](CallFixture& f) { f.src.ne[1] = 0; }},
        {"negative dimension", [](CallFixture& f) { f.src.ne[2] = -1; }},
        {"two sources", [](CallFixture& f) { f.call.n_src = 2; }},
        {"no destination", [](CallFixture& f) { f.call.n_dst = 0; }},
        {"NULL src array", [](CallFixture& f) { f.call.src = nullptr; }},
        {"op kind routed to the wrong impl", [](CallFixture& f) { f.call.op_kind = DENSE_OP_GEMV_Q; }},
        {"call struct too small", [](CallFixture& f) { f.call.hdr.struct_size = 8; }},
        {"call of another ABI major", [](CallFixture& f) { f.call.hdr.abi_major = 2; }, DENSE_E_ABI},
    };
}

void expect_refused(RecordingHost& host, const dense_op_impl& impl, dense_op_kind kind, const Mutation& m) {
    CallFixture f(kind);
    m.apply(f);
    host.clear_logs();
    EXPECT_EQ(impl.supports(impl.user, &f.call), 0u) << m.what;
    EXPECT_TRUE(host.logs().empty()) << "supports() must not log: " << host.log_text();
    EXPECT_EQ(impl.run(impl.user, &f.call), m.expected) << m.what;
    ASSERT_EQ(host.logs().size(), 1u) << m.what << ": expected exactly one log line\n" << host.log_text();
    EXPECT_EQ(host.logs()[0].level, DENSE_LOG_ERROR);
    EXPECT_NE(host.logs()[0].message.find(impl.name), std::string::npos) << host.logs()[0].message;
}

TEST_P(CudaPackInit, MalformedDequantizeCallsAreRefusedWithOneLogLine) {
    const dense_op_impl* impl = host_.find_op(DENSE_OP_DEQUANTIZE, DENSE_TYPE_Q4_K);
    ASSERT_NE(impl, nullptr);
    {
        CallFixture ok(DENSE_OP_DEQUANTIZE);
        EXPECT_EQ(impl->supports(impl->user, &ok.call), 1u) << "the unmutated call must be supported";
    }
    auto mutations = common_mutations();
    mutations.push_back({"dst element count differs", [](CallFixture& f) { f.dst.ne[0] -= 1; }});
    for (const Mutation& m : mutations) expect_refused(host_, *impl, DENSE_OP_DEQUANTIZE, m);
    EXPECT_EQ(impl->run(impl->user, nullptr), DENSE_E_INVALID_ARGUMENT);
}

TEST_P(CudaPackInit, MalformedEmbedRowCallsAreRefusedWithOneLogLine) {
    const dense_op_impl* impl = host_.find_op(DENSE_OP_EMBED_ROW, DENSE_TYPE_Q4_K);
    ASSERT_NE(impl, nullptr);
    {
        CallFixture ok(DENSE_OP_EMBED_ROW);
        EXPECT_EQ(impl->supports(impl->user, &ok.call), 1u) << "the unmutated call must be supported";
        ok.params.row = 0;
        EXPECT_EQ(impl->supports(impl->user, &ok.call), 1u) << "row 0";
    }
    auto mutations = common_mutations();
    mutations.push_back({"row == V", [](CallFixture& f) { f.params.row = f.src.ne[1]; }});
    mutations.push_back({"negative row", [](CallFixture& f) { f.params.row = -1; }});
    mutations.push_back({"NULL params", [](CallFixture& f) { f.call.params = nullptr; }});
    mutations.push_back({"params struct too small", [](CallFixture& f) { f.params.hdr.struct_size = 8; }});
    mutations.push_back({"params of another ABI major", [](CallFixture& f) { f.params.hdr.abi_major = 9; }});
    mutations.push_back({"dst is not {D}", [](CallFixture& f) {
                             f.dst.ne[0] = f.src.ne[0] / 2;
                             f.dst.ne[1] = 2;
                             f.dst.nb[1] = 4 * f.dst.ne[0];  // contiguous, only the shape is wrong
                             f.dst.nb[2] = f.dst.nb[3] = 4 * f.src.ne[0];
                         }});
    mutations.push_back({"table is 3-D", [](CallFixture& f) {
                             f.src.ne[1] = 3;
                             f.src.ne[2] = 2;
                             f.src.nb[2] = 3 * 288;
                         }});
    for (const Mutation& m : mutations) expect_refused(host_, *impl, DENSE_OP_EMBED_ROW, m);
}

// GEMV_Q_MULTI validation (fake device pointers: nothing runs): a well-formed list of two formats
// is supported; each malformed one is refused by supports() silently and by run() with one log line.
TEST_P(CudaPackInit, MalformedGemvListCallsAreRefusedWithOneLogLine) {
    const dense_op_impl* impl = host_.find_op(DENSE_OP_GEMV_Q_MULTI, DENSE_TYPE_NONE, DENSE_TYPE_Q8_32);
    ASSERT_NE(impl, nullptr);
    constexpr int64_t kIn = 512;
    auto view = [](uintptr_t at, dense_type_id t, int64_t n, int64_t rows, int64_t block_elems, int64_t block_bytes) {
        dense_tensor_view v{};
        v.data = reinterpret_cast<void*>(at);
        v.type = t;
        v.device_kind = DENSE_DEVICE_CUDA;
        v.ne[0] = n;
        v.ne[1] = rows;
        v.ne[2] = v.ne[3] = 1;
        v.nb[0] = block_bytes;
        v.nb[1] = n / block_elems * block_bytes;
        v.nb[2] = v.nb[3] = v.nb[1] * rows;
        return v;
    };
    struct List {
        std::vector<dense_tensor_view> src, dst;
        dense_op_call call = dense::sdk::make_struct<dense_op_call>();
        void bind() {
            call.op_kind = DENSE_OP_GEMV_Q_MULTI;
            call.n_src = static_cast<uint32_t>(src.size());
            call.src = src.data();
            call.n_dst = static_cast<uint32_t>(dst.size());
            call.dst = dst.data();
        }
    };
    auto good = [&] {
        List l;
        l.src = {view(0x7f0000000000, DENSE_TYPE_Q4_K, kIn, 16, 256, 144), view(0x7f0000100000, DENSE_TYPE_Q8_0, kIn, 8, 32, 34),
                 view(0x7f0000200000, DENSE_TYPE_Q8_32, kIn, 1, 32, 40)};
        l.dst = {view(0x7f0000300000, DENSE_TYPE_F32, 16, 1, 1, 4), view(0x7f0000400000, DENSE_TYPE_F32, 8, 1, 1, 4)};
        l.bind();
        return l;
    };
    {
        List ok = good();
        EXPECT_EQ(impl->supports(impl->user, &ok.call), 1u) << host_.log_text();
    }
    const std::vector<std::pair<const char*, std::function<void(List&)>>> edits = {
        {"one matrix", [](List& l) { l.src.erase(l.src.begin()); l.dst.pop_back(); }},
        {"a float weight", [](List& l) { l.src[1].type = DENSE_TYPE_F32; l.src[1].nb[0] = 4; }},
        {"another input length", [](List& l) { l.src[0].ne[0] = 256; l.src[0].nb[1] = 144; }},
        {"dst of the wrong length", [](List& l) { l.dst[1].ne[0] = 9; }},
        {"destinations overlap", [](List& l) { l.dst[1].data = static_cast<float*>(l.dst[0].data) + 4; }},
        {"dst over a weight", [](List& l) { l.dst[0].data = l.src[1].data; }},
        {"activation on the CPU", [](List& l) { l.src[2].device_kind = DENSE_DEVICE_CPU; }},
        {"params given", [](List& l) { static const auto p = dense::sdk::make_struct<dense_gemv_params>(); l.call.params = &p; }},
    };
    for (const auto& [what, edit] : edits) {
        List l = good();
        edit(l);
        l.bind();
        host_.clear_logs();
        EXPECT_EQ(impl->supports(impl->user, &l.call), 0u) << what;
        EXPECT_TRUE(host_.logs().empty()) << what << ": supports() must not log";
        EXPECT_EQ(impl->run(impl->user, &l.call), DENSE_E_INVALID_ARGUMENT) << what;
        EXPECT_EQ(host_.logs().size(), 1u) << what << "\n" << host_.log_text();
    }
}

// GEMM_Q (ABI 1.9): registered for exactly the (weight, activation) keys of GEMV_Q; a well-formed
// q4_k call of T = 3 into a dst with a column stride is supported (fake device pointers: nothing
// runs); each malformed one is refused by supports() silently and by run() with one log line.
TEST_P(CudaPackInit, MalformedGemmCallsAreRefusedWithOneLogLine) {
    std::size_t gemv = 0, gemm = 0;
    for (const auto& op : host_.ops()) {
        if (op.impl.op_kind == DENSE_OP_GEMM_Q) ++gemm;
        if (op.impl.op_kind != DENSE_OP_GEMV_Q) continue;
        ++gemv;
        EXPECT_NE(host_.find_op(DENSE_OP_GEMM_Q, op.impl.weight_type, op.impl.act_type), nullptr) << op.name;
    }
    EXPECT_EQ(gemm, gemv);
    EXPECT_EQ(gemv, 15u);  // 12 quantized formats x Q8_32, F32 / F16 / BF16 x F32

    const dense_op_impl* impl = host_.find_op(DENSE_OP_GEMM_Q, DENSE_TYPE_Q4_K, DENSE_TYPE_Q8_32);
    ASSERT_NE(impl, nullptr);
    constexpr int64_t kIn = 512, kOut = 16, kCols = 3, kStride = 20;  // floats between dst columns
    struct Call {
        dense_tensor_view src[2]{}, dst{};
        dense_gemv_params params = dense::sdk::make_struct<dense_gemv_params>();
        dense_op_call call = dense::sdk::make_struct<dense_op_call>();
        uint32_t n_src = 2;
        void bind() {
            call.op_kind = DENSE_OP_GEMM_Q;
            call.n_src = n_src;
            call.src = src;
            call.n_dst = 1;
            call.dst = &dst;
            call.params = &params;
        }
    };
    auto view = [](uintptr_t at, dense_type_id t, std::array<int64_t, 2> ne, int64_t nb0, int64_t nb1) {
        dense_tensor_view v{};
        v.data = reinterpret_cast<void*>(at);
        v.type = t;
        v.device_kind = DENSE_DEVICE_CUDA;
        v.ne[0] = ne[0];
        v.ne[1] = ne[1];
        v.ne[2] = v.ne[3] = 1;
        v.nb[0] = nb0;
        v.nb[1] = nb1;
        v.nb[2] = v.nb[3] = nb1 * ne[1];
        return v;
    };
    constexpr uintptr_t kW = 0x7f0000000000, kX = 0x7f0000100000, kY = 0x7f0000200000;
    auto good = [&] {
        Call c;
        c.src[0] = view(kW, DENSE_TYPE_Q4_K, {kIn, kOut}, 144, 2 * 144);
        c.src[1] = view(kX, DENSE_TYPE_Q8_32, {kIn * kCols, 1}, 40, kIn * kCols / 32 * 40);
        c.dst = view(kY, DENSE_TYPE_F32, {kOut, kCols}, 4, 4 * kStride);
        c.params.accumulate = 1;
        return c;  // bind() after the copy
    };
    {
        Call ok = good();
        ok.bind();  // the views moved with the copy
        EXPECT_EQ(impl->supports(impl->user, &ok.call), 1u) << host_.log_text();
        ok.dst = view(kY, DENSE_TYPE_F32, {kOut, kCols}, 4, 4 * kOut);  // packed columns
        ok.call.params = nullptr;
        EXPECT_EQ(impl->supports(impl->user, &ok.call), 1u) << "packed columns, no params";
    }
    const std::vector<std::pair<const char*, std::function<void(Call&)>>> edits = {
        {"activations of IN * (T - 1) elements", [](Call& c) { c.src[1].ne[0] -= kIn; }},
        {"T = 2 against 3 activations", [](Call& c) { c.dst.ne[1] = 2; }},
        {"dst rows differ from OUT", [](Call& c) { c.dst.ne[0] = kOut - 1; }},
        {"column stride below 4 OUT", [](Call& c) { c.dst.nb[1] = 4 * (kOut - 1); }},
        {"column stride not a multiple of 4", [](Call& c) { c.dst.nb[1] = 4 * kStride + 2; }},
        {"dst is 3-D", [](Call& c) {
             c.dst.ne[1] = 1;
             c.dst.ne[2] = kCols;
         }},
        {"dst over the activations", [](Call& c) { c.dst.data = c.src[1].data; }},
        {"last column over the activations",
         [](Call& c) { c.dst.data = reinterpret_cast<void*>(kX - 2 * 4 * kStride); }},
        {"dst over the weight", [](Call& c) { c.dst.data = reinterpret_cast<void*>(kW + 64); }},
        {"activation codes not 16-byte aligned", [](Call& c) { c.src[1].data = reinterpret_cast<void*>(kX + 8); }},
        {"activations of F32",
         [&view](Call& c) { c.src[1] = view(kX, DENSE_TYPE_F32, {kIn * kCols, 1}, 4, 4 * kIn * kCols); }},
        {"weight of another format", [](Call& c) { c.src[0].type = DENSE_TYPE_Q5_K; }},
        {"weight on the CPU", [](Call& c) { c.src[0].device_kind = DENSE_DEVICE_CPU; }},
        {"dst on another device", [](Call& c) { c.dst.device_index = 1; }},
        {"params too small", [](Call& c) { c.params.hdr.struct_size = 8; }},
        {"one source", [](Call& c) { c.n_src = 1; }},
    };
    for (const auto& [what, edit] : edits) {
        Call c = good();
        edit(c);
        c.bind();
        host_.clear_logs();
        EXPECT_EQ(impl->supports(impl->user, &c.call), 0u) << what;
        EXPECT_TRUE(host_.logs().empty()) << what << ": supports() must not log";
        EXPECT_EQ(impl->run(impl->user, &c.call), DENSE_E_INVALID_ARGUMENT) << what;
        EXPECT_EQ(host_.logs().size(), 1u) << what << "\n" << host_.log_text();
    }

    // A float weight pairs with F32 activations (as its GEMV), never with Q8_32.
    const dense_op_impl* f32_impl = host_.find_op(DENSE_OP_GEMM_Q, DENSE_TYPE_F32, DENSE_TYPE_F32);
    ASSERT_NE(f32_impl, nullptr);
    Call f = good();
    f.src[0] = view(kW, DENSE_TYPE_F32, {kIn, kOut}, 4, 4 * kIn);
    f.src[1] = view(kX, DENSE_TYPE_F32, {kIn * kCols, 1}, 4, 4 * kIn * kCols);
    f.bind();
    EXPECT_EQ(f32_impl->supports(f32_impl->user, &f.call), 1u) << host_.log_text();
    f.src[1] = view(kX, DENSE_TYPE_Q8_32, {kIn * kCols, 1}, 40, kIn * kCols / 32 * 40);
    EXPECT_EQ(f32_impl->supports(f32_impl->user, &f.call), 0u);
}

TEST_P(CudaPackInit, WithoutAGpuDeviceCallsFailWithOneLogLineAndNoCrash) {
    if (probe_gpu().found) GTEST_SKIP() << "a GPU is present; the GPU tests cover the device api";
    const dense_device_api& dev = *pack_->device;
    uint64_t free_bytes = 1, total_bytes = 1;
    EXPECT_EQ(dev.mem_info(pack_->user, 0, &free_bytes, &total_bytes), DENSE_E_DEVICE);
    EXPECT_EQ(free_bytes, 0u);
    EXPECT_EQ(total_bytes, 0u);
    ASSERT_EQ(host_.logs().size(), 1u) << host_.log_text();
    EXPECT_NE(host_.logs()[0].message.find(GetParam()), std::string::npos) << host_.log_text();

    // A valid call cannot run either: DENSE_E_DEVICE, one more line, nothing dereferenced.
    const dense_op_impl* impl = host_.find_op(DENSE_OP_DEQUANTIZE, DENSE_TYPE_Q4_K);
    ASSERT_NE(impl, nullptr);
    CallFixture f(DENSE_OP_DEQUANTIZE);
    host_.clear_logs();
    EXPECT_EQ(impl->run(impl->user, &f.call), DENSE_E_DEVICE);
    EXPECT_EQ(host_.logs().size(), 1u) << host_.log_text();

    void* p = reinterpret_cast<void*>(1);
    host_.clear_logs();
    EXPECT_NE(dev.alloc(pack_->user, 0, 1024, &p), DENSE_OK);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(host_.logs().size(), 1u) << host_.log_text();
}

INSTANTIATE_TEST_SUITE_P(Packs, CudaPackInit, ::testing::ValuesIn(cuda_pack_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                             std::string n = p.param;
                             for (char& c : n)
                                 if (c == '-') c = '_';
                             return n;
                         });

}  // namespace
}  // namespace dense::test::cuda
