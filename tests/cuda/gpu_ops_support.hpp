// Shared pieces of the GPU tests of the activation ops (ops_*_gpu_test.cpp): device matrices with a
// row stride and poisoned gaps/guards, running an op through the impl the pack registered (with the
// workspace it asks for), and tolerance comparisons against the cpu-ref oracle.
#pragma once

#include "cuda/gpu_compare.hpp"

#include <dense/sdk/pack.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace dense::test::cuda {

// An F32 {ne0, ne1} matrix on the GPU with rows `stride` floats apart, `offset` floats into its buffer,
// and kGuardFloats after the last row. Everything outside the rows holds the poison pattern.
struct DevMatrix {
    DeviceBuffer buf;
    int64_t ne0 = 0, ne1 = 0, stride = 0, offset = 0;
    dense_tensor_view view{};

    int64_t buffer_floats() const { return offset + stride * (ne1 - 1) + ne0 + kGuardFloats; }
    float* row_ptr(int64_t r) const { return static_cast<float*>(buf.get()) + offset + r * stride; }
};

inline dense_tensor_view f32_view(void* data, int64_t ne0, int64_t ne1, int64_t stride) {
    dense_tensor_view v{};
    v.data = data;
    v.type = DENSE_TYPE_F32;
    v.device_kind = DENSE_DEVICE_CUDA;
    v.ne[0] = ne0;
    v.ne[1] = ne1;
    v.ne[2] = v.ne[3] = 1;
    v.nb[0] = 4;
    v.nb[1] = 4 * stride;
    v.nb[2] = v.nb[3] = v.nb[1] * ne1;
    return v;
}

// `packed` holds ne0 * ne1 values row after row (nullptr: all poison, for outputs).
inline DevMatrix upload_matrix(GpuSession& gpu, const std::vector<float>* packed, int64_t ne0, int64_t ne1,
                               int64_t stride = 0, int64_t offset = 0) {
    DevMatrix m;
    m.ne0 = ne0;
    m.ne1 = ne1;
    m.stride = stride == 0 ? ne0 : stride;
    m.offset = offset;
    std::vector<float> host = poison(m.buffer_floats());
    if (packed != nullptr) {
        EXPECT_EQ(packed->size(), static_cast<std::size_t>(ne0 * ne1));
        for (int64_t r = 0; r < ne1; ++r)
            std::copy_n(packed->begin() + r * ne0, ne0, host.begin() + offset + r * m.stride);
    }
    m.buf = gpu.alloc(host.size() * 4);
    if (m.buf.get() != nullptr) gpu.upload(m.buf.get(), host.data(), host.size() * 4);
    m.view = f32_view(m.row_ptr(0), ne0, ne1, m.stride);
    return m;
}

// The rows, packed. Fails the test if anything outside the rows is no longer poison (a write out of
// bounds of the view) unless `outside_may_change` (a view that shares its buffer with another).
inline std::vector<float> download_matrix(GpuSession& gpu, const DevMatrix& m, bool outside_may_change = false) {
    std::vector<float> host(static_cast<std::size_t>(m.buffer_floats()));
    gpu.download(host.data(), m.buf.get(), host.size() * 4);
    std::vector<float> out(static_cast<std::size_t>(m.ne0 * m.ne1));
    std::vector<char> inside(host.size(), 0);
    for (int64_t r = 0; r < m.ne1; ++r) {
        const std::size_t begin = static_cast<std::size_t>(m.offset + r * m.stride);
        std::copy_n(host.begin() + static_cast<std::ptrdiff_t>(begin), m.ne0, out.begin() + r * m.ne0);
        std::fill_n(inside.begin() + static_cast<std::ptrdiff_t>(begin), m.ne0, 1);
    }
    if (!outside_may_change) {
        int64_t touched = 0;
        for (std::size_t i = 0; i < host.size(); ++i)
            touched += !inside[i] && std::bit_cast<uint32_t>(host[i]) != kPoisonBits ? 1 : 0;
        EXPECT_EQ(touched, 0) << touched << " floats outside the view's rows were written";
    }
    return out;
}

// An I32 {1} on the GPU holding `value`.
struct DevScalar {
    DeviceBuffer buf;
    dense_tensor_view view{};
};
inline DevScalar upload_i32(GpuSession& gpu, int32_t value) {
    DevScalar s;
    s.buf = gpu.alloc(4);
    if (s.buf.get() != nullptr) gpu.upload(s.buf.get(), &value, 4);
    s.view = cuda_view(s.buf.get(), DENSE_TYPE_I32, 1, 4, {1});
    return s;
}
inline int32_t download_i32(GpuSession& gpu, const DevScalar& s) {
    int32_t v = 0;
    gpu.download(&v, s.buf.get(), 4);
    return v;
}

