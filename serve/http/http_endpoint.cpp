// The HTTP endpoint (http_endpoint.hpp) on cpp-httplib: routes, limits, binding and the drain.
#include "serve/http/http_endpoint.hpp"

#include "base/check.hpp"
#include "serve/http/connection_watchdog.hpp"
#include "serve/http/listen_address.hpp"
#include "serve/http/metrics_text.hpp"
#include "serve/http/protocol.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

namespace corun::serve::http {

namespace {

// A model's URL, with an optional version: /v2/models/{name}[/versions/{v}]. The name and version may not hold
// a '/'; httplib has decoded the path.
const std::string kModel = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
const char* const kJson = "application/json";

void reply_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(error_body(message), kJson);
}

// What an error status without a body of ours says (httplib's own refusals: an unknown path, a body over the
// limit, a request it could not parse).
std::string status_message(const httplib::Request& req, int status, size_t max_body_bytes) {
  if (status == 404)
    return "no such path: " + req.method + " " + req.path +
           " (the endpoint serves /v2, /v2/health/{live,ready}, /v2/models/{name}[/ready|/infer] and /metrics)";
  if (status == 413)
    return "the request body is larger than the server's limit of " + std::to_string(max_body_bytes) +
           " bytes (--max-body-mb)";
  if (status == 405) return req.method + " is not allowed on " + req.path;
  if (status == 400) return "malformed HTTP request";
  return "HTTP status " + std::to_string(status);
}

}  // namespace

class HttpEndpoint::Impl {
 public:
  Impl(std::vector<ModelBackend*> models, EndpointOptions options) : options_(std::move(options)) {
    for (ModelBackend* m : models) {
      CORUN_CHECK(!models_.count(m->metadata().name), Status::invalid_argument,
                  "two served models are named '" << m->metadata().name << "': name them apart (--onnx NAME=FILE)");
      models_[m->metadata().name] = m;
    }
    configure();
    routes();
  }

  int bind();
  void serve();
  void stop();
  uint64_t cut() const { return watchdog_ ? watchdog_->cut() : 0; }

 private:
  void configure();
  void routes();
  ModelBackend* find_model(const httplib::Request& req, httplib::Response& res);
  void read_and_infer(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read);
  void infer(const httplib::Request& req, const std::string& body, httplib::Response& res);
  void health_ready(httplib::Response& res);
  void metrics(httplib::Response& res);

  EndpointOptions options_;
  std::map<std::string, ModelBackend*> models_;
  httplib::Server server_;
  std::unique_ptr<ConnectionWatchdog> watchdog_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> phase_{0};  // serve(): 0 not called, 1 serving, 2 returned
};

void HttpEndpoint::Impl::configure() {
  const int threads = options_.threads;
  server_.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server_.set_payload_max_length(options_.max_body_bytes);
  server_.set_read_timeout(options_.read_timeout_s, 0);
  server_.set_write_timeout(options_.write_timeout_s, 0);
  server_.set_keep_alive_timeout(options_.keep_alive_timeout_s);
  server_.set_keep_alive_max_count(static_cast<size_t>(options_.keep_alive_max_requests));
  // httplib writes a response's headers and body in separate sends: with Nagle's algorithm on (Debian's build
  // keeps CPPHTTPLIB_TCP_NODELAY false) the body waits for the client's delayed ACK, 40 ms on Linux, which
  // bench/serve_load.sh measured on every request of a 1 ms model.
  server_.set_tcp_nodelay(true);
  // SO_REUSEADDR (a restart finds its port free while old connections linger), never httplib's default
  // SO_REUSEPORT, which would let a second server bind a port this one listens on instead of failing.
  server_.set_socket_options([this](socket_t fd) {
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd_ = fd;
  });
  const size_t max_body = options_.max_body_bytes;
  server_.set_error_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) res.set_content(error_body(status_message(req, res.status, max_body)), kJson);
  });
  server_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    reply_error(res, 500, what);
  });
}

void HttpEndpoint::Impl::routes() {
  server_.Post(kModel + "/infer", [this](const httplib::Request& req, httplib::Response& res,
                                         const httplib::ContentReader& read) { read_and_infer(req, res, read); });
  server_.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  server_.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) { health_ready(res); });
  server_.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(json::dump(server_metadata_json()), kJson);
  });
  server_.Get(kModel, [this](const httplib::Request& req, httplib::Response& res) {
    if (ModelBackend* m = find_model(req, res)) res.set_content(json::dump(model_metadata_json(m->metadata())), kJson);
  });
  server_.Get(kModel + "/ready", [this](const httplib::Request& req, httplib::Response& res) {
    ModelBackend* m = find_model(req, res);
    if (m && !(m->ready() && !stopping_)) reply_error(res, 400, "model '" + m->metadata().name + "' is not ready");
  });
  server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) { metrics(res); });
}

