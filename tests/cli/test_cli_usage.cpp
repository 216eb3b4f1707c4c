// The corun executable end to end, part 1: usage errors (exit 2) and configuration errors (exit 1).
#include "cli_fixture.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using corun::testing::Cli;
using corun::testing::contains;
using corun::testing::kTiny;
using corun::testing::Result;

// ------------------------------------------------------------------------------------------ usage: exit 2

TEST_F(Cli, NoCommandIsUsageError) {
  const Result r = corun("");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "usage: corun <command>");
}

TEST_F(Cli, TopLevelHelp) {
  for (const char* h : {"--help", "-h"}) {
    const Result r = corun(h);
    EXPECT_EQ(r.code, 0) << r;
    EXPECT_HAS(r.out, "usage: corun <command>");
    EXPECT_HAS(r.out, "train");
    EXPECT_HAS(r.out, "info");
  }
}

TEST_F(Cli, UnknownCommand) {
  const Result r = corun("frobnicate --model lstm");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "unknown command 'frobnicate'");
  EXPECT_HAS(r.err, "usage: corun <command>");
}

TEST_F(Cli, UnknownFlag) {
  const Result r = corun("train --model lstm --bogus 3");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "unknown argument '--bogus'");
  EXPECT_HAS(r.err, "usage: corun train");  // no flag of its own: the synopsis line, not the flag list
  EXPECT_FALSE(contains(r.err, "--iters")) << r;
  // Positional junk is not silently ignored either.
  const Result r2 = corun("train --model lstm extra");
  EXPECT_EQ(r2.code, 2) << r2;
  EXPECT_HAS(r2.err, "'extra'");
}

TEST_F(Cli, MissingValue) {
  const Result r = corun("train --model lstm --iters");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "--iters needs a value");
  EXPECT_HAS(r.err, "  --iters V");  // the flag's own usage line
  const Result r2 = corun("train --model");
  EXPECT_EQ(r2.code, 2) << r2;
  EXPECT_HAS(r2.err, "--model needs a value");
}

TEST_F(Cli, NonPositiveOrMalformedSizes) {
  for (const char* bad : {"--hidden 0", "--iters -1", "--batch abc", "--seq 1.5", "--layers 3x",
                          "--iters=", "--hidden 99999999999999999999", "--lr 0", "--lr -0.1", "--lr nan"}) {
    SCOPED_TRACE(bad);
    const Result r = corun(std::string("train --model lstm ") + bad);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_HAS(r.err, "needs a positive");
    EXPECT_HAS(r.err, "see `corun train --help`");
  }
}

TEST_F(Cli, OtherUsageErrors) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c :
       {Case{"train --model gru", "unknown model 'gru'"}, Case{"train --iters 1", "--model is required"},
        Case{"train --model lstm --size huge", "--size must be small, medium or large"},
        Case{"train --model lstm --cell gru", "--cell must be fused or unfused"},
        Case{"train --model lstm --iters 1 --iters 2", "--iters given twice"},
        Case{"train --model lstm --help=yes", "--help takes no value"},
        Case{"info --bogus", "unknown argument '--bogus'"}}) {
    SCOPED_TRACE(c.args);
    const Result r = corun(c.args);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_HAS(r.err, c.message);
  }
}

TEST_F(Cli, TrainHelp) {
  const Result r = corun("train --help");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "usage: corun train");
  for (const char* flag : {"--model", "--size", "--layers", "--batch", "--seq", "--hidden", "--iters", "--lr", "--seed",
                           "--json", "--save", "--load", "--dump-grads", "--cell", "--fuse-elementwise"})
    EXPECT_HAS(r.out, flag);
  EXPECT_TRUE(r.err.empty()) << r;
  const Result ri = corun("info --help");
  EXPECT_EQ(ri.code, 0) << ri;
  EXPECT_HAS(ri.out, "usage: corun info");
}

// ------------------------------------------------------------------------- configuration errors: exit 1

TEST_F(Cli, UnknownPolicy) {
  const Result r = corun("train " + kTiny, "CORUN_SCHED=nosuch CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_SCHED='nosuch'");
  for (const char* name : {"eager", "lws", "dmdas", "pheft"}) EXPECT_HAS(r.err, name);
  EXPECT_FALSE(contains(r.out, "| iterations |")) << r;
}

TEST_F(Cli, UnknownPolicyFromStarpuSched) {
  const Result r = corun("train " + kTiny, "STARPU_SCHED=nosuch CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "STARPU_SCHED='nosuch'");
  EXPECT_HAS(r.err, "lws");
}

TEST_F(Cli, PolicyHelp) {
  const Result r = corun("train " + kTiny, "CORUN_SCHED=help");
  EXPECT_EQ(r.code, 0) << r;
  for (const char* name : {"eager", "lws", "dmdas", "pheft"}) EXPECT_HAS(r.out, std::string("  ") + name + "\t");
  EXPECT_HAS(r.out, "default: lws");
  EXPECT_FALSE(contains(r.out, "| iterations |")) << "help must not train\n" << r;
}

TEST_F(Cli, ConflictingPolicies) {
  const Result r = corun("train " + kTiny, "CORUN_SCHED=eager STARPU_SCHED=lws CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_SCHED=eager");
  EXPECT_HAS(r.err, "STARPU_SCHED=lws");
}

TEST_F(Cli, MalformedEnvironment) {
  const Result r = corun("train " + kTiny, "CORUN_KERNELS=turbo CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_KERNELS='turbo'");
  EXPECT_HAS(r.err, "fast, ref");
  const Result q = corun("train " + kTiny, "CORUN_QUIET=yes");
  EXPECT_EQ(q.code, 1) << q;
  EXPECT_HAS(q.err, "CORUN_QUIET='yes'");
}
}  // namespace
