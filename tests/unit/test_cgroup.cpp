// base/cgroup: CPU lists, cpu.max / cfs quota, and the cgroup reader on fake /proc + cgroup trees
// (v2, v1, hybrid, nested cgroups, container roots, namespaces, missing and malformed files).
#include "base/cgroup.hpp"

#include "common/error_matchers.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using corun::Status;
namespace cg = corun::cgroup;
namespace fs = std::filesystem;
using corun::testing::error_message;

TEST(CpuList, Parses) {
  EXPECT_EQ(cg::parse_cpu_list("0-3,8,10-11\n", "f"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(cg::parse_cpu_list("5", "f"), (std::vector<int>{5}));
  EXPECT_EQ(cg::parse_cpu_list("  \n", "f"), (std::vector<int>{}));
  EXPECT_EQ(cg::parse_cpu_list("3,1-2,2", "f"), (std::vector<int>{1, 2, 3}));  // sorted, distinct
}

TEST(CpuList, RejectsMalformed) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "0-3x", "1 2", "0-99999999"}) {
    SCOPED_TRACE(bad);
    const std::string msg = error_message([&] { cg::parse_cpu_list(bad, "/x/cpuset.cpus.effective"); }, Status::io_error);
    EXPECT_NE(msg.find("/x/cpuset.cpus.effective"), std::string::npos) << msg;
    EXPECT_NE(msg.find("is not a CPU list"), std::string::npos) << msg;
  }
}

TEST(CpuList, FormatsRanges) {
  EXPECT_EQ(cg::format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cg::format_cpu_list({}), "");
  EXPECT_EQ(cg::format_cpu_list({4}), "4");
  for (const char* text : {"0", "0-1", "0,2,4-7,9"}) EXPECT_EQ(cg::format_cpu_list(cg::parse_cpu_list(text, "f")), text);
}

TEST(CpuQuota, V2CpuMax) {
  EXPECT_FALSE(cg::parse_cpu_max("max 100000\n", "f").has_value());
  EXPECT_DOUBLE_EQ(*cg::parse_cpu_max("150000 100000\n", "f"), 1.5);
  EXPECT_DOUBLE_EQ(*cg::parse_cpu_max("400000 100000", "f"), 4.0);
  for (const char* bad : {"", "max", "100000", "x 100000", "100000 0", "-5 100000", "100000 100000 1"}) {
    SCOPED_TRACE(bad);
    const std::string msg = error_message([&] { cg::parse_cpu_max(bad, "/c/cpu.max"); }, Status::io_error);
    EXPECT_NE(msg.find("/c/cpu.max"), std::string::npos) << msg;
  }
}

TEST(CpuQuota, V1Cfs) {
  EXPECT_FALSE(cg::parse_cfs_quota("-1\n", "100000\n", "f").has_value());
  EXPECT_DOUBLE_EQ(*cg::parse_cfs_quota("250000\n", "100000\n", "f"), 2.5);
  EXPECT_NE(error_message([] { cg::parse_cfs_quota("0", "100000", "/q"); }, Status::io_error).find("cfs_quota_us"),
            std::string::npos);
  EXPECT_NE(error_message([] { cg::parse_cfs_quota("1000", "zero", "/q"); }, Status::io_error).find("cfs_period_us"),
            std::string::npos);
}

// A fake root: proc/self/cgroup, proc/self/mountinfo and cgroup files under it.
class CgroupTree : public corun::testing::TempDirTest {
 protected:
  CgroupTree() : TempDirTest("cgroup") {}
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // A mountinfo line for a cgroup file system.
  static std::string mount(int id, const std::string& root, const std::string& point, const std::string& fstype,
                           const std::string& super) {
    return std::to_string(id) + " 1 0:" + std::to_string(id) + " " + root + " " + point +
           " rw,nosuid,nodev,noexec,relatime shared:" + std::to_string(id) + " - " + fstype + " " + fstype + " " + super + "\n";
  }
};

