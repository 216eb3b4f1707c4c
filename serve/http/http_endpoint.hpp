// serve/http/http_endpoint.hpp — `corun serve`'s HTTP/REST endpoint: the KServe v2 / Triton inference protocol over
// cpp-httplib, in front of one ModelBackend per served model (docs/serving-endpoint.md).
//
//   HttpEndpoint endpoint({model_a, model_b}, options);
//   const int port = endpoint.bind();     // corun::Error: the port is taken, the host is not this machine's
//   std::thread stopper([&] { wait_for_sigterm(); endpoint.stop(); });
//   endpoint.serve();                     // returns after stop(), once the requests in flight are answered
//
// Routes: POST /v2/models/{name}[/versions/{v}]/infer, GET /v2/health/live, /v2/health/ready, /v2,
// /v2/models/{name}[/versions/{v}], /v2/models/{name}[/versions/{v}]/ready and /metrics. Errors are JSON
// {"error": "..."}: 400 a malformed request (naming the field), 404 an unknown model or path, 413 a body over
// the limit, 503 with Retry-After when a model's queue is full, 500 a run that failed.
//
// Bounds: a fixed pool of worker threads serves the connections; a connection must send each request whole (and
// read its response) within read_timeout_s, whatever the pace of its bytes (ConnectionWatchdog), may stay idle
// keep_alive_timeout_s between requests and send keep_alive_max_requests of them.
#pragma once

#include "serve/endpoint/model_backend.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace corun::serve::http {

struct EndpointOptions {
  std::string host = "127.0.0.1";  ///< --host: only this address listens
  int port = 8000;                 ///< --port; 0 picks a free one (bind() returns it)
  size_t max_body_bytes = size_t{64} << 20;  ///< --max-body-mb: a larger body is refused with 413
  int threads = 16;                ///< --http-threads: connections served at once (the others wait their turn)
  int read_timeout_s = 5;          ///< --read-timeout-s: to receive one request (and send its response)
  int write_timeout_s = 5;         ///< one send that makes no progress
  int keep_alive_timeout_s = 2;    ///< idle time between two requests of one connection
  int keep_alive_max_requests = 100;
};

class HttpEndpoint {
 public:
  /// Serves `models` (not owned; they outlive the endpoint), by ModelMetadata::name, which must be unique.
  HttpEndpoint(std::vector<ModelBackend*> models, EndpointOptions options);
  ~HttpEndpoint();

  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  /// Binds options.host:options.port and returns the port bound. Throws corun::Error naming the address and what
  /// to do: a port in use ("pick another --port"), a host that is not an address of this machine, no permission.
  int bind();
  /// Serves until stop(); then answers the requests already being handled and returns. Call bind() first.
  void serve();
  /// Stops accepting connections and makes serve() return once the requests in flight are answered; /v2/health/
  /// ready says false meanwhile. Thread-safe, not async-signal-safe (a signal handler wakes a thread that calls it).
  void stop();

  /// Connections the slow-client watchdog cut so far (for tests and the log).
  uint64_t connections_cut() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corun::serve::http
