// Reading pack-written structs: refuse another major or a struct shorter than ABI 1.0's, and copy
// no more than the writer declared (an older minor's shorter struct leaves the rest zero).
#include "packs/abi_struct_copy.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

namespace dense::packs {
namespace {

dense_pack filled_pack() {
    dense_pack p{};
    p.hdr = {static_cast<uint16_t>(DENSE_ABI_MAJOR), static_cast<uint16_t>(DENSE_ABI_MINOR),
             static_cast<uint32_t>(sizeof(dense_pack))};
    p.name = "x";
    p.version = "1";
    p.device_kind = DENSE_DEVICE_CUDA;
    p.reserved0 = 0x5A5A5A5Au;
    p.user = &p;
    return p;
}

TEST(AbiStructCopy, CheckNamesWhatIsWrong) {
    const dense_pack ok = filled_pack();
    EXPECT_EQ(check_pack_struct(&ok, kAbi10PackSize, "pack"), "");
    EXPECT_NE(check_pack_struct<dense_pack>(nullptr, kAbi10PackSize, "pack").find("NULL"), std::string::npos);
    dense_pack major = ok;
    major.hdr.abi_major = static_cast<uint16_t>(DENSE_ABI_MAJOR + 1);
    EXPECT_NE(check_pack_struct(&major, kAbi10PackSize, "pack").find("ABI major"), std::string::npos);
    dense_pack short_one = ok;
    short_one.hdr.struct_size = kAbi10PackSize - 8;
    EXPECT_NE(check_pack_struct(&short_one, kAbi10PackSize, "pack").find("struct_size 40"), std::string::npos);
}

TEST(AbiStructCopy, CopiesNoMoreThanTheWriterDeclared) {
    // A writer that knew only the first 24 bytes (header, name, version): the host's copy must not
    // pick up whatever lies after them.
    dense_pack p = filled_pack();
    p.hdr.struct_size = 24;
    const dense_pack c = copy_pack_struct(p);
    EXPECT_STREQ(c.name, "x");
    EXPECT_STREQ(c.version, "1");
    EXPECT_EQ(c.device_kind, 0u);
    EXPECT_EQ(c.reserved0, 0u);
    EXPECT_EQ(c.user, nullptr);

    p.hdr.struct_size = static_cast<uint32_t>(sizeof(dense_pack));
    const dense_pack full = copy_pack_struct(p);
    EXPECT_EQ(full.device_kind, static_cast<uint32_t>(DENSE_DEVICE_CUDA));
    EXPECT_EQ(full.user, &p);
}

TEST(AbiStructCopy, Abi10SizesMatchTheHeader) {
    // ABI 1.1 only appended calls to dense_device_api; the other pack-written structs keep their 1.0
    // size, and the 1.0 part of the device api is exactly what comes before the first 1.1 field.
    EXPECT_EQ(kAbi10PackSize, sizeof(dense_pack));
    EXPECT_EQ(kAbi10OpImplSize, sizeof(dense_op_impl));
    EXPECT_EQ(kAbi10TypeTraitsSize, sizeof(dense_type_traits));
    EXPECT_EQ(kAbi10DeviceApiSize, offsetof(dense_device_api, copy_on_device));
}

}  // namespace
}  // namespace dense::packs
