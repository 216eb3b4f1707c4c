// corun serve --onnx [NAME=]FILE ... --model NAME[:SIZE] ...: serves ONNX models and built-in models over the KServe v2 / Triton HTTP inference protocol
// (docs/serving-endpoint.md). One Engine for the process, one ModelServer (queue, dynamic batching, co-running
// batches) per model, and the HTTP endpoint of serve/http/ in front of them. SIGTERM or SIGINT drains: the
// endpoint stops accepting, the requests in flight are answered, every model's queue is run empty, exit 0.
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/infer_inputs.hpp"
#include "cli/serve_builtin.hpp"

#include <corun/engine.hpp>

#include "serve/endpoint/model_server.hpp"
#include "serve/http/http_endpoint.hpp"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"--onnx", true, "[NAME=]FILE: an ONNX model to serve, as NAME (default: the file's stem); repeat for more models"},
    {"--model", true,
     "NAME[:SIZE]: a built-in model to serve (cifar-quick, pathnet, googlenet, lstm, phased-lstm, wide-deep; its "
     "random seeded weights, as corun infer --model); repeat for more"},
    {"--port", true, "the TCP port to listen on (default 8000; 0 picks a free one, printed on the first line)"},
    {"--host", true, "the address to listen on (default 127.0.0.1: this machine only)"},
    {"--max-batch", true, "rows of one request and of one merged batch (default 8)"},
    {"--max-queue-delay-us", true, "how long a batch waits for more requests once the first arrives (default 500)"},
    {"--max-queue", true, "requests waiting per model; one more is answered 503 with Retry-After (default 256)"},
    {"--max-body-mb", true, "the largest request body in MiB; a larger one is answered 413 (default 64)"},
    {"--http-threads", true, "connections served at once; the others wait their turn (default 16)"},
    {"--read-timeout-s", true,
     "seconds a connection has to send one whole request and read its response (default 5: slow clients are cut)"},
    {"--max-in-flight", true,
     "batches of one model running at once (default: one per worker, so that the load decides: one batch on every "
     "core when it is low, a batch per core when it is high)"},
    {"--keep-layouts", false,
     "keep every tensor in NCHW instead of oneDNN's blocked layout between convolutions (as corun infer --onnx)"},
    {"--allow-non-finite", false, "import initializers holding NaN or inf (by default such a model is refused)"},
    help_flag(),
};

std::string usage() {
  return "usage: corun serve (--onnx [NAME=]FILE | --model NAME[:SIZE]) [...] [--port N] [--host ADDR] [--max-batch N]\n"
         "                   [--max-queue-delay-us N] [--max-queue N] [--max-in-flight N] [--max-body-mb N]\n"
         "                   [--http-threads N] [--read-timeout-s N] [--keep-layouts] [--allow-non-finite]\n" +
         describe(kFlags) +
         "routes: POST /v2/models/NAME/infer, GET /v2/models/NAME, /v2/models/NAME/ready, /v2/health/live,\n"
         "        /v2/health/ready, /v2, /metrics (KServe v2; docs/serving-endpoint.md)\n"
         "environment: CORUN_SCHED and the rest of docs/env-vars.md\n"
         "exit codes: 0 drained after SIGTERM or SIGINT, 1 a bad model or a port that cannot be bound, 2 usage error\n";
}

struct ServedModel {
  std::string name, file;  // an ONNX file, or
  std::string builtin;     // a built-in model's NAME[:SIZE]
};

struct ServeOptions {
  std::vector<ServedModel> models;
  serve::ServerOptions server;
  serve::http::EndpointOptions endpoint;
  bool block_layouts = true;
  bool help = false;
};

// "NAME=FILE" or "FILE" (named after its stem).
ServedModel served_model(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq != std::string::npos && spec.find('/') > eq) {
    if (eq == 0 || eq + 1 == spec.size()) throw UsageError("--onnx " + spec + ": give NAME=FILE or FILE", "--onnx");
    return {spec.substr(0, eq), spec.substr(eq + 1), ""};
  }
  return {std::filesystem::path(spec).stem().string(), spec, ""};
}

// Takes every --onnx and --model out of argv (Args refuses a repeated flag); the rest stays for Args.
std::vector<char*> take_models(int argc, char** argv, std::vector<ServedModel>& models) {
  std::vector<char*> rest(argv, argv + std::min(argc, 2));
  for (int i = 2; i < argc; ++i) {
    const bool onnx = std::strcmp(argv[i], "--onnx") == 0, builtin = std::strcmp(argv[i], "--model") == 0;
    if (!onnx && !builtin) {
      rest.push_back(argv[i]);
      continue;
    }
    if (i + 1 >= argc) throw UsageError(std::string(argv[i]) + (onnx ? " needs a value: [NAME=]FILE" : " needs a value: NAME[:SIZE]"));
    const std::string spec = argv[++i];
    if (onnx) {
      models.push_back(served_model(spec));
    } else {
      builtin_graph_builder(spec);  // an unknown name or size fails here, before anything starts
      models.push_back({spec.substr(0, spec.find(':')), "", spec});
    }
    for (size_t k = 0; k + 1 < models.size(); ++k)
      if (models[k].name == models.back().name)
        throw UsageError("two models are named '" + models.back().name +
                             "'; name ONNX models apart with --onnx NAME=FILE",
                         onnx ? "--onnx" : "--model");
  }
  return rest;
}

