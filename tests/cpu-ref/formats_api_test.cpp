// The dispatch table of the kernels library: agreement with the core's type table (sizes and
// activation pairing), and clear errors for anything it cannot do.
#include "cpu-ref/quant_test_support.hpp"
#include "core/type_table.hpp"

#include <stdexcept>

namespace {

using namespace dense;
using namespace dense::test::quant;

TEST(CpuRefFormats, AgreeWithCoreTypeTable) {
    const TypeTable table;  // the built-ins
    int storable = 0;
    for (const auto& f : cpuref::all_formats()) {
        const TypeInfo* t = table.find(f.type);
        ASSERT_NE(t, nullptr) << f.name;
        EXPECT_EQ(t->name, f.name);
        EXPECT_EQ(t->block_elements, f.block_elements) << f.name;
        EXPECT_EQ(t->block_bytes, f.block_bytes) << f.name;
        EXPECT_EQ(t->storable, f.storable) << f.name;
        if (f.storable) {
            EXPECT_EQ(t->act_type, f.act_type) << f.name;
            ++storable;
        }
        EXPECT_EQ(f.vec_dot != nullptr, f.storable) << f.name;
    }
    // Every storable built-in type has kernels.
    for (const auto& t : table.all()) {
        if (t.storable && t.builtin) {
            EXPECT_NE(cpuref::find_format(t.id), nullptr) << t.name;
        }
    }
    EXPECT_EQ(storable, 15);
}

TEST(CpuRefFormats, RowBytes) {
    EXPECT_EQ(cpuref::row_bytes(DENSE_TYPE_Q4_K, 5120), 20u * 144u);
    EXPECT_EQ(cpuref::row_bytes(DENSE_TYPE_IQ4_NL, 64), 2u * 18u);
    EXPECT_EQ(cpuref::row_bytes(DENSE_TYPE_BF16, 3), 6u);
    EXPECT_EQ(cpuref::row_bytes(DENSE_TYPE_Q8_K, 0), 0u);
    EXPECT_THROW(cpuref::row_bytes(DENSE_TYPE_Q4_K, 100), std::invalid_argument);
    EXPECT_THROW(cpuref::row_bytes(DENSE_TYPE_Q4_K, -256), std::invalid_argument);
}

TEST(CpuRefFormats, UnknownTypeIsAClearError) {
    EXPECT_EQ(cpuref::find_format(2 /* q4_0: out of scope */), nullptr);
    float out[32];
    uint8_t in[64] = {1};
    try {
        cpuref::dequantize_row(2, in, out, 32);
        FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("type id 2"), std::string::npos) << e.what();
    }
    EXPECT_THROW(cpuref::vec_dot(DENSE_TYPE_NONE, in, in, 32), std::invalid_argument);
    EXPECT_THROW(cpuref::gemv(1024, in, 32, 1, in, out), std::invalid_argument);
}

TEST(CpuRefFormats, WrongUseIsAClearError) {
    float out[256];
    uint8_t in[512] = {1};
    // Element count not a multiple of the block size.
    EXPECT_THROW(cpuref::dequantize_row(DENSE_TYPE_Q8_0, in, out, 33), std::invalid_argument);
    EXPECT_THROW(cpuref::vec_dot(DENSE_TYPE_IQ4_XS, in, in, 128), std::invalid_argument);
    // Q8_K is an activation format: no weight dot product.
    EXPECT_THROW(cpuref::vec_dot(DENSE_TYPE_Q8_K, in, in, 256), std::invalid_argument);
    // Q4_K is not an activation format.
    EXPECT_THROW(cpuref::quantize_activation(DENSE_TYPE_Q4_K, out, in, 256), std::invalid_argument);
    EXPECT_THROW(cpuref::gemv(DENSE_TYPE_Q4_K, in, 256, -1, in, out), std::invalid_argument);
}

// Spec 5's surprise, pinned directly: a positive largest element gives a negative d and maps to -127.
TEST(CpuRefFormats, Q8KNegativeScaleForPositiveMax) {
    std::vector<float> x(256, 0.25f);
    x[10] = 2.0f;
    x[20] = -2.0f;  // same magnitude later: the first one wins
    std::vector<uint8_t> q(292);
    cpuref::quantize_activation(DENSE_TYPE_Q8_K, x.data(), q.data(), 256);
    float d;
    std::memcpy(&d, q.data(), 4);
    EXPECT_LT(d, 0.0f);
    EXPECT_EQ(static_cast<int8_t>(q[4 + 10]), -127);
    EXPECT_EQ(static_cast<int8_t>(q[4 + 20]), 127);
    EXPECT_EQ(static_cast<int8_t>(q[4 + 0]), -16);  // 0.25 * 127/2 = 15.875 -> 16, sign flipped
    std::vector<float> back(256);
    cpuref::dequantize_row(DENSE_TYPE_Q8_K, q.data(), back.data(), 256);
    EXPECT_FLOAT_EQ(back[10], 2.0f);
    EXPECT_NEAR(back[0], 0.25f, 2.0f / 127);
}

}  // namespace
