// sched/corun/schedule_file.hpp: the frozen corun schedule (CORUN_SCHEDULE) is JSON, reads back exactly, reads
// the text format of earlier versions with a warning, and names what is wrong in a malformed file.
#include "sched/corun/schedule_file.hpp"

#include "base/json.hpp"
#include "common/error_matchers.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace {

using corun::Status;
using corun::sched::FrozenSchedule;
namespace json = corun::json;

class ScheduleFile : public corun::testing::TempDirTest {
 protected:
  ScheduleFile() : TempDirTest("schedule") {}

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return path(name);
  }
};

TEST_F(ScheduleFile, RoundTripsAsJson) {
  const FrozenSchedule s{0x9c1d2e3f4a5b6c7dull, 4, {0, 2, 0}, {2, 2, 4}};
  corun::sched::write_schedule(path("s.json"), s);
  const json::Value doc = json::parse_file(path("s.json"));
  EXPECT_EQ(doc.at("format"), "corun-schedule");
  EXPECT_EQ(doc.at("graph"), "9c1d2e3f4a5b6c7d");
  EXPECT_EQ(doc.at("blocks"), json::Value::parse("[[0,2],[2,2],[0,4]]"));
  EXPECT_NO_THROW(corun::sched::check_schedule(path("s.json")));
  const auto back = corun::sched::read_schedule(path("s.json"));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->graph_hash, s.graph_hash);
  EXPECT_EQ(back->cores, 4);
  EXPECT_EQ(back->first, s.first);
  EXPECT_EQ(back->width, s.width);
  EXPECT_FALSE(corun::sched::read_schedule(path("none.json")).has_value());  // written by the first tuned run
}

TEST_F(ScheduleFile, OldTextFormatIsReadWithAWarning) {
  const std::string p = write("old.sched", "# corun schedule v1\ngraph 1f nodes 2 cores 4\n0 2\n2 2\n");
  EXPECT_NO_THROW(corun::sched::check_schedule(p));
  ::testing::internal::CaptureStderr();
  const auto s = corun::sched::read_schedule(p);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning: read CORUN_SCHEDULE '" + p + "' in the old text format"), std::string::npos) << err;
  EXPECT_NE(err.find("it will be JSON"), std::string::npos) << err;
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->graph_hash, 0x1fu);
  EXPECT_EQ(s->first, (std::vector<int>{0, 2}));
  EXPECT_EQ(s->width, (std::vector<int>{2, 2}));
  ::testing::internal::CaptureStderr();
  EXPECT_CORUN_ERROR(
      corun::sched::read_schedule(write("short.sched", "# corun schedule v1\ngraph 1f nodes 2 cores 4\n0 2\n")),
      Status::invalid_config, "bad or missing block for node 1");
  EXPECT_CORUN_ERROR(corun::sched::read_schedule(write("meta.sched", "# corun schedule v1\ngraph x\n")),
                     Status::invalid_config, "line 2 is malformed");
  ::testing::internal::GetCapturedStderr();
}

TEST_F(ScheduleFile, MalformedFilesAreClearErrors) {
  EXPECT_CORUN_ERROR(corun::sched::check_schedule(write("garbage", "hello\n")), Status::invalid_config,
                     "CORUN_SCHEDULE '" + path("garbage") + "' is not a corun schedule",
                     "point CORUN_SCHEDULE elsewhere");
  const std::string head = R"({"format": "corun-schedule", "version": 1, "graph": "1f", "nodes": 2, "cores": 4, )";
  EXPECT_CORUN_ERROR(corun::sched::read_schedule(write("a", head + R"("blocks": [[0, 2], [2, 2]],})")),
                     Status::invalid_config, "invalid JSON at line 1", "unexpected '}'", "recompute it");
  EXPECT_CORUN_ERROR(corun::sched::read_schedule(write("b", head + R"("blocks": [[0, 2]]})")), Status::invalid_config,
                     "has 1 blocks for 2 nodes");
  EXPECT_CORUN_ERROR(corun::sched::read_schedule(write("c", head + R"("blocks": [[0, 2], [3, 2]]})")),
                     Status::invalid_config, "bad or missing block for node 1");
  EXPECT_CORUN_ERROR(corun::sched::read_schedule(write("d", head + R"("blocks": [[0, 2], [2]]})")),
                     Status::invalid_config, "blocks[1] must be [first core, width]");
  EXPECT_CORUN_ERROR(corun::sched::read_schedule(write("e", R"({"format": "corun-profile", "version": 1})")),
                     Status::invalid_config, "is not a corun schedule");
  EXPECT_CORUN_ERROR(corun::sched::read_schedule(write("f", R"({"format": "corun-schedule", "version": 1,
      "graph": "xyz", "nodes": 0, "cores": 1, "blocks": []})")),
                     Status::invalid_config, "graph must be a hexadecimal hash, not 'xyz'");
}

}  // namespace