template <class P>
P make_params() {
    return dense::sdk::make_struct<P>();
}

// Runs `kind` with these views through the pack's impl (the one registered with act_type, NONE unless
// a fused variant is wanted): supports() must accept it, the workspace it asks for is allocated
// (poisoned), run() must return DENSE_OK without a log line, then the stream is synchronised.
inline void run_op(GpuSession& gpu, dense_op_kind kind, const std::vector<dense_tensor_view>& src,
                   const std::vector<dense_tensor_view>& dst, const void* params, const std::string& label,
                   dense_type_id act_type = DENSE_TYPE_NONE) {
    const dense_op_impl* impl = gpu.host().find_op(kind, DENSE_TYPE_NONE, act_type);
    ASSERT_NE(impl, nullptr) << "no CUDA impl of op " << kind;
    auto call = dense::sdk::make_struct<dense_op_call>();
    call.op_kind = kind;
    call.n_src = static_cast<uint32_t>(src.size());
    call.src = src.data();
    call.n_dst = static_cast<uint32_t>(dst.size());
    call.dst = dst.data();
    call.params = params;
    call.stream = gpu.stream();
    ASSERT_EQ(impl->supports(impl->user, &call), 1u) << label;
    DeviceBuffer ws;
    if (impl->workspace_bytes != nullptr) {
        const uint64_t bytes = impl->workspace_bytes(impl->user, &call);
        if (bytes > 0) {
            ws = gpu.alloc(bytes);
            ASSERT_NE(ws.get(), nullptr);
            const auto fill = poison(static_cast<int64_t>((bytes + 3) / 4));
            gpu.upload(ws.get(), fill.data(), bytes);
            call.workspace = ws.get();
            call.workspace_bytes = bytes;
        }
    }
    gpu.host().clear_logs();
    ASSERT_EQ(impl->run(impl->user, &call), DENSE_OK) << label << "\n" << gpu.host().log_text();
    EXPECT_TRUE(gpu.host().logs().empty()) << gpu.host().log_text();
    ASSERT_EQ(gpu.sync(), DENSE_OK) << label;
}

inline std::vector<float> uniform(std::size_t n, std::mt19937_64& rng, float lo = -1.0f, float hi = 1.0f) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> out(n);
    for (auto& v : out) v = u(rng);
    return out;
}

// |got - want| <= tol(i) for every i (NaN fails). `what` names the output in the message.
inline ::testing::AssertionResult within(const std::vector<float>& got, const std::vector<float>& want,
                                         const std::function<double(std::size_t)>& tol, const std::string& what) {
    if (got.size() != want.size())
        return ::testing::AssertionFailure() << what << ": size " << got.size() << " != " << want.size();
    std::size_t bad = 0, first = 0;
    double worst_ratio = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double err = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
        const double t = tol(i);
        if (!(err <= t)) {
            if (bad++ == 0) first = i;
        }
        if (t > 0) worst_ratio = std::max(worst_ratio, err / t);
    }
    if (bad == 0) {
        // Printed so that a run on the GPU shows how much margin each tolerance has.
        std::printf("[ margin   ] %s: worst error = %.3g x tolerance\n", what.c_str(), worst_ratio);
        return ::testing::AssertionSuccess();
    }
    std::ostringstream s;
    s.precision(9);
    s << what << ": " << bad << " of " << got.size() << " elements out of tolerance; first at " << first << ": got "
      << got[first] << ", want " << want[first] << ", tolerance " << tol(first) << "; worst error/tolerance "
      << worst_ratio;
    return ::testing::AssertionFailure() << s.str();
}

// |got - want| <= rel * |want| + abs.
inline ::testing::AssertionResult near_rel(const std::vector<float>& got, const std::vector<float>& want, double rel,
                                           double abs, const std::string& what) {
    return within(
        got, want, [&](std::size_t i) { return rel * std::fabs(static_cast<double>(want[i])) + abs; }, what);
}

inline double max_abs(const std::vector<float>& v) {
    double m = 0;
    for (float x : v) m = std::max(m, std::fabs(static_cast<double>(x)));
    return m;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
    return true;
}

}  // namespace dense::test::cuda
