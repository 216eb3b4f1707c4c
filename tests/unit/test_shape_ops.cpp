// The issue-19 shape ops' builders (transpose, softmax, log_softmax, batch_matmul, dropout, gather):
// output shapes, ONNX defaults (reversed perm, negative axes, numpy's 1-D matmul rules, dropout as the
// identity at inference) and the errors naming op, node and shapes; plus the dropout mask's properties
// and the kernels' index errors.
#include <corun/error.hpp>
#include <corun/graph.hpp>

#include "codelets/dropout/dropout.hpp"
#include "codelets/gather/gather.hpp"
#include "graphs/graph_impl.hpp"

#include "common/error_matchers.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

using corun::Graph;
using corun::Shape;
using corun::Status;
using corun::Tensor;

TEST(ShapeOps, TransposeShapes) {
  Graph g;
  const Tensor x = g.input("x", {2, 3, 5, 7});
  EXPECT_EQ(g.transpose(x, {0, 2, 1, 3}).shape(), (Shape{2, 5, 3, 7}));
  EXPECT_EQ(g.transpose(x, {3, 0, 1, 2}).shape(), (Shape{7, 2, 3, 5}));
  EXPECT_EQ(g.transpose(x, {}).shape(), (Shape{7, 5, 3, 2}));  // ONNX's default reverses
}

TEST(ShapeOps, TransposeBadPerm) {
  Graph g;
  const Tensor x = g.input("x", {2, 3, 5});
  EXPECT_CORUN_ERROR(g.transpose(x, {0, 1, 1}, "t1"), Status::invalid_argument, "transpose 't1'", "(0, 1, 1)",
                     "[2, 3, 5]", "not a permutation");
  EXPECT_CORUN_ERROR(g.transpose(x, {0, 3, 1}, "t2"), Status::invalid_argument, "transpose 't2'", "not a permutation");
  EXPECT_CORUN_ERROR(g.transpose(x, {1, 0}, "t3"), Status::invalid_argument, "transpose 't3'", "2 entries",
                     "[2, 3, 5]");
}

TEST(ShapeOps, SoftmaxAxes) {
  Graph g;
  const Tensor x = g.input("x", {4, 6, 3});
  const Shape sx = x.shape();  // a copy: adding values may move the graph's storage
  const Tensor y = g.softmax(x, -2, "sm");
  EXPECT_EQ(y.shape(), sx);
  EXPECT_EQ(g.impl().nodes.back().call.i[0], 1);  // -2 counts from the end
  EXPECT_EQ(g.log_softmax(x).shape(), sx);
  EXPECT_EQ(g.impl().nodes.back().call.i[0], 2);  // the default: the last dim
  EXPECT_CORUN_ERROR(g.softmax(x, 3, "bad"), Status::invalid_argument, "softmax 'bad'", "dimension 3", "[4, 6, 3]");
  EXPECT_CORUN_ERROR(g.log_softmax(x, -4, "bad2"), Status::invalid_argument, "log_softmax 'bad2'");
}

TEST(ShapeOps, BatchMatmulShapes) {
  Graph g;
  const Tensor q = g.input("q", {2, 4, 9, 8});
  const Tensor kt = g.input("kt", {2, 4, 8, 9});
  EXPECT_EQ(g.batch_matmul(q, kt).shape(), (Shape{2, 4, 9, 9}));  // attention scores
  EXPECT_EQ(g.batch_matmul(q, g.input("w", {8, 5})).shape(), (Shape{2, 4, 9, 5}));
  EXPECT_EQ(g.batch_matmul(g.input("a", {3, 1, 9, 8}), g.input("b", {1, 5, 8, 2})).shape(), (Shape{3, 5, 9, 2}));
  // numpy's 1-D rules
  const Tensor v = g.input("v", {8});
  EXPECT_EQ(g.batch_matmul(v, kt).shape(), (Shape{2, 4, 9}));
  EXPECT_EQ(g.batch_matmul(q, v).shape(), (Shape{2, 4, 9}));
  EXPECT_EQ(g.batch_matmul(v, v).shape(), (Shape{1}));
}

TEST(ShapeOps, BatchMatmulErrors) {
  Graph g;
  const Tensor a = g.input("a", {2, 3, 4});
  EXPECT_CORUN_ERROR(g.batch_matmul(a, g.input("b", {2, 5, 6}), "mm"), Status::invalid_argument, "batch_matmul 'mm'",
                     "inner dimensions differ", "[2, 3, 4]", "[2, 5, 6]");
  EXPECT_CORUN_ERROR(g.batch_matmul(a, g.input("c", {3, 4, 6}), "mm2"), Status::invalid_argument, "batch_matmul 'mm2'",
                     "do not broadcast", "[3, 4, 6]");
  EXPECT_CORUN_ERROR(g.batch_matmul(a, g.input("d", {7}), "mm3"), Status::invalid_argument, "batch_matmul 'mm3",
                     "inner dimensions differ");
}

