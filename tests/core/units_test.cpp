#include "core/units.hpp"

#include <gtest/gtest.h>

namespace dense {
namespace {

TEST(Units, ParsesBinaryAndDecimalSizes) {
    EXPECT_EQ(parse_byte_size("8GiB"), 8ull << 30);
    EXPECT_EQ(parse_byte_size("8 gib"), 8ull << 30);
    EXPECT_EQ(parse_byte_size("16GB"), 16'000'000'000ull);
    EXPECT_EQ(parse_byte_size("512MiB"), 512ull << 20);
    EXPECT_EQ(parse_byte_size("1.5GiB"), 3ull << 29);
    EXPECT_EQ(parse_byte_size("123456"), 123456u);
    EXPECT_EQ(parse_byte_size("  7 KiB "), 7168u);
    EXPECT_EQ(parse_byte_size("18446744073709551615"), 18446744073709551615ull);
}

TEST(Units, RejectsGarbage) {
    EXPECT_FALSE(parse_byte_size(""));
    EXPECT_FALSE(parse_byte_size("GiB"));
    EXPECT_FALSE(parse_byte_size("8 gigs"));
    EXPECT_FALSE(parse_byte_size("-8GiB"));
    EXPECT_FALSE(parse_byte_size("8GiB extra"));
    EXPECT_FALSE(parse_byte_size("1.2.3"));
    EXPECT_FALSE(parse_byte_size("99999999999999999999999999TiB"));
    EXPECT_FALSE(parse_byte_size(std::string(400, '9')));
}

TEST(Units, FormatsForBills) {
    EXPECT_EQ(format_bytes(17), "17 B");
    EXPECT_EQ(format_bytes(1536), "1.5 KiB");
    EXPECT_EQ(format_bytes(512ull << 20), "512.0 MiB");
    EXPECT_EQ(format_bytes(15ull << 30), "15.00 GiB");
}

}  // namespace
}  // namespace dense
