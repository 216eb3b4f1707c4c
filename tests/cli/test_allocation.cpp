// Allocation-aware startup, end to end through the corun executable: the worker count and binding follow the
// affinity mask (taskset), a cgroup cpuset and CPU quota (a fake cgroup tree through CORUN_CGROUP_ROOT),
// STARPU_NCPU still overrides the count but not the mask, and `corun info` reports the mask, the cores used,
// the binding read back and warnings about settings that oversubscribe.
#include "common/corun_process_test.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using corun::testing::contains;
using corun::testing::read_file;
using corun::testing::shell_quote;
using Result = corun::testing::CommandResult;

// The CPUs this test process may use (ctest may itself run under a mask).
std::vector<int> own_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

bool have_taskset() { return std::system("command -v taskset >/dev/null 2>&1") == 0; }

// The value after a report line's label ("cores used   1 (cpus 0, ...)" -> "1 (cpus 0, ...)").
std::string field(const std::string& out, const std::string& label) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(label, 0) == 0 && line.size() > 13) return line.substr(13);
  return "";
}

std::vector<std::string> lines_starting(const std::string& out, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
  return found;
}

// Warnings other than "another ... process" (ctest may run StarPU tests next to this one).
// The warnings about the allocation. Not the two that describe the machine rather than the run: another corun
// on the same cores (tests run in parallel), and OpenBLAS on kernels older than the CPU (0.3.21 takes a Xeon
// under KVM for a Prescott; Cli.InfoWarnsWhenOpenBlasRunsKernelsOlderThanTheCpu checks that one, and the
// tests never change OPENBLAS_CORETYPE).
std::vector<std::string> own_warnings(const std::string& out) {
  std::vector<std::string> w;
  for (const auto& line : lines_starting(out, "warning      "))
    if (!contains(line, "process runs on cpus") && !contains(line, "OpenBLAS runs its")) w.push_back(line);
  return w;
}

// corun with a clean worker configuration: the variables that would decide the workers instead of the
// allocation are removed (the second pass of scripts/test.sh sets STARPU_NCPU=8). StarPU's home is the test's
// own (CorunProcessTest): under a narrower mask StarPU sees another topology and rewrites its bus files, and a
// StarPU process of another test reading the shared ~/.starpu at that moment asserts (seen in CI).
class Allocation : public corun::testing::CorunProcessTest {
 protected:
  Allocation()
      : CorunProcessTest("alloc", corun::testing::corun_test_env(
                                      {"STARPU_NCPU", "STARPU_WORKERS_GETBIND", "STARPU_WORKERS_CPUID",
                                       "STARPU_WORKERS_COREID", "STARPU_WORKERS_NOBIND", "OMP_NUM_THREADS",
                                       "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "CORUN_CGROUP_ROOT", "CORUN_NUMA",
                                       "CORUN_REPLICAS"})) {}
  void SetUp() override {
    CorunProcessTest::SetUp();
    if (!have_taskset()) GTEST_SKIP() << "taskset (util-linux) is not installed";
    cpus_ = own_cpus();
    ASSERT_FALSE(cpus_.empty());
  }
  std::string taskset(int cpu) const { return "taskset -c " + std::to_string(cpu); }

  // A fake cgroup v2 tree for CORUN_CGROUP_ROOT: the process in /job with the given files.
  std::string fake_cgroup(const std::string& cpuset, const std::string& cpu_max) {
    const fs::path root = fs::path(dir_) / "cgroot";
    fs::create_directories(root / "proc/self");
    fs::create_directories(root / "sys/fs/cgroup/job");
    std::ofstream(root / "proc/self/mountinfo") << "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
    std::ofstream(root / "proc/self/cgroup") << "0::/job\n";
    std::ofstream(root / "sys/fs/cgroup/cpuset.cpus.effective") << cpuset << "\n";
    fs::remove(root / "sys/fs/cgroup/job/cpu.max");
    if (!cpu_max.empty()) std::ofstream(root / "sys/fs/cgroup/job/cpu.max") << cpu_max << "\n";
    return root.string();
  }

  std::vector<int> cpus_;
};

TEST_F(Allocation, TasksetOneCpuGivesOneWorkerBoundThere) {
  const int cpu = cpus_.front();
  const Result r = corun("info", "", taskset(cpu));
  ASSERT_EQ(r.code, 0) << r;
  const std::string c = std::to_string(cpu);
  EXPECT_EQ(field(r.out, "affinity"), c + " (process mask)") << r;
  EXPECT_HAS(field(r.out, "allocation"), "1 worker on cpus " + c);
  EXPECT_HAS(r.out, "workers      1 CPU (from the allocation)");
  const auto workers = lines_starting(r.out, "  worker ");
  ASSERT_EQ(workers.size(), 1u) << r;
  EXPECT_HAS(workers[0], "runs on cpus " + c);
  EXPECT_EQ(field(r.out, "cores used").rfind("1 (cpus " + c + ",", 0), 0u) << r;
  EXPECT_TRUE(own_warnings(r.out).empty()) << r;
}

