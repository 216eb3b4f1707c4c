// The model server of `corun serve` (serve/endpoint/): the request queue's batching rules on plain threads,
// then a real ONNX model on the Engine: concurrent requests of 1-3 rows come back with their own rows of the
// model's output, as a plain loop computes them, and bitwise the same as the same request when it runs alone;
// a full queue refuses with Overloaded; drain finishes what waits and refuses the rest.
#include "engine/engine_test_util.hpp"
#include "onnx/onnx_model_builder.hpp"

#include "serve/endpoint/model_server.hpp"
#include "serve/endpoint/request_queue.hpp"

#include <corun/engine.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <thread>

namespace corun::serve {
namespace {

PendingRequest request_of(int rows, bool priority = false) {
  PendingRequest r;
  r.rows = rows;
  r.priority = priority;
  return r;
}

TEST(RequestQueue, MergesWaitingRequestsUpToMaxRowsPriorityFirst) {
  RequestQueue q({.max_rows = 4, .max_queue = 8, .max_delay = std::chrono::microseconds(0)}, [] { return false; });
  std::vector<std::future<InferResult>> futures;
  for (int rows : {1, 2, 2}) futures.push_back(q.push(request_of(rows)));
  futures.push_back(q.push(request_of(1, /*priority*/ true)));
  std::optional<Batch> b = q.take();
  ASSERT_TRUE(b);
  ASSERT_EQ(b->requests.size(), 3u);  // the priority request, then 1 + 2 rows; the last 2 rows do not fit
  EXPECT_TRUE(b->requests[0].priority);
  EXPECT_EQ(b->rows, 4);
  EXPECT_TRUE(b->priority);
  b = q.take();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->rows, 2);
  EXPECT_EQ(q.waiting(), 0);
}

TEST(RequestQueue, AFullQueueRefusesAndAClosedOneDrainsThenEnds) {
  RequestQueue q({.max_rows = 1, .max_queue = 2, .max_delay = std::chrono::microseconds(0)}, [] { return false; });
  auto a = q.push(request_of(1));
  auto b = q.push(request_of(1));
  EXPECT_THROW(q.push(request_of(1)), Overloaded);
  q.close();
  EXPECT_THROW(q.push(request_of(1)), Overloaded);
  EXPECT_TRUE(q.take());
  EXPECT_TRUE(q.take());
  EXPECT_FALSE(q.take());
}

TEST(RequestQueue, ABusyMachineLetsABatchWaitForMoreRows) {
  RequestQueue q({.max_rows = 2, .max_queue = 8, .max_delay = std::chrono::microseconds(2'000'000)},
                 [] { return true; });
  auto first = q.push(request_of(1));
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto second = q.push(request_of(1));
    (void)second;
  });
  std::optional<Batch> b = q.take();
  late.join();
  ASSERT_TRUE(b);
  EXPECT_EQ(b->rows, 2);  // full before the delay ended: the late request joined
}

// y = relu(x W + b), x [N, 16], W [16, 8], with a symbolic batch N.
struct MlpFile {
  std::string path;
  std::vector<float> w, bias;
};

MlpFile write_mlp(const std::string& dir) {
  MlpFile f;
  std::mt19937_64 rng(5);
  f.w = test::uniform(rng, 16 * 8);
  f.bias = test::uniform(rng, 8);
  testing::OnnxModelBuilder m;
  m.input("x", {-1, 16});
  m.output("y", {-1, 8});
  m.init("W", {16, 8}, f.w);
  m.init("B", {8}, f.bias);
  m.node("MatMul", {"x", "W"}, {"xw"});
  m.node("Add", {"xw", "B"}, {"pre"});
  m.node("Relu", {"pre"}, {"y"});
  std::filesystem::create_directories(dir);
  f.path = dir + "/mlp.onnx";
  m.save(f.path);
  return f;
}

std::vector<float> reference(const MlpFile& f, const std::vector<float>& x, int rows) {
  std::vector<float> y(static_cast<size_t>(rows) * 8);
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < 8; ++j) {
      double s = f.bias[static_cast<size_t>(j)];
      for (int k = 0; k < 16; ++k) s += double(x[static_cast<size_t>(r * 16 + k)]) * f.w[static_cast<size_t>(k * 8 + j)];
      y[static_cast<size_t>(r * 8 + j)] = s > 0 ? static_cast<float>(s) : 0.0f;
    }
  return y;
}

std::vector<RequestTensor> inputs_of(const std::vector<float>& x, int rows) {
  return {RequestTensor{"x", {rows, 16}, x}};
}

class ModelServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("corun-model-server-" + std::to_string(::getpid()));
    file_ = write_mlp(dir_.string());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  MlpFile file_;
};

