// `corun simulate` in a native build: usage errors (exit 2), bad machine files and missing measurements
// (exit 1, a message naming what to fix, nothing started), and the files it writes for a simulated run
// (platform and per-width models, from measured models of a fake machine key). The simulated run itself
// needs build/simgrid: label simgrid, docs/simulation.md.
#include "common/corun_process_test.hpp"

#include "base/files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#ifndef CORUN_SOURCE_DIR
#error "CORUN_SOURCE_DIR must be defined to the repository root"
#endif

namespace {

using corun::testing::shell_quote;
using Result = corun::testing::CommandResult;
namespace fs = std::filesystem;

const std::string kMachine = std::string(CORUN_SOURCE_DIR) + "/machines/16c-2numa.json";

// One measured op at widths 1 and 2 (a StarPU 1.3 history file, comments dropped).
const char* kMeasured =
    "45\n2\n1\n0\n0\n1\n1\n1\n0 0 0 0 nan nan 0 0 0\nnan nan nan\n0\n"
    "0000abcd 4096 0 1.000000e+02 1 1000 10010 12\n"
    "1\n0\n0\n2\n1\n1\n0 0 0 0 nan nan 0 0 0\nnan nan nan\n0\n"
    "0000abcd 4096 0 6.000000e+01 1 600 3610 12\n";

class Simulate : public corun::testing::CorunProcessTest {
 protected:
  Simulate() : CorunProcessTest("simulate") {}
  Result run(const std::string& args, const std::string& env = "") { return corun("simulate " + args, env); }
  // A stand-in for the SimGrid build of corun: prints its arguments and the environment it was given.
  std::string fake_simgrid_corun() {
    const std::string path = dir_ + "/fake-corun";
    corun::write_file_atomically(path, "#!/bin/sh\necho \"ran: $* ncpu=$STARPU_NCPU host=$STARPU_HOSTNAME\"\n");
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }
};

TEST_F(Simulate, UsageErrors) {
  Result r = run("-- train --model lstm");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("--machine FILE is required"), std::string::npos) << r;
  r = run("--machine " + kMachine);
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("the command to simulate is missing"), std::string::npos) << r;
  r = run("--machine " + kMachine + " -- profile --model lstm");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("only train and infer"), std::string::npos) << r;
  r = run("--machine " + kMachine + " --law median -- train --model lstm");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("--law must be optimistic or pessimistic"), std::string::npos) << r;
}

TEST_F(Simulate, BadMachineFileAndMissingMeasurementsSayWhatToDo) {
  const std::string fake = fake_simgrid_corun();
  corun::write_file_atomically(dir_ + "/m.json", R"({"format": "corun-machine", "version": 1, "name": "Big Box",
    "cores": 16, "numa_domains": 1, "domain_bandwidth_gbs": 10, "team_sync_us": 1})");
  Result r = run("--machine m.json --corun " + fake + " --dir out -- train --model lstm");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("name 'Big Box'"), std::string::npos) << r;
  EXPECT_EQ(r.out.find("ran:"), std::string::npos) << r;

  r = run("--machine " + kMachine + " --corun " + fake + " --measured-dir empty --measured-key k --dir out -- train");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("no measured models of machine key 'k'"), std::string::npos) << r;
  EXPECT_NE(r.err.find("run the same command natively first"), std::string::npos) << r;
  EXPECT_EQ(r.out.find("ran:"), std::string::npos) << r;

  r = run("--machine " + kMachine + " --corun " + dir_ + "/nothing-here -- train --model lstm");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("scripts/setup.sh simgrid"), std::string::npos) << r;
}

TEST_F(Simulate, WritesTheMachineAndRunsTheSimgridBuild) {
  const std::string fake = fake_simgrid_corun();
  fs::create_directories(dir_ + "/measured/codelets/45");
  corun::write_file_atomically(dir_ + "/measured/codelets/45/corun_matmul.k", kMeasured);
  const Result r = run("--machine " + kMachine + " --law optimistic --corun " + fake +
                       " --measured-dir measured --measured-key k --dir out -- train --model lstm --iters 3");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("simulated time"), std::string::npos) << r;
  EXPECT_NE(r.out.find("machine 16c-2numa"), std::string::npos) << r;
  EXPECT_NE(r.out.find("(b) optimistic scaling law"), std::string::npos) << r;
  EXPECT_NE(r.out.find("1 footprints (1 with a width-2 time)"), std::string::npos) << r;
  EXPECT_NE(r.out.find("ran: train --model lstm --iters 3 ncpu=16 host=corun-sim-16c-2numa-optimistic"),
            std::string::npos)
      << r;
  const std::string model = corun::read_file(dir_ + "/out/codelets/45/corun_matmul.corun-sim-16c-2numa-optimistic");
  EXPECT_NE(model.find("# number of cores \n16\n"), std::string::npos);
  // Width 2 keeps the measured 60 µs (serial fraction 0.2); width 16: 100 (0.2 + 0.8 / 16) = 25 µs.
  EXPECT_NE(model.find("6.000000e+01"), std::string::npos);
  EXPECT_NE(model.find("2.500000e+01"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ + "/out/bus/corun-sim-16c-2numa-optimistic.platform.v4.xml"));
}