TEST_F(Allocation, WorkerFollowsTheMaskNotTheFirstCore) {
  if (cpus_.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const int cpu = cpus_.back();
  const Result r = corun("info", "", taskset(cpu));
  ASSERT_EQ(r.code, 0) << r;
  const auto workers = lines_starting(r.out, "  worker ");
  ASSERT_EQ(workers.size(), 1u) << r;
  EXPECT_HAS(workers[0], "runs on cpus " + std::to_string(cpu));
  EXPECT_HAS(field(r.out, "allocation"), "(limited by the affinity mask)");
}

TEST_F(Allocation, WholeMaskGivesOneWorkerPerCore) {
  const Result r = corun("info");
  ASSERT_EQ(r.code, 0) << r;
  const int cores = std::atoi(field(r.out, "cores used").c_str());
  EXPECT_GE(cores, 1) << r;
  const auto workers = lines_starting(r.out, "  worker ");
  EXPECT_EQ(static_cast<int>(workers.size()), std::atoi(field(r.out, "workers").c_str())) << r;
  EXPECT_HAS(r.out, "(from the allocation)");
  EXPECT_TRUE(own_warnings(r.out).empty()) << r;
}

TEST_F(Allocation, NumaDomainsAreTheAllocationsOnly) {
  const int cpu = cpus_.front();
  const Result r = corun("info", "", taskset(cpu));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(field(r.out, "numa").rfind("1 domain with CPUs", 0), 0u) << r;
  EXPECT_HAS(r.out, ": CPUs " + std::to_string(cpu) + " (1 core)");
  EXPECT_EQ(field(r.out, "replicas"), "off (default: one domain with CPUs)") << r;
}

TEST_F(Allocation, FakeNumaTopologyListsMemoryOnlyNodesAndThePlan) {
  // Two packages, each with DDR and a high-bandwidth node over the same cores (KNL flat mode in hwloc).
  const Result r = corun("info", "HWLOC_SYNTHETIC=" + shell_quote("pack:2 [numa] [numa(memory=16GB)] core:2 pu:1"));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(field(r.out, "numa").rfind("2 domains with CPUs (of 4 NUMA nodes; HWLOC_SYNTHETIC=", 0), 0u) << r;
  EXPECT_HAS(r.out, "  node 0: CPUs 0-1 (2 cores)");
  EXPECT_HAS(r.out, "no replica, memory only (its CPUs 0-1 belong to node 0)");
  EXPECT_HAS(r.out, "  node 2: CPUs 2-3 (2 cores)");
  EXPECT_HAS(field(r.out, "replicas"), "off (default: one solver over 2 domains with CPUs");
  // Asked for: a replica per domain (two NUMA nodes in all, within every StarPU's STARPU_MAXNUMANODES).
  const Result asked =
      corun("info", "CORUN_NUMA=replicate HWLOC_SYNTHETIC=" + shell_quote("pack:2 numa:1 core:2 pu:1"));
  ASSERT_EQ(asked.code, 0) << asked;
  EXPECT_EQ(field(asked.out, "replicas"),
            "replicate (CORUN_NUMA=replicate), 2 replicas: r0 node 0 CPUs 0-1; r1 node 1 CPUs 2-3")
      << asked;
}

TEST_F(Allocation, TrainUnderTasksetRunsOneWorker) {
  const Result r = corun("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 2 --json run.json", "",
                       taskset(cpus_.front()));
  ASSERT_EQ(r.code, 0) << r;
  const std::string json = read_file(path("run.json"));
  EXPECT_HAS(json, "\"workers\":1,");
  EXPECT_HAS(json, "\"workers_source\":\"allocation\"");
  EXPECT_HAS(json, "\"affinity\":\"" + std::to_string(cpus_.front()) + "\"");
}

TEST_F(Allocation, StarpuNcpuOverridesTheCountButNotTheMask) {
  const int cpu = cpus_.front();
  const Result r = corun("info", "STARPU_NCPU=2", taskset(cpu));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "workers      2 CPU (from STARPU_NCPU)");
  const auto workers = lines_starting(r.out, "  worker ");
  ASSERT_EQ(workers.size(), 2u) << r;
  for (const auto& w : workers) EXPECT_HAS(w, "runs on cpus " + std::to_string(cpu));
  EXPECT_EQ(field(r.out, "cores used").rfind("1 ", 0), 0u) << r;
  EXPECT_HAS(r.out, "warning      2 workers share 1 core (STARPU_NCPU=2): oversubscribed");
}

TEST_F(Allocation, ThreadVariablesThatOversubscribeAreReported) {
  const Result r = corun("info", "OMP_NUM_THREADS=4 OPENBLAS_NUM_THREADS=8 MKL_NUM_THREADS=1");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "warning      OMP_NUM_THREADS=4: a library with an OpenMP pool would start 4 threads");
  EXPECT_HAS(r.out, "warning      OPENBLAS_NUM_THREADS=8: corun runs BLAS with 1 thread per call");
  EXPECT_FALSE(contains(r.out, "MKL_NUM_THREADS=1")) << r;  // 1 is right
  const Result ok = corun("info", "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1");
  ASSERT_EQ(ok.code, 0) << ok;
  EXPECT_TRUE(own_warnings(ok.out).empty()) << ok;
}

