// The corun policy's remembered width climbs (sched/corun/climb_memory.hpp): what one process measured, the
// next reads; two processes' climbs merge; a file for other op kinds, or not a climb file, is not used.
#include "sched/corun/climb_memory.hpp"

#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace corun::sched {
namespace {

class ClimbMemoryFile : public testing::TempDirTest {
 protected:
  ClimbMemoryFile() : TempDirTest("climb_file") {}
};

TEST_F(ClimbMemoryFile, WhatOneProcessSavesTheNextReads) {
  const std::string file = path("climbs.json");
  ClimbMemory first(file, 7);
  EXPECT_EQ(first.size(), 0u) << "no file yet";
  first.remember(3, 0xdeadbeef, {{1, 84.5}, {2, 51.0}, {3, 60.25}});
  ASSERT_TRUE(first.save());
  const ClimbMemory next(file, 7);
  EXPECT_EQ(next.time(3, 0xdeadbeef, 2), 51.0);
  EXPECT_EQ(next.time(3, 0xdeadbeef, 3), 60.25);
  EXPECT_FALSE(next.time(3, 0xdeadbeef, 4)) << "a width the climb never measured";
  EXPECT_FALSE(next.time(4, 0xdeadbeef, 1)) << "another op kind";
  EXPECT_FALSE(ClimbMemory(file, 8).time(3, 0xdeadbeef, 1)) << "the kinds of another build";
}

TEST_F(ClimbMemoryFile, TwoProcessesClimbsMerge) {
  const std::string file = path("climbs.json");
  ClimbMemory a(file, 7), b(file, 7);  // both read the file before either wrote it
  a.remember(1, 10, {{1, 5.0}});
  b.remember(2, 20, {{1, 6.0}, {2, 4.0}});
  ASSERT_TRUE(a.save());
  ASSERT_TRUE(b.save());  // merges a's climb, written since b read the file
  const ClimbMemory both(file, 7);
  EXPECT_EQ(both.time(1, 10, 1), 5.0);
  EXPECT_EQ(both.time(2, 20, 2), 4.0);
}

TEST_F(ClimbMemoryFile, NotAClimbFileIsIgnoredWithAWarning) {
  const std::string file = path("climbs.json");
  std::ofstream(file) << "{\"format\": \"corun-schedule\", \"version\": 1}\n";
  ::testing::internal::CaptureStderr();
  const ClimbMemory m(file, 7);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_NE(err.find("is not a corun climb file"), std::string::npos) << err;
}

TEST_F(ClimbMemoryFile, AnUnwritableFolderWarnsAndTheRunGoesOn) {
  const std::string blocker = path("not-a-dir");
  std::ofstream(blocker) << "x";
  ClimbMemory m(blocker + "/climbs.json", 7);
  m.remember(1, 1, {{1, 1.0}});
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(m.save());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("not remembered"), std::string::npos) << err;
}

}  // namespace
}  // namespace corun::sched
