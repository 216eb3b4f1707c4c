// One table of bad inputs across the CLI, the CORUN_* environment, and the files corun reads (issue 8):
// each must exit non-zero with a message that names what was wrong, and leave no output file behind
// (every train case also asks for --json out.json, which must not exist afterwards, not even half-written).
// Graph-building errors are library errors, covered by tests/unit/test_shapes_and_graph.cpp.
#include "common/corun_process_test.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using corun::testing::contains;

struct BadInput {
  const char* name;
  const char* env;      // NAME=value words ("" for none)
  const char* args;     // after `corun`; "{dir}" becomes the test's directory
  int code;             // 2: usage error, 1: configuration or runtime error
  std::vector<const char*> says;  // the message names these
};

const char* kTiny = "--model lstm --layers 1 --seq 2 --hidden 8 --batch 4 --iters 2 --json out.json";

std::vector<BadInput> table() {
  const std::string t = kTiny;
  return {
      // The command line: usage errors, exit 2.
      {"unknown_command", "", "frobnicate", 2, {"frobnicate"}},
      {"unknown_flag", "", "train --bogus", 2, {"--bogus"}},
      {"missing_value", "", "train --iters", 2, {"--iters"}},
      {"unknown_model", "", "train --model resnet --json out.json", 2, {"resnet"}},
      {"zero_iters", "", "train --model lstm --iters 0 --json out.json", 2, {"--iters"}},
      {"text_iters", "", "train --model lstm --iters ten --json out.json", 2, {"--iters", "ten"}},
      {"negative_lr", "", "train --model lstm --lr -1 --json out.json", 2, {"--lr"}},
      {"unknown_size", "", "train --model lstm --size huge --json out.json", 2, {"huge"}},
      {"unknown_cell", "", "train --model lstm --cell weird --json out.json", 2, {"--cell", "weird"}},
      {"zero_hidden", "", "train --model lstm --hidden 0 --json out.json", 2, {"--hidden"}},
      {"checkpoint_every_alone", "", "train --model lstm --checkpoint-every 5 --json out.json", 2, {"--checkpoint DIR"}},
      {"resume_alone", "", "train --model lstm --resume --json out.json", 2, {"--resume needs --checkpoint"}},
      {"zero_progress", "", "train --model lstm --progress-every 0 --json out.json", 2, {"--progress-every"}},
      {"plot_without_output", "", "plot-trace t.json", 2, {"-o"}},
      // The environment: configuration errors, exit 1.
      {"unknown_policy", "CORUN_SCHED=nope", "train {tiny}", 1, {"nope", "not a scheduling policy"}},
      {"conflicting_policies", "CORUN_SCHED=eager STARPU_SCHED=lws", "train {tiny}", 1, {"CORUN_SCHED=eager", "STARPU_SCHED=lws"}},
      {"bad_kernels", "CORUN_KERNELS=turbo", "train {tiny}", 1, {"CORUN_KERNELS", "turbo"}},
      {"bad_quiet", "CORUN_QUIET=yes", "train {tiny}", 1, {"CORUN_QUIET", "yes"}},
      {"bad_layout", "CORUN_SCHED=cpf CORUN_EXECUTORS=2y1", "train {tiny}", 1, {"CORUN_EXECUTORS", "2y1"}},
      {"layout_with_builtin", "CORUN_SCHED=lws CORUN_EXECUTORS=1x1", "train {tiny}", 1, {"CORUN_EXECUTORS", "lws"}},
      {"layout_with_corun", "CORUN_SCHED=corun CORUN_EXECUTORS=1x1", "train {tiny}", 1, {"CORUN_EXECUTORS", "corun"}},
      {"zero_fixed_width", "CORUN_SCHED=cpf CORUN_FIXED_WIDTH=0", "train {tiny}", 1, {"CORUN_FIXED_WIDTH"}},
      {"bad_deterministic", "CORUN_SCHED=corun CORUN_DETERMINISTIC=maybe", "train {tiny}", 1, {"CORUN_DETERMINISTIC", "maybe"}},
      {"deterministic_with_cpf", "CORUN_SCHED=cpf CORUN_DETERMINISTIC=1", "train {tiny}", 1, {"CORUN_DETERMINISTIC", "corun"}},
      {"schedule_without_deterministic", "CORUN_SCHED=corun CORUN_SCHEDULE=s.sched", "train {tiny}", 1, {"CORUN_SCHEDULE", "CORUN_DETERMINISTIC=1"}},
      {"bad_verbose", "CORUN_SCHED=corun CORUN_VERBOSE=loud", "train {tiny}", 1, {"CORUN_VERBOSE", "loud"}},
      {"zero_width_interval", "CORUN_SCHED=corun CORUN_WIDTH_INTERVAL=0", "train {tiny}", 1, {"CORUN_WIDTH_INTERVAL"}},
      {"bad_numa_mode", "CORUN_NUMA=auto", "train {tiny}", 1, {"CORUN_NUMA", "auto"}},
      {"zero_replicas", "CORUN_REPLICAS=0", "train {tiny}", 1, {"CORUN_REPLICAS"}},
      {"replicas_with_numa_off", "CORUN_NUMA=off CORUN_REPLICAS=2", "info", 1, {"CORUN_REPLICAS=2", "CORUN_NUMA=replicate"}},
      {"replicas_uneven_batch", "CORUN_REPLICAS=2", "train --model lstm --layers 1 --seq 2 --hidden 8 --batch 5 --iters 1", 1,
       {"5 samples", "2 replicas", "multiple of 2"}},
      {"replicas_of_wide_deep", "CORUN_REPLICAS=2", "train --model wide-deep --batch 8 --iters 1", 1,
       {"wide-deep runs one solver", "CORUN_NUMA=off"}},
      {"replicas_traced", "CORUN_REPLICAS=2", "train {tiny} --trace {dir}/t.json", 2, {"--trace", "CORUN_NUMA=off"}},
      // Sizes too large for the memory (issue 52 item 4): refused before anything is allocated, exit 1, naming
      // the flags, never std::bad_alloc or minutes of growth.
      {"serve_bench_huge_seq", "", "serve-bench --cell lstm --input 64 --hidden 64 --batch 1 --seq 999999999", 1,
       {"--seq 999999999 asks for at least", "lower --seq"}},
      {"serve_bench_huge_hidden", "", "serve-bench --cell gru --input 8 --hidden 999999999 --batch 1 --seq 2 --impl fused", 1,
       {"--hidden 999999999", "asks for at least"}},
      {"serve_text_huge_seq", "", "serve-bench --model text-similarity --seq 999999999", 1,
       {"--seq 999999999 asks for at least", "text-similarity"}},
      {"serve_text_huge_batch", "", "serve-bench --model text-similarity --batch 999999999", 1,
       {"--batch 999999999 asks for at least"}},
      {"infer_wide_deep_huge_batch", "", "infer --model wide-deep --batch 999999999 --json out.json", 1,
       {"--batch 999999999 asks for at least", "wide-deep"}},
      {"infer_lstm_huge_seq", "", "infer --model lstm --seq 999999999 --json out.json", 1,
       {"--seq 999999999 asks for at least", "lstm"}},
      {"infer_pathnet_huge_batch", "", "infer --model pathnet --batch 999999999 --json out.json", 1,
       {"--batch 999999999 asks for at least", "pathnet"}},
      {"infer_builtin_wide_deep_huge_batch", "", "infer --model wide-deep --batch 999999999 --output {dir}/o", 1,
       {"--batch 999999999 asks for at least"}},
      // Files corun reads: configuration or I/O errors, exit 1, naming the file.
      {"missing_profile", "CORUN_SCHED=cpf CORUN_PROFILE={dir}/none.profile", "train {tiny}", 1, {"none.profile"}},
      {"garbage_profile", "CORUN_SCHED=cpf CORUN_PROFILE={dir}/garbage.txt", "train {tiny}", 1, {"garbage.txt"}},
      {"garbage_schedule", "CORUN_SCHED=corun CORUN_DETERMINISTIC=1 CORUN_SCHEDULE={dir}/garbage.txt", "train {tiny}", 1,
       {"garbage.txt", "not a corun schedule"}},
      {"missing_npy", "", "train {tiny} --load {dir}/empty", 1, {".npy"}},
      {"corrupt_npy", "", "train {tiny} --load {dir}/corrupt", 1, {"corrupt/"}},
      {"garbage_trace", "", "plot-trace {dir}/garbage.txt -o {dir}/plot.png", 1, {"garbage.txt"}},
      {"json_in_missing_dir", "", "train --model lstm --layers 1 --seq 2 --hidden 8 --batch 4 --iters 1 --json {dir}/no/such/out.json", 1,
       {"no/such/out.json"}},
  };
}

