// `corun infer --model M` for every built-in model of `corun train` (cli/infer_builtin.cpp), at tiny sizes:
// the latency row, --output's logits.npy of the model's shape, --json; --input pins an input (the logits no
// longer depend on the synthetic batch), and a bad --input (unknown name, wrong shape) exits 1 naming the
// problem with nothing written.
#include "common/corun_process_test.hpp"

#include <corun/npy.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Result = corun::testing::CommandResult;

struct ModelCase {
  const char* name;
  const char* args;    // tiny sizes
  corun::Shape logits;
};

// ctest lists the case by its model name (not the struct's bytes).
void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

class InferModels : public corun::testing::CorunProcessTest, public ::testing::WithParamInterface<ModelCase> {
 protected:
  InferModels() : CorunProcessTest("infer_models") {}
  Result run(const std::string& args) { return corun("infer " + args); }
  std::string read(const std::string& file) {
    std::ifstream in(dir_ + "/" + file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

TEST_P(InferModels, WritesTheLogitsAndTheLatency) {
  const ModelCase& c = GetParam();
  const std::string base = std::string("--model ") + c.name + " " + c.args;
  const Result r = run(base + " --iters 2 --warmup 1 --output out --json run.json");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, std::string("| ") + c.name + " | 1 | 2 |");
  const corun::NpyArray logits = corun::load_npy(dir_ + "/out/logits.npy");
  EXPECT_EQ(logits.shape, c.logits);
  const std::string json = read("run.json");
  EXPECT_HAS(json, std::string("\"model\":\"") + c.name + "\"");
  EXPECT_HAS(json, "\"median_ms\"");
}

INSTANTIATE_TEST_SUITE_P(
    Each, InferModels,
    ::testing::Values(ModelCase{"lstm", "--layers 1 --seq 3 --hidden 16", corun::Shape{1, 10}},
                      ModelCase{"phased-lstm", "--layers 1 --seq 3 --hidden 16", corun::Shape{1, 10}},
                      ModelCase{"cifar-quick", "", corun::Shape{1, 10}},
                      ModelCase{"pathnet", "--size small", corun::Shape{1, 10}},
                      ModelCase{"googlenet", "--size small", corun::Shape{1, 10}},
                      ModelCase{"wide-deep", "", corun::Shape{1, 1}}),
    [](const ::testing::TestParamInfo<ModelCase>& i) {
      std::string n = i.param.name;
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

class InferInput : public corun::testing::CorunProcessTest {
 protected:
  InferInput() : CorunProcessTest("infer_input") {}
  Result run(const std::string& args) { return corun("infer " + args); }
};

// With the image pinned, the logits do not depend on which synthetic batches ran before (targets, the other
// input, does not reach the logits); without it they do.
TEST_F(InferInput, APinnedInputFixesTheLogits) {
  std::vector<float> x(28 * 28);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  corun::save_npy(dir_ + "/x.npy", corun::Shape{1, 1, 28, 28}, x.data());
  const std::string base = "--model cifar-quick --input x=x.npy ";
  const Result a = run(base + "--iters 1 --warmup 1 --output a");
  ASSERT_EQ(a.code, 0) << a;
  const Result b = run(base + "--iters 3 --warmup 2 --output b");
  ASSERT_EQ(b.code, 0) << b;
  const Result free_run = run("--model cifar-quick --iters 1 --warmup 1 --output c");
  ASSERT_EQ(free_run.code, 0) << free_run;
  const std::vector<float> la = corun::load_npy(dir_ + "/a/logits.npy").data;
  EXPECT_EQ(la, corun::load_npy(dir_ + "/b/logits.npy").data);
  EXPECT_NE(la, corun::load_npy(dir_ + "/c/logits.npy").data);
}

TEST_F(InferInput, ABadInputExitsOneAndWritesNothing) {
  std::vector<float> x(4, 0.0f);
  corun::save_npy(dir_ + "/small.npy", corun::Shape{2, 2}, x.data());
  Result r = run("--model cifar-quick --input nosuch=small.npy --output out --json j.json");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "cifar-quick has no input of that name; its inputs: x [1, 1, 28, 28]");
  r = run("--model cifar-quick --input x=small.npy --output out --json j.json");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "has the shape [2, 2], cifar-quick's input is [1, 1, 28, 28]");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/out"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/j.json"));
  r = run("--model nosuch --output out");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "unknown model 'nosuch'");
}

}  // namespace
