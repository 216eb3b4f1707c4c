// base/env: strict parsing of environment variables. Set-but-empty counts as unset; anything malformed is
// corun::Error(invalid_config) naming the variable, the value and what is accepted.
#include "base/env.hpp"

#include "common/error_matchers.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <string>

namespace {

using corun::Status;
namespace env = corun::env;

constexpr const char* kVar = "CORUN_TEST_ENV_VAR";

// Sets (or unsets, for nullptr) kVar for the scope of one test.
class EnvTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kVar); }
  static void set(const char* v) {
    if (v)
      setenv(kVar, v, 1);
    else
      unsetenv(kVar);
  }
};

TEST_F(EnvTest, GetUnsetAndEmpty) {
  set(nullptr);
  EXPECT_FALSE(env::get(kVar).has_value());
  set("");
  EXPECT_FALSE(env::get(kVar).has_value());
  set("abc");
  ASSERT_TRUE(env::get(kVar).has_value());
  EXPECT_EQ(*env::get(kVar), "abc");
}

TEST_F(EnvTest, GetIntValid) {
  set(nullptr);
  EXPECT_FALSE(env::get_int(kVar, 0, 100).has_value());
  set("");  // empty counts as unset
  EXPECT_FALSE(env::get_int(kVar, 0, 100).has_value());
  set("12");
  EXPECT_EQ(env::get_int(kVar, 0, 100), 12);
  set("0");
  EXPECT_EQ(env::get_int(kVar, 0, 100), 0);
  set("100");
  EXPECT_EQ(env::get_int(kVar, 0, 100), 100);
  set("-5");
  EXPECT_EQ(env::get_int(kVar, -10, 10), -5);
  set(std::to_string(LONG_MAX).c_str());
  EXPECT_EQ(env::get_int(kVar, 0, LONG_MAX), LONG_MAX);
}

TEST_F(EnvTest, GetIntRejectsTrailingJunk) {
  for (const char* bad : {"12x", "12 ", "1.5", "0x10", "12,", "1e3"}) {
    SCOPED_TRACE(bad);
    set(bad);
    EXPECT_CORUN_ERROR(env::get_int(kVar, 0, 100000), Status::invalid_config, kVar, std::string("'") + bad + "'",
                       "integer", "[0, 100000]");
  }
}

TEST_F(EnvTest, GetIntRejectsNonNumbers) {
  for (const char* bad : {"x12", "abc", "-", "+", " "}) {
    SCOPED_TRACE(bad);
    set(bad);
    EXPECT_CORUN_ERROR(env::get_int(kVar, 0, 100), Status::invalid_config, kVar, "[0, 100]");
  }
}

TEST_F(EnvTest, GetIntRejectsOverflow) {
  set("99999999999999999999999");
  EXPECT_CORUN_ERROR(env::get_int(kVar, 0, LONG_MAX), Status::invalid_config, kVar, "99999999999999999999999");
  set("-99999999999999999999999");
  EXPECT_CORUN_ERROR(env::get_int(kVar, LONG_MIN, 0), Status::invalid_config, kVar);
}

TEST_F(EnvTest, GetIntRejectsOutOfRange) {
  set("101");
  EXPECT_CORUN_ERROR(env::get_int(kVar, 0, 100), Status::invalid_config, kVar, "'101'", "[0, 100]");
  set("-1");
  EXPECT_CORUN_ERROR(env::get_int(kVar, 0, 100), Status::invalid_config, kVar, "'-1'", "[0, 100]");
  set("0");
  EXPECT_CORUN_ERROR(env::get_int(kVar, 1, 8), Status::invalid_config, kVar, "'0'", "[1, 8]");
}

TEST_F(EnvTest, GetBoolAcceptsOnlyZeroAndOne) {
  set(nullptr);
  EXPECT_FALSE(env::get_bool(kVar).has_value());
  set("");
  EXPECT_FALSE(env::get_bool(kVar).has_value());
  set("1");
  EXPECT_EQ(env::get_bool(kVar), true);
  set("0");
  EXPECT_EQ(env::get_bool(kVar), false);
  for (const char* bad : {"true", "false", "yes", "no", "on", "2", "01", "00", "1 ", " 1", "TRUE", "-1"}) {
    SCOPED_TRACE(bad);
    set(bad);
    EXPECT_CORUN_ERROR(env::get_bool(kVar), Status::invalid_config, kVar, std::string("'") + bad + "'", "0, 1");
  }
}

TEST_F(EnvTest, GetChoice) {
  const std::vector<std::string> choices{"fast", "ref", "debug"};
  set(nullptr);
  EXPECT_FALSE(env::get_choice(kVar, choices).has_value());
  set("");
  EXPECT_FALSE(env::get_choice(kVar, choices).has_value());
  set("ref");
  EXPECT_EQ(env::get_choice(kVar, choices), "ref");
  set("debug");
  EXPECT_EQ(env::get_choice(kVar, choices), "debug");
  // Exact match only: no case folding, no prefixes, no whitespace trimming.
  for (const char* bad : {"Ref", "REF", "re", "refs", " ref", "ref ", "slow"}) {
    SCOPED_TRACE(bad);
    set(bad);
    EXPECT_CORUN_ERROR(env::get_choice(kVar, choices), Status::invalid_config, kVar, std::string("'") + bad + "'",
                       "fast, ref, debug");
  }
}

TEST_F(EnvTest, ErrorsStartWithCorunPrefix) {
  set("zz");
  try {
    env::get_int(kVar, 0, 1);
    FAIL() << "no error";
  } catch (const corun::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("corun: " + std::string(kVar), 0), 0u) << e.what();
  }
}

}  // namespace