TEST_F(Allocation, CgroupQuotaCapsTheWorkers) {
  // A quota of 1.5 CPUs rounds up to 2 workers, 0.5 to 1; with one usable core, 1 either way.
  const std::string root = fake_cgroup("0-1023", "50000 100000");
  const Result r = corun("info", "CORUN_CGROUP_ROOT=" + shell_quote(root));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(field(r.out, "cgroup"), "cpu quota 0.50 cpus (/sys/fs/cgroup/job/cpu.max)");
  EXPECT_HAS(r.out, "workers      1 CPU (from the allocation)");
  EXPECT_EQ(lines_starting(r.out, "  worker ").size(), 1u) << r;
  if (cpus_.size() >= 2) {
    EXPECT_HAS(field(r.out, "allocation"), "limited by the CPU quota");
  }

  fake_cgroup("0-1023", "150000 100000");
  const Result r2 = corun("info", "CORUN_CGROUP_ROOT=" + shell_quote(root));
  ASSERT_EQ(r2.code, 0) << r2;
  const int expected = cpus_.size() >= 2 ? 2 : 1;
  EXPECT_EQ(std::atoi(field(r2.out, "workers").c_str()), expected) << r2;
}

TEST_F(Allocation, CgroupCpusetRestrictsTheWorkers) {
  const int cpu = cpus_.front();
  const std::string root = fake_cgroup(std::to_string(cpu), "");
  const Result r = corun("info", "CORUN_CGROUP_ROOT=" + shell_quote(root));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(field(r.out, "cgroup"),
             "cpuset " + std::to_string(cpu) + " (/sys/fs/cgroup/cpuset.cpus.effective), no cpu quota");
  EXPECT_HAS(field(r.out, "allocation"), "1 worker on cpus " + std::to_string(cpu));
  EXPECT_HAS(r.out, "workers      1 CPU (from the allocation)");
}

TEST_F(Allocation, BadCgroupInputIsAClearError) {
  const Result r = corun("info", "CORUN_CGROUP_ROOT=/nonexistent/cgroot");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_CGROUP_ROOT='/nonexistent/cgroot' is not a readable directory");
  const std::string root = fake_cgroup("0-1023", "lots 100000");
  const Result m = corun("train --model lstm --layers 1 --seq 2 --hidden 8 --batch 4 --iters 1",
                       "CORUN_CGROUP_ROOT=" + shell_quote(root));
  EXPECT_EQ(m.code, 1) << m;
  EXPECT_HAS(m.err, "/sys/fs/cgroup/job/cpu.max");
  EXPECT_FALSE(contains(m.out, "| iterations |")) << m;
  fake_cgroup("", "");  // an empty cpuset: nothing usable
  const Result e = corun("info", "CORUN_CGROUP_ROOT=" + shell_quote(root));
  EXPECT_EQ(e.code, 1) << e;
  EXPECT_HAS(e.err, "no usable CPU");
}

TEST_F(Allocation, AnotherStarpuProcessOnTheSameCpusIsReported) {
  const int cpu = cpus_.front();
  // A long training run in the background on the same CPU, in its own directory and StarPU home.
  fs::create_directories(path("bg"));
  const pid_t pid = spawn("train --model lstm --size medium --iters 100000", "", "bg", taskset(cpu), path("bg"));
  ASSERT_GT(pid, 0);
  // Wait for its readiness, not for a fixed time (under load, building the model and starting StarPU took
  // over 10 s): `corun train` prints its "parallel-op pass" line once its engine has started, and starpu_init
  // returns only when the workers (threads named "CPU <n>", what `corun info` looks for) are up. The deadline
  // only turns a hung run into a clear failure before ctest's timeout (120 s).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (!contains(read_file(path("bg/bg.err")), "parallel-op pass")) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      reaped(pid);
      FAIL() << "the background corun ended before starting its engine:\n" << read_file(path("bg/bg.err"));
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "the background corun did not start its engine in 90 s:\n" << read_file(path("bg/bg.err"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  bool running = false;
  std::error_code ec;
  for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    running = running || contains(read_file(t.path().string() + "/comm"), "CPU ");
  ASSERT_TRUE(running) << "the background corun started its engine but has no thread named \"CPU <n>\"";
  const Result r = corun("info", "", taskset(cpu));
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "another StarPU process runs on cpus " + std::to_string(cpu) + " of this allocation: pid " +
                        std::to_string(pid) + " (corun, 1 worker)");
  if (cpus_.size() >= 2) {  // on other CPUs it does not compete
    const Result other = corun("info", "", taskset(cpus_.back()));
    ASSERT_EQ(other.code, 0) << other;
    EXPECT_FALSE(contains(other.out, "pid " + std::to_string(pid) + " ")) << other;
  }
}

}  // namespace
