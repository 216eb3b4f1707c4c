// The issue 19 optimizers end to end through `corun train`: a resumed run equals an uninterrupted one bitwise
// for every optimizer and schedule (the moments, velocities and hyper-parameter tensor are in the
// checkpoint), resuming with another optimizer is a clear error, Adam trains (the loss falls), replicas run
// every optimizer, and bad optimizer flags are usage errors said before anything runs.
#include "common/corun_process_test.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#ifndef CORUN_EXE
#error "CORUN_EXE must be defined to the path of the corun executable"
#endif

namespace {

using corun::testing::read_file;
using Result = corun::testing::CommandResult;

const std::string kTiny = "--model lstm --layers 1 --seq 3 --hidden 8 --batch 4";

std::vector<double> losses_of(const std::string& json_text) {
  std::vector<double> out;
  const auto at = json_text.find("\"loss\":[");
  if (at == std::string::npos) return out;
  std::istringstream in(json_text.substr(at + 8, json_text.find(']', at) - at - 8));
  for (std::string v; std::getline(in, v, ',');) out.push_back(std::strtod(v.c_str(), nullptr));
  return out;
}
std::string loss_text(const std::string& json_text) {
  const auto at = json_text.find("\"loss\":[");
  return at == std::string::npos ? "" : json_text.substr(at + 8, json_text.find(']', at) - at - 8);
}

class OptimizerRuns : public corun::testing::CorunProcessTest {
 protected:
  OptimizerRuns() : CorunProcessTest("optim") {}
};

struct Flags {
  const char* name;
  const char* flags;
};

void PrintTo(const Flags& f, std::ostream* os) { *os << f.flags; }  // test names, not bytes

class EveryOptimizer : public OptimizerRuns, public ::testing::WithParamInterface<Flags> {};

// One run of 6 iterations with checkpoints at 4 and 6; the one at 6 is removed, so the resumed run (same
// --iters: a cosine schedule spans them) continues from iteration 4 with the checkpoint's state.
TEST_P(EveryOptimizer, ResumedRunEqualsAnUninterruptedOneBitwise) {
  const std::string model = kTiny + " " + GetParam().flags + " --iters 6";
  const Result ref = corun("train " + model + " --json ref.json --save ref-params");
  ASSERT_EQ(ref.code, 0) << ref;
  const Result first = corun("train " + model + " --checkpoint ck --checkpoint-every 2");
  ASSERT_EQ(first.code, 0) << first;
  std::filesystem::remove_all(path("ck/ckpt-000000006"));
  const Result r = corun("train " + model + " --checkpoint ck --resume --json part.json --save params");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.err, "corun: resuming from ck/ckpt-000000004");
  const std::string want = loss_text(read_file(path("ref.json")));
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(loss_text(read_file(path("part.json"))), want);
  for (const char* p : {"w0", "b0", "w_out", "b_out"}) {
    const std::string a = read_file(path(std::string("params/") + p + ".npy"));
    EXPECT_TRUE(!a.empty() && a == read_file(path(std::string("ref-params/") + p + ".npy"))) << p;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Optim, EveryOptimizer,
    ::testing::Values(Flags{"adam_cosine_warmup", "--optimizer adam --lr 0.01 --lr-schedule cosine:0.001 --warmup 2"},
                      Flags{"adamw", "--optimizer adamw --lr 0.01 --weight-decay 0.1 --beta2 0.99"},
                      Flags{"nesterov_step", "--momentum 0.9 --nesterov --weight-decay 0.001 --lr-schedule step:2:0.5"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST_F(OptimizerRuns, ResumeWithAnotherOptimizerIsAClearError) {
  ASSERT_EQ(corun("train " + kTiny + " --optimizer adam --iters 2 --checkpoint ck").code, 0);
  const Result r = corun("train " + kTiny + " --iters 4 --checkpoint ck --resume");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "ck/ckpt-000000002 was written by the adam optimizer, this run uses sgd");
  const Result w = corun("train " + kTiny + " --optimizer adam --beta1 0.8 --iters 4 --checkpoint ck --resume");
  EXPECT_EQ(w.code, 1) << w;
  EXPECT_HAS(w.err, "was written with beta1 = 0.899999976, this run has beta1 = 0.800000012");
  ASSERT_EQ(corun("train " + kTiny + " --optimizer adam --lr-schedule cosine --iters 2 --checkpoint ck2").code, 0);
  const Result c = corun("train " + kTiny + " --optimizer adam --lr-schedule cosine --iters 4 --checkpoint ck2 --resume");
  EXPECT_EQ(c.code, 1) << c;
  EXPECT_HAS(c.err, "lr_schedule = cosine:0 over 2 iterations, this run has lr_schedule = cosine:0 over 4 iterations");
}

TEST_F(OptimizerRuns, AdamLossFalls) {
  const Result r = corun("train " + kTiny + " --optimizer adam --lr 0.05 --iters 40 --json a.json");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "optimizer=adam");
  const std::vector<double> l = losses_of(read_file(path("a.json")));
  ASSERT_EQ(l.size(), 40u);
  double first = 0, last = 0;
  for (size_t i = 0; i < 5; ++i) first += l[i], last += l[l.size() - 1 - i];
  EXPECT_LT(last, 0.85 * first) << "mean of the first five losses " << first / 5 << ", of the last five " << last / 5;
}

TEST_F(OptimizerRuns, ReplicasRunEveryOptimizer) {
  for (const char* flags : {"--optimizer adamw --weight-decay 0.01", "--momentum 0.9 --nesterov"}) {
    SCOPED_TRACE(flags);
    const Result r = corun("train " + kTiny + " " + flags + " --lr 0.05 --iters 6 --json r.json", "CORUN_REPLICAS=2");
    ASSERT_EQ(r.code, 0) << r;
    const Result one = corun("train " + kTiny + " " + flags + " --lr 0.05 --iters 6 --json one.json");
    ASSERT_EQ(one.code, 0) << one;
    // The root's update on the mean of two half-batch gradients: the one solver's step up to rounding.
    const std::vector<double> a = losses_of(read_file(path("r.json"))), b = losses_of(read_file(path("one.json")));
    ASSERT_EQ(a.size(), 6u);
    ASSERT_EQ(b.size(), 6u);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 * b[i]) << "iteration " << i;
  }
}

TEST_F(OptimizerRuns, BadFlagsAreUsageErrors) {
  struct Case {
    std::string args, message;
  };
  for (const Case& c : {Case{"--optimizer rmsprop", "--optimizer must be sgd, momentum, adam or adamw, got 'rmsprop'"},
                        Case{"--beta1 0.5", "--beta1 applies to --optimizer adam or adamw, not sgd"},
                        Case{"--optimizer adam --momentum 0.9", "--momentum applies to --optimizer sgd or momentum, not adam"},
                        Case{"--optimizer adam --beta2 1", "--beta2 must be a number in [0, 1), got '1'"},
                        Case{"--weight-decay -1", "--weight-decay must be a number in [0, 1e9], got '-1'"},
                        Case{"--nesterov", "--nesterov needs momentum > 0"},
                        Case{"--lr-schedule step:0:0.5", "--lr-schedule 'step:0:0.5': N must be a whole number >= 1"},
                        Case{"--lr-schedule linear", "--lr-schedule 'linear': unknown schedule"}}) {
    SCOPED_TRACE(c.args);
    const Result r = corun("train " + kTiny + " " + c.args + " --iters 1");
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_HAS(r.err, c.message);
  }
  const Result help = corun("train --help");
  for (const char* f : {"--optimizer", "--weight-decay", "--beta1", "--beta2", "--eps", "--lr-schedule", "--nesterov"})
    EXPECT_HAS(help.out, f);
}

}  // namespace