TEST_F(CgroupTree, V2SlurmJobStep) {
  // A SLURM step's cgroup: the cpuset is set at the job level (the step directory has no cpuset file of its
  // own), quotas at two levels: the smallest counts.
  write("proc/self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n" +
                                   mount(30, "/", "/sys/fs/cgroup", "cgroup2", "rw,nsdelegate"));
  write("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n");
  const std::string base = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_7";
  write("sys/fs/cgroup/cpuset.cpus.effective", "0-63\n");
  write(base + "/cpuset.cpus.effective", "4-7,36-39\n");
  write(base + "/cpu.max", "800000 100000\n");
  write(base + "/step_0/cpu.max", "300000 100000\n");
  write(base + "/step_0/user/task_0/cpu.max", "max 100000\n");
  const cg::Limits l = cg::read_limits(dir_);
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(cg::format_cpu_list(*l.cpuset), "4-7,36-39");
  EXPECT_EQ(l.cpuset_file, "/" + base + "/cpuset.cpus.effective");
  ASSERT_TRUE(l.quota_cpus.has_value());
  EXPECT_DOUBLE_EQ(*l.quota_cpus, 3.0);
  EXPECT_EQ(l.quota_file, "/" + base + "/step_0/cpu.max");
  EXPECT_TRUE(l.notes.empty());
}

TEST_F(CgroupTree, V2RootOnlyHasNoQuota) {
  write("proc/self/mountinfo", mount(30, "/", "/sys/fs/cgroup", "cgroup2", "rw"));
  write("proc/self/cgroup", "0::/\n");
  write("sys/fs/cgroup/cpuset.cpus.effective", "0-1\n");
  const cg::Limits l = cg::read_limits(dir_);
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(cg::format_cpu_list(*l.cpuset), "0-1");
  EXPECT_FALSE(l.quota_cpus.has_value());
}