std::string expand(std::string s, const std::string& dir) {
  for (size_t at; (at = s.find("{tiny}")) != std::string::npos;) s.replace(at, 6, kTiny);
  for (size_t at; (at = s.find("{dir}")) != std::string::npos;) s.replace(at, 5, dir);
  return s;
}

class BadInputs : public corun::testing::CorunProcessTest, public ::testing::WithParamInterface<BadInput> {
 protected:
  BadInputs() : CorunProcessTest("bad") {}
  void SetUp() override {
    CorunProcessTest::SetUp();
    std::ofstream(path("garbage.txt")) << "this is not what corun expects\n";
    fs::create_directories(path("empty"));
    fs::create_directories(path("corrupt"));
    // A parameter file of the right name that is not an .npy file.
    for (const char* p : {"w0", "b0", "w_out", "b_out"}) std::ofstream(path("corrupt/") + p + ".npy") << "\x93NUMPY garbage";
  }
};

TEST_P(BadInputs, FailClearlyAndWriteNothing) {
  const BadInput& c = GetParam();
  const corun::testing::CommandResult r = corun(expand(c.args, dir_), expand(c.env, dir_));
  EXPECT_EQ(r.code, c.code) << r;
  for (const char* s : c.says) EXPECT_TRUE(contains(r.err, s)) << "the message does not name '" << s << "'\n" << r;
  EXPECT_FALSE(contains(r.err, "Assertion")) << r;  // a clear message, not a crash
  EXPECT_FALSE(fs::exists(path("out.json"))) << "a failed run left out.json";
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_NE(e.path().filename().string().rfind("out.json.tmp", 0), 0u) << "a failed run left " << e.path();
  EXPECT_FALSE(fs::exists(path("plot.png")));
}

INSTANTIATE_TEST_SUITE_P(Table, BadInputs, ::testing::ValuesIn(table()),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(BadInputTable, HasAtLeastThirtyCases) { EXPECT_GE(table().size(), 30u); }

}  // namespace