ServeOptions parse_options(int argc, char** argv) {
  ServeOptions o;
  std::vector<char*> rest = take_models(argc, argv, o.models);
  const Args args(static_cast<int>(rest.size()), rest.data(), 2, kFlags);
  if (args.has("--help")) {
    o.help = true;
    return o;
  }
  if (o.models.empty()) throw UsageError("--onnx FILE or --model NAME is required: the model to serve", "--onnx");
  const long port = args.non_negative("--port", 8000);
  if (port > 65535) throw UsageError("--port needs a TCP port, 0 to 65535, got " + std::to_string(port), "--port");
  o.endpoint.port = static_cast<int>(port);
  o.endpoint.host = args.str("--host", "127.0.0.1");
  o.server.max_batch = static_cast<int>(std::min(args.positive("--max-batch", 8), 4096L));
  o.server.max_queue_delay_us = args.non_negative("--max-queue-delay-us", 500);
  o.server.max_queue = static_cast<int>(std::min(args.positive("--max-queue", 256), 1000000L));
  o.server.allow_non_finite = args.has("--allow-non-finite");
  o.server.max_in_flight = args.has("--max-in-flight") ? static_cast<int>(std::min(args.positive("--max-in-flight", 1), 4096L)) : 0;
  o.block_layouts = !args.has("--keep-layouts");
  o.endpoint.max_body_bytes = static_cast<size_t>(std::min(args.positive("--max-body-mb", 64), 65536L)) << 20;
  o.endpoint.threads = static_cast<int>(std::min(args.positive("--http-threads", 16), 1024L));
  o.endpoint.read_timeout_s = static_cast<int>(std::min(args.positive("--read-timeout-s", 5), 3600L));
  return o;
}

// SIGTERM and SIGINT write one byte into a pipe (all a handler may safely do); a thread waiting on it stops the
// endpoint, whose stop() is not async-signal-safe.
int g_stop_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int) {
  const char byte = 1;
  const ssize_t ignored = write(g_stop_pipe[1], &byte, 1);
  (void)ignored;
}

void install_stop_handlers() {
  if (g_stop_pipe[0] < 0 && pipe(g_stop_pipe) != 0) throw std::runtime_error("corun serve: cannot create a pipe");
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

std::string listening_line(const ServeOptions& o, int port, const Engine& engine) {
  std::string names;
  for (const ServedModel& m : o.models) names += (names.empty() ? "" : ", ") + m.name;
  return "corun serve: listening on http://" + o.endpoint.host + ":" + std::to_string(port) + " (models: " + names +
         "; policy " + engine.info().policy + ", " + std::to_string(engine.info().workers) +
         " workers; max batch " + std::to_string(o.server.max_batch) + ", max queue " +
         std::to_string(o.server.max_queue) + ")\n";
}

}  // namespace

int serve(int argc, char** argv) {
  ServeOptions o;
  try {
    o = parse_options(argc, argv);
  } catch (const UsageError& e) {
    return usage_error("serve", e, kFlags, usage());
  }
  if (o.help) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  Config config = Config::from_env();
  if (policy_help_requested(config)) return 0;
  check_config(config);
  // The plan step of corun infer --onnx: batch norms folded and activations fused into the convolutions before
  // them, activations between oneDNN's convolutions in its blocked layout (the engine runs it on every instance).
  config.fold_batch_norm = config.fuse_conv_activation = true;
  config.block_layouts = o.block_layouts;

  Engine engine(config);
  std::vector<std::unique_ptr<serve::ModelServer>> models;  // destroyed before the engine
  std::vector<serve::ModelBackend*> backends;
  for (const ServedModel& m : o.models) {
    models.push_back(m.builtin.empty()
                         ? serve::ModelServer::from_onnx(engine, m.file, m.name, o.server)
                         : serve::ModelServer::from_graphs(engine, m.name, builtin_graph_builder(m.builtin), o.server));
    backends.push_back(models.back().get());
  }
  serve::http::HttpEndpoint endpoint(backends, o.endpoint);
  const int port = endpoint.bind();
  install_stop_handlers();  // after the Engine: starpu_init replaces the SIGINT handler
  std::thread stopper([&endpoint] {
    char byte = 0;
    while (read(g_stop_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    endpoint.stop();
  });
  std::fputs(listening_line(o, port, engine).c_str(), stdout);
  std::fflush(stdout);
  endpoint.serve();
  on_stop_signal(0);  // serve() returned on its own: wake the stopper
  stopper.join();
  std::fputs("corun serve: stopped accepting; draining the models' queues\n", stderr);
  for (auto& m : models) m->drain();
  std::fputs("corun serve: drained, exiting\n", stderr);
  return 0;
}

}  // namespace corun::cli