TEST_F(CgroupTree, V1HybridControllers) {
  // The layout of this project's VM: v1 controllers, an empty v2 hierarchy beside them. "cpu,cpuacct" is
  // one v1 hierarchy with two controllers; the process sits in a nested cgroup of it.
  write("proc/self/mountinfo", mount(31, "/", "/sys/fs/cgroup/unified", "cgroup2", "rw") +
                                   mount(32, "/", "/sys/fs/cgroup/cpu,cpuacct", "cgroup", "rw,cpu,cpuacct") +
                                   mount(33, "/", "/sys/fs/cgroup/cpuset", "cgroup", "rw,cpuset") +
                                   mount(34, "/", "/sys/fs/cgroup/memory", "cgroup", "rw,memory"));
  write("proc/self/cgroup", "4:memory:/jobs/a\n3:cpuset:/jobs/a\n2:cpu,cpuacct:/jobs/a\n0::/\n");
  write("sys/fs/cgroup/cpuset/cpuset.effective_cpus", "0-15\n");
  write("sys/fs/cgroup/cpuset/jobs/a/cpuset.effective_cpus", "2-3\n");
  write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  write("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  write("sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.cfs_quota_us", "150000\n");
  write("sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.cfs_period_us", "100000\n");
  const cg::Limits l = cg::read_limits(dir_);
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(cg::format_cpu_list(*l.cpuset), "2-3");
  EXPECT_EQ(l.cpuset_file, "/sys/fs/cgroup/cpuset/jobs/a/cpuset.effective_cpus");
  ASSERT_TRUE(l.quota_cpus.has_value());
  EXPECT_DOUBLE_EQ(*l.quota_cpus, 1.5);
}

TEST_F(CgroupTree, V1OldKernelWithoutEffectiveCpus) {
  write("proc/self/mountinfo", mount(33, "/", "/sys/fs/cgroup/cpuset", "cgroup", "rw,cpuset"));
  write("proc/self/cgroup", "3:cpuset:/\n");
  write("sys/fs/cgroup/cpuset/cpuset.cpus", "0-7\n");
  const cg::Limits l = cg::read_limits(dir_);
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(cg::format_cpu_list(*l.cpuset), "0-7");
  EXPECT_FALSE(l.quota_cpus.has_value());
  EXPECT_FALSE(l.notes.empty());  // no cpu controller
}

TEST_F(CgroupTree, ContainerMountShowsASubtree) {
  // Docker without a cgroup namespace: the mount's root is the container's cgroup, /proc/self/cgroup
  // names the full path.
  write("proc/self/mountinfo", mount(40, "/docker/abc", "/sys/fs/cgroup", "cgroup2", "rw"));
  write("proc/self/cgroup", "0::/docker/abc/inner\n");
  write("sys/fs/cgroup/inner/cpuset.cpus.effective", "1\n");
  write("sys/fs/cgroup/cpu.max", "50000 100000\n");
  const cg::Limits l = cg::read_limits(dir_);
  ASSERT_TRUE(l.cpuset.has_value());
  EXPECT_EQ(cg::format_cpu_list(*l.cpuset), "1");
  ASSERT_TRUE(l.quota_cpus.has_value());
  EXPECT_DOUBLE_EQ(*l.quota_cpus, 0.5);
}

TEST_F(CgroupTree, CgroupNamespaceSeesItselfAsRoot) {
  write("proc/self/mountinfo", mount(40, "/", "/sys/fs/cgroup", "cgroup2", "rw"));
  write("proc/self/cgroup", "0::/\n");
  write("sys/fs/cgroup/cpuset.cpus.effective", "0-3\n");
  write("sys/fs/cgroup/cpu.max", "200000 100000\n");
  const cg::Limits l = cg::read_limits(dir_);
  ASSERT_TRUE(l.quota_cpus.has_value());
  EXPECT_DOUBLE_EQ(*l.quota_cpus, 2.0);
}

TEST_F(CgroupTree, NothingMountedOrNoProc) {
  const cg::Limits none = cg::read_limits(dir_);  // empty root: no /proc files
  EXPECT_FALSE(none.cpuset.has_value());
  EXPECT_FALSE(none.quota_cpus.has_value());
  ASSERT_FALSE(none.notes.empty());
  EXPECT_NE(none.notes[0].find("/proc/self/cgroup"), std::string::npos);

  write("proc/self/mountinfo", "22 1 0:21 / /proc rw - proc proc rw\n");
  write("proc/self/cgroup", "0::/\n");
  const cg::Limits l = cg::read_limits(dir_);
  EXPECT_FALSE(l.cpuset.has_value());
  EXPECT_FALSE(l.quota_cpus.has_value());
  EXPECT_EQ(l.notes.size(), 3u);  // no cpuset, cpu or memory controller
}

TEST_F(CgroupTree, MalformedFilesAreErrorsNamingThem) {
  write("proc/self/mountinfo", mount(30, "/", "/sys/fs/cgroup", "cgroup2", "rw"));
  write("proc/self/cgroup", "0::/job\n");
  write("sys/fs/cgroup/job/cpuset.cpus.effective", "zero-three\n");
  std::string msg = error_message([&] { cg::read_limits(dir_); }, Status::io_error);
  EXPECT_NE(msg.find("/sys/fs/cgroup/job/cpuset.cpus.effective"), std::string::npos) << msg;
  write("sys/fs/cgroup/job/cpuset.cpus.effective", "0-3\n");
  write("sys/fs/cgroup/job/cpu.max", "lots 100000\n");
  msg = error_message([&] { cg::read_limits(dir_); }, Status::io_error);
  EXPECT_NE(msg.find("/sys/fs/cgroup/job/cpu.max"), std::string::npos) << msg;
}

TEST(CgroupReal, ReadsThisMachineWithoutThrowing) {
  const cg::Limits l = cg::read_limits();
  if (l.cpuset) {
    EXPECT_FALSE(l.cpuset->empty());
  }
  if (l.quota_cpus) {
    EXPECT_GT(*l.quota_cpus, 0.0);
  }
}

}  // namespace