TEST_F(ModelServerTest, ConcurrentRequestsGetTheirOwnRowsAndTheBitsOfARunAlone) {
  Engine engine(test::test_config());
  ServerOptions options;
  options.max_batch = 4;
  auto server = ModelServer::from_onnx(engine, file_.path, "mlp", options);
  const ModelMetadata& meta = server->metadata();
  EXPECT_EQ(meta.inputs.at(0).shape, (std::vector<int64_t>{-1, 16}));
  EXPECT_EQ(meta.outputs.at(0).shape, (std::vector<int64_t>{-1, 8}));
  EXPECT_EQ(meta.max_batch, 4);

  constexpr int kRequests = 24;
  std::mt19937_64 rng(11);
  std::vector<std::vector<float>> xs;
  for (int i = 0; i < kRequests; ++i) xs.push_back(test::uniform(rng, (1 + i % 3) * 16));
  std::vector<std::future<InferResult>> futures(kRequests);
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c)
    clients.emplace_back([&, c] {
      for (int i = c; i < kRequests; i += 4) futures[static_cast<size_t>(i)] = server->infer(inputs_of(xs[static_cast<size_t>(i)], 1 + i % 3), i == 0);
    });
  for (auto& t : clients) t.join();
  std::vector<std::vector<float>> together;
  for (int i = 0; i < kRequests; ++i) {
    InferResult r = futures[static_cast<size_t>(i)].get();
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_EQ(r.outputs[0].shape, (std::vector<int64_t>{1 + i % 3, 8}));
    EXPECT_LT(test::relative_error(r.outputs[0].data, reference(file_, xs[static_cast<size_t>(i)], 1 + i % 3)), 1e-5) << i;
    EXPECT_GE(r.batch_rows, 1 + i % 3);
    together.push_back(r.outputs[0].data);
  }
  // One at a time: the same bits (this model's products and adds split outputs, never a row's sum).
  for (int i = 0; i < kRequests; ++i) {
    InferResult alone = server->infer(inputs_of(xs[static_cast<size_t>(i)], 1 + i % 3), false).get();
    EXPECT_TRUE(test::same_bits(alone.outputs[0].data, together[static_cast<size_t>(i)])) << i;
  }
  const ModelCounters c = server->counters();
  EXPECT_EQ(c.requests_ok, 2u * kRequests);
  EXPECT_GE(c.batches, 1u);
  EXPECT_EQ(c.in_flight_batches, 0);
}

TEST_F(ModelServerTest, ARequestOfTooManyRowsAndAFullQueueAreRefusedAndDrainFinishesTheRest) {
  Engine engine(test::test_config());
  ServerOptions options;
  options.max_batch = 2;
  options.max_queue = 1;
  options.max_in_flight = 1;
  auto server = ModelServer::from_onnx(engine, file_.path, "mlp", options);
  std::mt19937_64 rng(3);
  EXPECT_CORUN_ERROR(server->infer(inputs_of(test::uniform(rng, 3 * 16), 3), false), Status::invalid_argument,
                     "takes 1 to 2 rows per request");
  std::vector<std::future<InferResult>> accepted;
  int refused = 0;
  for (int i = 0; i < 200; ++i) {
    try {
      accepted.push_back(server->infer(inputs_of(test::uniform(rng, 16), 1), false));
    } catch (const Overloaded& e) {
      ++refused;
      EXPECT_GE(e.retry_after_s, 1);
    }
  }
  EXPECT_GT(refused, 0);  // one waiting request at most, one runner: 200 quick pushes overflow it
  server->drain();
  for (auto& f : accepted) EXPECT_EQ(f.get().outputs.at(0).shape, (std::vector<int64_t>{1, 8}));
  EXPECT_FALSE(server->ready());
  EXPECT_THROW(server->infer(inputs_of(test::uniform(rng, 16), 1), false), Overloaded);
  EXPECT_EQ(server->counters().requests_rejected, static_cast<uint64_t>(refused) + 1);
}

// corun serve --model: a model given as a graph builder (here the same MLP in corun's graph API).
TEST_F(ModelServerTest, AGraphBuilderServesLikeTheFile) {
  Engine engine(test::test_config());
  GraphBuilder build = [this](int rows) {
    auto g = std::make_shared<Graph>();
    const Tensor x = g->input("x", {rows, 16});
    const Tensor w = g->param("W", {16, 8});
    const Tensor b = g->param("B", {8});
    std::copy(file_.w.begin(), file_.w.end(), g->data(w));
    std::copy(file_.bias.begin(), file_.bias.end(), g->data(b));
    const Tensor y = g->relu(g->add(g->matmul(x, w), b), "y");
    g->keep(y);
    ServedGraph s;
    s.graph = g.get();
    s.inputs = {x};
    s.index_limits = {0};
    s.outputs = {y};
    s.output_names = {"y"};
    s.owner = g;
    return s;
  };
  ServerOptions options;
  options.max_batch = 3;
  auto server = ModelServer::from_graphs(engine, "mlp", build, options);
  EXPECT_EQ(server->metadata().outputs.at(0).shape, (std::vector<int64_t>{-1, 8}));
  std::mt19937_64 rng(21);
  for (int rows = 1; rows <= 3; ++rows) {
    const std::vector<float> x = test::uniform(rng, rows * 16);
    const InferResult r = server->infer(inputs_of(x, rows), false).get();
    EXPECT_LT(test::relative_error(r.outputs.at(0).data, reference(file_, x, rows)), 1e-5) << rows;
  }
}

TEST_F(ModelServerTest, AFileCorunCannotImportFailsAtStart) {
  Engine engine(test::test_config());
  const std::string bad = (dir_ / "bad.onnx").string();
  { std::ofstream(bad) << "not a model"; }
  EXPECT_THROW(ModelServer::from_onnx(engine, bad, "bad", {}), Error);
}

}  // namespace
}  // namespace corun::serve
