// The ONNX LSTM / GRU layers (corun/rnn.hpp) against PyTorch's nn.LSTM / nn.GRU: 2 layers stacked,
// bidirectional, with biases and initial states, and one-layer reverse / forward cases without either.
// rnn_torch_fixtures.py writes PyTorch's weights in ONNX layout, its outputs and the gradients of a fixed
// linear loss (computed in double) into a fresh folder at test time; this program builds the same layers,
// runs forward and backward once and compares Y, Y_h, Y_c and every gradient (X, W, R, B, initial states).
// Tolerance: |corun - torch| <= 1e-4 * max(1, |torch|) elementwise (f32 against double; measured ~1e-6).
// Exit 77 (CTest: skipped) when the fixture script finds no python3-torch.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>
#include <corun/npy.hpp>
#include <corun/rnn.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace corun {
namespace {

std::string g_dir;  // the fixture folder main() filled

struct Meta {
  std::string kind;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int layers = 0, dirs = 0;
  bool bias = false, state = false, reverse = false;
};

Meta read_meta(const std::string& c) {
  std::ifstream in(g_dir + "/" + c + ".meta");
  Meta m;
  int b = 0, s = 0, r = 0;
  in >> m.kind >> m.seq >> m.batch >> m.input >> m.hidden >> m.layers >> m.dirs >> b >> s >> r;
  m.bias = b, m.state = s, m.reverse = r;
  return m;
}

class RnnTorch : public ::testing::TestWithParam<const char*> {
 protected:
  NpyArray load(const std::string& name) { return load_npy(g_dir + "/" + GetParam() + "." + name + ".npy"); }

  // A parameter (or input) of the fixture's shape and contents.
  Tensor leaf(const std::string& name, bool param) {
    const NpyArray a = load(name);
    const Tensor t = param ? g_.param(name, a.shape) : g_.input(name, a.shape);
    std::copy(a.data.begin(), a.data.end(), g_.data(t));
    if (param) params_[name] = t;
    return t;
  }

  Tensor weighted_sum(Tensor y, Tensor w) {
    Tensor z = g_.mul(y, w);
    while (z.shape().rank > 1) z = g_.sum(z, 0);
    return g_.sum(z, 0);
  }

  void expect_close(const std::string& what, const std::vector<float>& got, const NpyArray& want) {
    ASSERT_EQ(got.size(), want.data.size()) << what;
    double worst = 0.0;
    for (size_t e = 0; e < got.size(); ++e) {
      const double err = std::abs(static_cast<double>(got[e]) - want.data[e]) / std::max(1.0, std::abs(double(want.data[e])));
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-4) << GetParam() << " " << what << "[" << e << "]: corun " << got[e] << ", torch "
                           << want.data[e];
    }
    if (std::getenv("CORUN_TEST_VERBOSE")) std::printf("  %-8s worst relative error %.2e\n", what.c_str(), worst);
  }

  Graph g_;
  std::map<std::string, Tensor> params_;
};

TEST_P(RnnTorch, OutputsAndGradientsMatch) {
  const Meta m = read_meta(GetParam());
  ASSERT_GT(m.layers, 0) << "no fixture " << GetParam() << " in " << g_dir;
  const bool lstm = m.kind == "lstm";
  rnn::RnnOptions opt;
  opt.direction = m.dirs == 2 ? rnn::Direction::bidirectional
                              : (m.reverse ? rnn::Direction::reverse : rnn::Direction::forward);
  Tensor below = leaf("x", true);
  std::vector<Tensor> hs, cs;
  rnn::RnnOutputs out;
  for (int l = 0; l < m.layers; ++l) {
    const std::string L = std::to_string(l);
    const Tensor w = leaf("W" + L, true), r = leaf("R" + L, true);
    const Tensor b = m.bias ? leaf("B" + L, true) : Tensor{};
    const Tensor h0 = m.state ? leaf("h0_" + L, true) : Tensor{};
    const Tensor c0 = m.state && lstm ? leaf("c0_" + L, true) : Tensor{};
    opt.name = "layer" + L;
    out = lstm ? rnn::lstm(g_, below, w, r, b, h0, c0, opt) : rnn::gru(g_, below, w, r, b, h0, opt);
    hs.push_back(out.y_h);
    if (lstm) cs.push_back(out.y_c);
    // The next layer's input [seq, batch, dirs * H]: Y's directions side by side (ONNX: Transpose + Reshape).
    const Shape sh{m.seq, m.batch, m.hidden};
    std::vector<Tensor> parts;
    for (int d = 0; d < m.dirs; ++d)
      parts.push_back(g_.reshape(m.dirs == 1 ? out.y : g_.slice(out.y, 1, d, 1), sh));
    below = parts.size() == 1 ? parts[0] : g_.concat(parts, 2);
  }
  const Tensor y_h = hs.size() == 1 ? hs[0] : g_.concat(hs, 0);
  const Tensor y_c = !lstm ? Tensor{} : cs.size() == 1 ? cs[0] : g_.concat(cs, 0);
  Tensor loss = g_.add(weighted_sum(out.y, leaf("wy", false)), weighted_sum(y_h, leaf("wh", false)));
  if (lstm) loss = g_.add(loss, weighted_sum(y_c, leaf("wc", false)));
  g_.keep(out.y), g_.keep(y_h);
  if (lstm) g_.keep(y_c);
  g_.backward(loss, {.sgd_update = false});

  Engine eng(test::test_config());
  eng.run(g_);
  expect_close("y", eng.read(g_, out.y), load("y"));
  expect_close("y_h", eng.read(g_, y_h), load("y_h"));
  if (lstm) expect_close("y_c", eng.read(g_, y_c), load("y_c"));
  for (const auto& [name, p] : params_) {
    const Tensor gr = g_.grad(p);
    ASSERT_TRUE(gr.valid()) << "no gradient for " << name;
    expect_close("d" + name, eng.read(g_, gr), load("d" + name));
  }
  eng.release(g_);
}

INSTANTIATE_TEST_SUITE_P(Torch, RnnTorch,
                         ::testing::Values("gru_bi2", "lstm_bi2", "gru_reverse_plain", "lstm_forward_plain"));

}  // namespace
}  // namespace corun

// Generates the fixtures, then runs the tests; 77 when PyTorch is not installed.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  namespace fs = std::filesystem;
  char tmpl[] = "/tmp/corun_rnn_torch.XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("mkdtemp");
    return 1;
  }
  corun::g_dir = tmpl;
  const std::string cmd = std::string(CORUN_PYTHON3) + " " + CORUN_RNN_FIXTURE_SCRIPT + " " + corun::g_dir;
  const int status = std::system(cmd.c_str());
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  int result = rc;
  if (rc == 0) result = RUN_ALL_TESTS();
  else if (rc != 77) std::fprintf(stderr, "test_rnn_torch: '%s' failed (exit %d)\n", cmd.c_str(), rc);
  std::error_code ec;
  fs::remove_all(corun::g_dir, ec);
  return result;
}