TEST(ShapeOps, DropoutIsTheIdentityAtInference) {
  Graph g;
  const Tensor x = g.input("x", {3, 4});
  const size_t nodes = g.impl().nodes.size();
  EXPECT_EQ(g.dropout(x, 0.5f, 1, false), x);
  EXPECT_EQ(g.dropout(x, 0.0f, 1, true), x);
  EXPECT_EQ(g.impl().nodes.size(), nodes);
}

TEST(ShapeOps, DropoutTrainingNodeAndStep) {
  Graph g;
  const Tensor x = g.input("x", {3, 4});
  const Tensor y = g.dropout(x, 0.25f, 42, true, Tensor(), "drop");
  EXPECT_EQ(y.shape(), x.shape());
  const Tensor step = g.find(Graph::kDropoutStep);  // made by the builder when no step is given
  EXPECT_EQ(step.shape(), (Shape{1}));
  EXPECT_EQ(g.data(step)[0], 0.0f);
  const auto& call = g.impl().nodes.back().call;
  EXPECT_EQ(call.i[0], 42);
  EXPECT_EQ(call.f, 0.25f);
  g.dropout(y, 0.5f, 43, true, Tensor(), "drop2");  // the second dropout reads the same step input
  EXPECT_EQ(g.impl().nodes.back().buffers[1], step.id());
  EXPECT_CORUN_ERROR(g.dropout(x, 1.0f, 1, true, Tensor(), "d1"), Status::invalid_argument, "dropout 'd1'",
                     "outside [0, 1)");
  EXPECT_CORUN_ERROR(g.dropout(x, 0.5f, 1, true, g.input("s2", {2}), "d2"), Status::invalid_argument, "dropout 'd2'",
                     "step", "[2]");
}

TEST(ShapeOps, DropoutMaskIsAPureHash) {
  using corun::codelets::dropout_keep;
  int kept = 0, differ = 0;
  const int n = 200000;
  for (int e = 0; e < n; ++e) {
    const bool k = dropout_keep(7, 3, static_cast<uint64_t>(e), 0.3f);
    kept += k;
    EXPECT_EQ(k, dropout_keep(7, 3, static_cast<uint64_t>(e), 0.3f));
    differ += k != dropout_keep(7, 4, static_cast<uint64_t>(e), 0.3f);  // the next iteration's mask
  }
  EXPECT_NEAR(kept / double(n), 0.7, 0.005);
  EXPECT_NEAR(differ / double(n), 2 * 0.3 * 0.7, 0.005);  // independent masks differ with p = 2 r (1 - r)
  EXPECT_FALSE(dropout_keep(1, 0, 0, 0.9999999f) && dropout_keep(1, 0, 1, 0.9999999f) &&
               dropout_keep(1, 0, 2, 0.9999999f));
  const float bad = 2.5f;
  EXPECT_CORUN_ERROR(corun::codelets::dropout_step(&bad, "dropout"), Status::invalid_argument, "dropout", "2.5",
                     "iteration");
}

TEST(ShapeOps, GatherShapes) {
  Graph g;
  const Tensor x = g.input("x", {4, 6, 3});
  EXPECT_EQ(g.gather(x, g.input("i1", {5}), 0).shape(), (Shape{5, 6, 3}));
  EXPECT_EQ(g.gather(x, g.input("i2", {2, 5}), 1).shape(), (Shape{4, 2, 5, 3}));
  EXPECT_EQ(g.gather(x, g.input("i3", {1}), -2, true).shape(), (Shape{4, 3}));  // a time step
  EXPECT_EQ(g.gather(g.input("v", {9}), g.input("i4", {1}), 0, true).shape(), (Shape{1}));
}

TEST(ShapeOps, GatherErrors) {
  Graph g;
  const Tensor x = g.input("x", {4, 6, 3});
  EXPECT_CORUN_ERROR(g.gather(x, g.input("i1", {5}), 3, false, "g1"), Status::invalid_argument, "gather 'g1'",
                     "dimension 3", "[4, 6, 3]");
  EXPECT_CORUN_ERROR(g.gather(x, g.input("i2", {2}), 0, true, "g2"), Status::invalid_argument, "gather 'g2'",
                     "scalar index", "[2]");
  EXPECT_CORUN_ERROR(g.gather(x, g.input("i3", {2, 2, 2}), 1, false, "g3"), Status::invalid_argument, "gather 'g3'",
                     "5 dims");
  const float idx[] = {1.0f, -7.0f};
  EXPECT_CORUN_ERROR(corun::codelets::gather_index(idx, 1, 6, "gather"), Status::invalid_argument, "gather", "-7",
                     "position 1", "[-6, 6)");
  EXPECT_EQ(corun::codelets::gather_index(idx, 0, 6, "gather"), 1);
  const float neg = -1.0f;
  EXPECT_EQ(corun::codelets::gather_index(&neg, 0, 6, "gather"), 5);
}

}  // namespace
