// The HTTP endpoint (serve/http/http_endpoint.hpp) over real sockets on 127.0.0.1, in front of a fake model
// (fake_backend.hpp): every route, every error status, and hostile clients (slowloris, connections dropped,
// bodies over the limit, overload), each bounded in count and time.
#include "serve/http/http_endpoint.hpp"

#include "fake_backend.hpp"

#include <corun/error.hpp>

#include "base/json.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

using namespace corun::serve;
using namespace corun::serve::http;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kBody =
    R"({"id":"7","inputs":[{"name":"x","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]},)"
    R"({"name":"ids","datatype":"INT64","shape":[1,2],"data":[3,4]}]})";

int connect_local(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class HttpEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EndpointOptions o;
    o.port = 0;
    o.max_body_bytes = 4096;
    o.threads = 4;
    o.read_timeout_s = 1;
    endpoint_ = std::make_unique<HttpEndpoint>(std::vector<ModelBackend*>{&model_}, o);
    port_ = endpoint_->bind();
    serving_ = std::thread([this] { endpoint_->serve(); });
  }
  void TearDown() override {
    endpoint_->stop();
    serving_.join();
  }

  httplib::Client client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10, 0);
    return c;
  }

  fakes::FakeBackend model_;
  std::unique_ptr<HttpEndpoint> endpoint_;
  int port_ = 0;
  std::thread serving_;
};

}  // namespace

TEST_F(HttpEndpointTest, AnswersEveryRoute) {
  httplib::Client c = client();
  EXPECT_EQ(c.Get("/v2/health/live")->status, 200);
  EXPECT_EQ(c.Get("/v2/health/ready")->status, 200);
  EXPECT_EQ(c.Get("/v2/models/double/ready")->status, 200);
  EXPECT_EQ(c.Get("/v2/models/double/versions/1/ready")->status, 200);
  const auto meta = c.Get("/v2/models/double");
  ASSERT_EQ(meta->status, 200);
  EXPECT_EQ(corun::json::parse(meta->body)["inputs"][0]["name"], "x");
  EXPECT_EQ(corun::json::parse(c.Get("/v2")->body)["name"], "corun");
  const auto r = c.Post("/v2/models/double/versions/1/infer", kBody, "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  const corun::json::Value doc = corun::json::parse(r->body);
  EXPECT_EQ(doc["id"], "7");
  EXPECT_EQ(doc["outputs"][0]["data"], corun::json::Value({2.0, 4.0, 6.0, 8.0}));
  EXPECT_EQ(doc["outputs"][1]["data"], corun::json::Value({7.0}));
  const auto metrics = c.Get("/metrics");
  EXPECT_NE(metrics->body.find("corun_requests_total{model=\"double\",status=\"ok\"} 1"), std::string::npos);
}

TEST_F(HttpEndpointTest, ErrorsAreJsonWithTheirStatus) {
  httplib::Client c = client();
  auto r = c.Post("/v2/models/double/infer", R"({"inputs":[)", "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(corun::json::parse(r->body)["error"].get<std::string>().find("invalid JSON"), std::string::npos);
  r = c.Post("/v2/models/nope/infer", kBody, "application/json");
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(corun::json::parse(r->body)["error"], "no model named 'nope'; this server serves: double");
  EXPECT_EQ(c.Get("/v2/models/double/versions/2")->status, 404);
  r = c.Get("/nowhere");
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find("no such path"), std::string::npos);
  r = c.Post("/v2/models/double/infer", std::string(5000, ' '), "application/json");
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("--max-body-mb"), std::string::npos);
  model_.overloaded = true;
  r = c.Post("/v2/models/double/infer", kBody, "application/json");
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->get_header_value("Retry-After"), "2");
  model_.overloaded = false;
  model_.fail = true;
  r = c.Post("/v2/models/double/infer", kBody, "application/json");
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("kernel failed"), std::string::npos);
}

// One byte every 200 ms: every read makes progress, yet the whole request takes too long. The watchdog cuts
// the connection after read_timeout_s (1 s) while another client is served.
TEST_F(HttpEndpointTest, CutsAClientThatSendsOneByteAtATime) {
  const int fd = connect_local(port_);
  ASSERT_GE(fd, 0);
  const std::string request = "GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(100, 'a');
  const auto start = Clock::now();
  bool cut = false;
  for (size_t i = 0; i < request.size() && Clock::now() - start < std::chrono::seconds(8); ++i) {
    if (send(fd, &request[i], 1, MSG_NOSIGNAL) != 1) {
      cut = true;
      break;
    }
    char b;
    if (recv(fd, &b, 1, MSG_DONTWAIT) == 0) {
      cut = true;
      break;
    }
    if (i == 3) {
      EXPECT_EQ(client().Get("/v2/health/live")->status, 200);  // the others are served meanwhile
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  close(fd);
  EXPECT_TRUE(cut);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(4));
  EXPECT_GE(endpoint_->connections_cut(), 1u);
}

TEST_F(HttpEndpointTest, SurvivesConnectionsOpenedAndDropped) {
  const auto start = Clock::now();
  int opened = 0;
  for (int i = 0; i < 1000 && Clock::now() - start < std::chrono::seconds(30); ++i) {
    const int fd = connect_local(port_);
    if (fd < 0) continue;
    ++opened;
    if (i % 2) send(fd, "POST /v2/models/double/infer HTTP/1.1\r\n", 39, MSG_NOSIGNAL);  // half a request
    close(fd);
  }
  EXPECT_GT(opened, 900);
  const auto r = client().Post("/v2/models/double/infer", kBody, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpEndpointTest, ATakenPortIsAClearError) {
  EndpointOptions o;
  o.port = port_;
  HttpEndpoint second(std::vector<ModelBackend*>{&model_}, o);
  try {
    second.bind();
    FAIL() << "a second server bound port " << port_;
  } catch (const corun::Error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port_) + " is in use"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("pick another --port"), std::string::npos);
  }
  o.host = "203.0.113.7";  // TEST-NET-3: never an address of this machine
  HttpEndpoint elsewhere(std::vector<ModelBackend*>{&model_}, o);
  EXPECT_THROW(elsewhere.bind(), corun::Error);
}

TEST_F(HttpEndpointTest, StopAnswersTheRequestsInFlight) {
  model_.delay = std::chrono::milliseconds(600);
  int status = 0;
  std::thread request([&] {
    const auto r = client().Post("/v2/models/double/infer", kBody, "application/json");
    status = r ? r->status : -1;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = Clock::now();
  endpoint_->stop();
  serving_.join();
  request.join();
  EXPECT_EQ(status, 200);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_LT(connect_local(port_), 0);  // nothing listens any more
  serving_ = std::thread([] {});      // for TearDown
}
