// Whole-number tuning knobs from the environment (core/env_number.hpp): the fallback when unset or
// empty, the value when it is digits in range, a Usage error naming the variable otherwise.
#include "core/env_number.hpp"
#include "core/error.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace dense {
namespace {

constexpr const char* kVar = "DENSE_TEST_ENV_NUMBER";

TEST(EnvWholeNumber, FallbackValueAndRefusals) {
    ::unsetenv(kVar);
    EXPECT_EQ(env_whole_number(kVar, 8, 2, 256), 8u);
    ::setenv(kVar, "", 1);
    EXPECT_EQ(env_whole_number(kVar, 8, 2, 256), 8u);
    ::setenv(kVar, "16", 1);
    EXPECT_EQ(env_whole_number(kVar, 8, 2, 256), 16u);
    ::setenv(kVar, "256", 1);
    EXPECT_EQ(env_whole_number(kVar, 8, 2, 256), 256u);
    for (const char* bad : {"1", "257", "-3", "+4", " 4", "4 ", "4x", "x"}) {
        ::setenv(kVar, bad, 1);
        try {
            (void)env_whole_number(kVar, 8, 2, 256);
            ADD_FAILURE() << "'" << bad << "' accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
            EXPECT_NE(std::string(e.what()).find(kVar), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("from 2 to 256"), std::string::npos) << e.what();
        }
    }
    ::unsetenv(kVar);
}

}  // namespace
}  // namespace dense