// The model of the URL, or nothing with a 404 naming the models served.
ModelBackend* HttpEndpoint::Impl::find_model(const httplib::Request& req, httplib::Response& res) {
  const std::string name = req.matches[1];
  const auto it = models_.find(name);
  std::string served;
  for (const auto& [n, m] : models_) served += (served.empty() ? "" : ", ") + n;
  if (it == models_.end()) {
    reply_error(res, 404, "no model named '" + name + "'; this server serves: " + served);
    return nullptr;
  }
  const std::string version = req.matches[2];
  const std::vector<std::string>& versions = it->second->metadata().versions;
  if (!version.empty() && std::find(versions.begin(), versions.end(), version) == versions.end()) {
    reply_error(res, 404, "model '" + name + "' has no version '" + version + "'; its versions: " +
                              (versions.empty() ? std::string("none") : versions[0]));
    return nullptr;
  }
  return it->second;
}

// The body is read here rather than by httplib, which refuses an application/x-www-form-urlencoded body over
// 8 KiB with 413 (its compiled-in form limit): the content type `curl -d` and Python's urllib send unless told
// otherwise. The watchdog starts counting the handler only once the body is in, so a body sent one byte a
// second is cut like slow headers. httplib still applies --max-body-mb (413) as it reads.
void HttpEndpoint::Impl::read_and_infer(const httplib::Request& req, httplib::Response& res,
                                        const httplib::ContentReader& read) {
  std::string body;
  if (!read([&body](const char* data, size_t n) {
        body.append(data, n);
        return true;
      }))
    return;  // httplib set the status: 413 over the limit, 400 for a stream that broke off
  const std::string peer = req.remote_addr + ":" + std::to_string(req.remote_port);
  if (watchdog_) watchdog_->handler_started(peer);
  infer(req, body, res);
  if (watchdog_) watchdog_->handler_finished(peer);
}

void HttpEndpoint::Impl::infer(const httplib::Request& req, const std::string& body, httplib::Response& res) {
  ModelBackend* m = find_model(req, res);
  if (!m) return;
  try {
    std::optional<size_t> json_length;
    if (req.has_header("Inference-Header-Content-Length"))
      json_length = parse_header_length(req.get_header_value("Inference-Header-Content-Length"), body.size());
    InferRequest request = parse_infer_request(body, json_length, m->metadata());
    std::future<InferResult> pending = m->infer(std::move(request.inputs), request.priority);
    const InferResponse response = format_infer_response(m->metadata(), request, pending.get());
    if (response.json_length) res.set_header("Inference-Header-Content-Length", std::to_string(*response.json_length));
    res.set_content(response.body, response.content_type);
  } catch (const ProtocolError& e) {
    reply_error(res, 400, e.what());
  } catch (const Overloaded& e) {
    res.set_header("Retry-After", std::to_string(std::max(1, e.retry_after_s)));
    reply_error(res, 503, e.what());
  } catch (const std::exception& e) {
    reply_error(res, 500, "model '" + m->metadata().name + "' failed: " + e.what());
  }
}

// 200 when every model can run requests and the server is not draining; else 400, which the protocol (4xx)
// reads as false.
void HttpEndpoint::Impl::health_ready(httplib::Response& res) {
  if (stopping_) return reply_error(res, 400, "the server is draining (it received SIGTERM)");
  for (const auto& [name, m] : models_)
    if (!m->ready()) return reply_error(res, 400, "model '" + name + "' is not ready");
  res.status = 200;
}

void HttpEndpoint::Impl::metrics(httplib::Response& res) {
  std::vector<ModelSample> samples;
  for (const auto& [name, m] : models_) samples.push_back({name, m->counters()});
  res.set_content(prometheus_text(samples), kPrometheusContentType);
}

int HttpEndpoint::Impl::bind() {
  const int port = options_.port == 0 ? server_.bind_to_any_port(options_.host)
                                      : (server_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
  CORUN_CHECK(port > 0, Status::invalid_argument, bind_failure(options_.host, options_.port));
  // httplib listens with a backlog of 5: a burst of connections then waits for the client's SYN retry (1 s).
  // Listening again on the bound socket sets the kernel's usual queue length instead.
  ::listen(listen_fd_, SOMAXCONN);
  watchdog_ = std::make_unique<ConnectionWatchdog>(listen_fd_, port, std::chrono::seconds(options_.read_timeout_s));
  return port;
}

// stop() may come before serve() starts listening (a signal right after bind): httplib's stop() does nothing
// then, so serve() looks at stopping_ after announcing itself, and stop() waits for a serve() that announced
// itself to be listening before it stops it. One of the two sees the other.
void HttpEndpoint::Impl::serve() {
  phase_ = 1;
  if (!stopping_) server_.listen_after_bind();
  phase_ = 2;
}

void HttpEndpoint::Impl::stop() {
  stopping_ = true;
  while (phase_ == 1 && !server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_.stop();
}

HttpEndpoint::HttpEndpoint(std::vector<ModelBackend*> models, EndpointOptions options)
    : impl_(std::make_unique<Impl>(std::move(models), std::move(options))) {}
HttpEndpoint::~HttpEndpoint() = default;
int HttpEndpoint::bind() { return impl_->bind(); }
void HttpEndpoint::serve() { impl_->serve(); }
void HttpEndpoint::stop() { impl_->stop(); }
uint64_t HttpEndpoint::connections_cut() const { return impl_->cut(); }

}  // namespace corun::serve::http