// Issue 52: a refused input leaves no files behind: not the default temp dir, not a new --dir, and in an
// existing --dir nothing but what was there.
TEST_F(Simulate, ARefusedInputLeavesNoFilesBehind) {
  const std::string fake = fake_simgrid_corun();
  fs::create_directories(dir_ + "/tmp");
  fs::create_directories(dir_ + "/kept");
  corun::write_file_atomically(dir_ + "/kept/mine.txt", "mine\n");
  for (const std::string dir : {"", "--dir new", "--dir kept"}) {
    const Result r = run("--machine " + kMachine + " --corun " + fake + " --measured-dir empty --measured-key k " + dir +
                             " -- train",
                         "TMPDIR=" + shell_quote(dir_ + "/tmp"));
    EXPECT_EQ(r.code, 1) << r;
    EXPECT_NE(r.err.find("no measured models of machine key 'k'"), std::string::npos) << r;
  }
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp")) << "the default temp dir was left in " << dir_ << "/tmp";
  EXPECT_FALSE(fs::exists(dir_ + "/new")) << "--dir new was left behind";
  std::vector<std::string> kept;
  for (const auto& e : fs::recursive_directory_iterator(dir_ + "/kept")) kept.push_back(e.path().string());
  EXPECT_EQ(kept, std::vector<std::string>{dir_ + "/kept/mine.txt"});
}

// Issue 52 item 5a: the simulated run refuses ops without a model (exit 4, engine/simulated_models.hpp; here a
// stand-in that does so). corun simulate removes what it wrote, exits 1 and prints the native commands that
// calibrate the same command into the directory it reads its measurements from, with 12 iterations.
TEST_F(Simulate, ARefusedSimulatedRunLeavesNoFilesAndSaysHowToCalibrate) {
  const std::string refusing = dir_ + "/refusing-corun";
  corun::write_file_atomically(refusing, "#!/bin/sh\necho 'corun: simulated run refused: 1 op footprint(s)' >&2\n"
                                         "mkdir -p \"$STARPU_PERF_MODEL_DIR/bus\" && touch \"$STARPU_PERF_MODEL_DIR/bus/x\"\n"
                                         "exit 4\n");
  fs::permissions(refusing, fs::perms::owner_all);
  fs::create_directories(dir_ + "/measured/codelets/45");
  corun::write_file_atomically(dir_ + "/measured/codelets/45/corun_matmul.k", kMeasured);
  const Result r = run("--machine " + kMachine + " --corun " + refusing +
                       " --measured-dir measured --measured-key k --dir out -- train --model lstm --iters 3 --seq 4");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("simulated run refused"), std::string::npos) << r;
  EXPECT_FALSE(fs::exists(dir_ + "/out")) << "the --dir it created was left behind";
  const std::string calibrate = "STARPU_PERF_MODEL_DIR=measured STARPU_HOSTNAME=k STARPU_CALIBRATE=1 ";
  const std::string command = " train --model lstm --seq 4 --iters 12\n";
  EXPECT_NE(r.err.find(calibrate + "CORUN_SCHED=lws " + std::string(CORUN_EXE) + command), std::string::npos) << r;
  EXPECT_NE(r.err.find(calibrate + "CORUN_SCHED=cpf CORUN_EXECUTORS=1x2 " + std::string(CORUN_EXE) + command),
            std::string::npos)
      << r;

  // Any other exit of the simulated run is passed on, and its files stay (they are its results' inputs).
  const std::string failing = dir_ + "/failing-corun";
  corun::write_file_atomically(failing, "#!/bin/sh\nexit 3\n");
  fs::permissions(failing, fs::perms::owner_all);
  const Result other = run("--machine " + kMachine + " --corun " + failing +
                           " --measured-dir measured --measured-key k --dir kept -- train --model lstm");
  EXPECT_EQ(other.code, 3) << other;
  EXPECT_TRUE(fs::exists(dir_ + "/kept/bus/corun-sim-16c-2numa-pessimistic.platform.v4.xml")) << other;
}

}  // namespace
