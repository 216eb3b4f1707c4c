// corun train --model dcgan: flags, the run loop, the per-iteration table, the summary, --json, --save and
// the sample grid (cli/sessions/dcgan.hpp says why this model has its own loop).
#include "cli/args.hpp"
#include "cli/fashion_mnist.hpp"
#include "cli/lstm_session.hpp"
#include "cli/output_paths.hpp"
#include "cli/sessions/dcgan.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json.hpp"
#include "base/parse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace corun::cli {
namespace {

constexpr int kSamples = 64;  // the grid: 8 x 8 samples
constexpr int kSampleColumns = 8;

const std::vector<FlagSpec> kFlags = {
    {"--model", true, "dcgan"},
    {"--iters", true, "training iterations, each a D step and a G step (default 200)"},
    {"--batch", true, "images per step (default 64)"},
    {"--filters", true, "width of D's first and G's last hidden layer (default 64: 64/128/256 as the paper)"},
    {"--lr", true, "Adam learning rate of both networks (default 0.0002)"},
    {"--optimizer", true, "adam | adamw (default adam)"},
    {"--beta1", true, "Adam first-moment decay in [0, 1) (default 0.5, as the paper)"},
    {"--beta2", true, "Adam second-moment decay in [0, 1) (default 0.999)"},
    {"--seed", true, "seed of the weights, the noise and the shuffling (default 42)"},
    {"--data", true, std::string("Fashion-MNIST directory (default ") + kFashionMnistDir + ")"},
    {"--samples", true, "write an 8x8 grid of generated samples (fixed noise) to this .png file at the end"},
    {"--json", true, "write config, machine info, per-iteration times and D and G losses to this file"},
    {"--save", true, "save both networks (parameters, batch-norm statistics, Adam moments) as <name>.npy here"},
    {"--load", true, "load both networks from a --save directory before training"},
    {"--progress-every", true, "print a table row every N iterations (default 1: every iteration)"},
    {"--allow-non-finite", false, "keep training when a loss is not finite (by default the run stops, exit 1)"},
    {"--help", false, "show this help"},
};

// corun train flags this model does not take: named as such, not as unknown flags.
const char* const kOtherTrainFlags[] = {"--size",
                                        "--layers",
                                        "--seq",
                                        "--hidden",
                                        "--image",
                                        "--cell",
                                        "--epochs",
                                        "--eval-images",
                                        "--onnx",
                                        "--checkpoint",
                                        "--checkpoint-every",
                                        "--resume",
                                        "--trace",
                                        "--dump-grads",
                                        "--dump-inputs",
                                        "--fuse-elementwise",
                                        "--momentum",
                                        "--nesterov",
                                        "--weight-decay",
                                        "--eps",
                                        "--lr-schedule",
                                        "--warmup",
                                        "--weight-grad-rows",
                                        "--weight-transpose-uses"};

std::string usage() {
  return "usage: corun train --model dcgan [--iters N] [--batch B] [--samples FILE.png] [options]\n"
         "A DCGAN on Fashion-MNIST (28x28 padded to 32x32): D and G trained alternately, two graphs\n"
         "(docs/models.md#dcgan).\n" +
         describe(kFlags) + "exit codes: 0 done, 1 runtime or configuration error, 2 usage error\n";
}

float unit_interval(const Args& args, const char* flag, float fallback) {
  if (!args.has(flag)) return fallback;
  const std::string text = args.str(flag, "");
  const auto v = parse::real(text);
  if (!v || !(*v >= 0.0) || !(*v < 1.0))
    throw UsageError(std::string(flag) + " must be a number in [0, 1), got '" + text + "'");
  return static_cast<float>(*v);
}

struct Options {
  models::DcganConfig config;
  long iters = 200;
  long every = 1;
  std::string data, samples, json, save, load;
  bool allow_non_finite = false;
};

Options parse(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    for (const char* f : kOtherTrainFlags)
      if (std::strcmp(argv[i], f) == 0 ||
          (std::strncmp(argv[i], f, std::strlen(f)) == 0 && argv[i][std::strlen(f)] == '='))
        throw UsageError(
            std::string(f) + " does not apply to --model dcgan (corun train --model dcgan --help lists its flags)", f);
  Args args(argc, argv, 2, kFlags);
  Options o;
  models::DcganConfig& c = o.config;
  o.iters = args.positive("--iters", o.iters);
  c.batch = static_cast<int>(args.positive("--batch", c.batch));
  c.filters = static_cast<int>(args.positive("--filters", c.filters));
  if (c.filters > 4096) throw UsageError("--filters must be at most 4096, got " + std::to_string(c.filters));
  c.learning_rate = static_cast<float>(args.positive_real("--lr", c.learning_rate));
  const std::string opt = args.str("--optimizer", "adam");
  if (opt != "adam" && opt != "adamw")
    throw UsageError("--optimizer must be adam or adamw for dcgan, got '" + opt + "'");
  c.optimizer = opt == "adam" ? Optimizer::adam : Optimizer::adamw;
  c.beta1 = unit_interval(args, "--beta1", c.beta1);
  c.beta2 = unit_interval(args, "--beta2", c.beta2);
  c.seed = static_cast<uint64_t>(args.positive("--seed", static_cast<long>(c.seed)));
  o.every = args.positive("--progress-every", 1);
  o.data = args.str("--data", kFashionMnistDir);
  o.samples = args.str("--samples", "");
  o.json = args.str("--json", "");
  o.save = args.str("--save", "");
  o.load = args.str("--load", "");
  o.allow_non_finite = args.has("--allow-non-finite");
  if (args.has("--samples") && (o.samples.size() < 5 || o.samples.compare(o.samples.size() - 4, 4, ".png") != 0))
    throw UsageError("--samples must name a .png file, got '" + o.samples + "'");
  return o;
}

double first_or_nan(const std::vector<double>& v) {
  return v.empty() ? NAN : v.front();
}
double last_or_nan(const std::vector<double>& v) {
  return v.empty() ? NAN : v.back();
}

const char* optimizer_name(const models::DcganConfig& c) { return c.optimizer == Optimizer::adam ? "adam" : "adamw"; }

// Everything that can fail without the model fails now, before the data is read and the graphs are built.
void check_before_building(const Options& o, const Config& engine_config) {
  check_config(engine_config);
  check_output_file("--samples", o.samples);
  check_output_file("--json", o.json);
  check_output_dir("--save", o.save);
  CORUN_CHECK(planned_replicas(engine_config) == 1, Status::invalid_config,
              "corun train --model dcgan runs one solver: unset CORUN_REPLICAS and set CORUN_NUMA=off");
}

void print_plan(const Options& o) {
  const models::DcganConfig& c = o.config;
  std::fprintf(stderr,
               "corun train: dcgan: %ld iteration%s of batch %d (a D step and a G step each), 32x32 px, "
               "filters %d%s\n",
               o.iters, o.iters == 1 ? "" : "s", c.batch, c.filters,
               c.filters >= 64 && c.batch >= 64 ? "; seconds per iteration on 2 cores (--filters 16 "
                                                  "--batch 16 for a quick look)"
                                                : "");
}

// Every iteration's numbers, for the summary and --json.
struct History {
  std::vector<double> ms, copy_ms, loss_d, loss_g, d_real, d_fake;
  int tasks = 0;
  void add(const DcganSession::Step& s) {
    ms.push_back(s.ms);
    copy_ms.push_back(s.copy_ms);
    loss_d.push_back(s.loss_d);
    loss_g.push_back(s.loss_g);
    d_real.push_back(s.d_real);
    d_fake.push_back(s.d_fake);
    tasks = s.tasks;
  }
};

// The iterations, a table row every --progress-every; false when a loss was not finite (and that is not
// allowed): the run then stops with nothing written.
bool train_loop(DcganSession& session, Engine& engine, const Options& o, History& h) {
  std::printf("| iteration | ms | loss D | loss G | D(x) | D(G(z)) |\n|---:|---:|---:|---:|---:|---:|\n");
  for (long it = 0; it < o.iters; ++it) {
    const DcganSession::Step s = session.step(engine, static_cast<uint64_t>(it));
    h.add(s);
    if ((it + 1) % o.every == 0 || it + 1 == o.iters || it == 0)
      std::printf("| %ld | %.1f | %.4f | %.4f | %.3f | %.3f |\n", it + 1, s.ms, static_cast<double>(s.loss_d),
                  static_cast<double>(s.loss_g), static_cast<double>(s.d_real), static_cast<double>(s.d_fake));
    std::fflush(stdout);
    if (!o.allow_non_finite && !(std::isfinite(s.loss_d) && std::isfinite(s.loss_g))) {
      std::fprintf(stderr,
                   "corun: error: a loss is not finite at iteration %ld (D %g, G %g): training stopped; no --json, "
                   "--save or --samples output is written. Lower --lr, check the --load parameters, or pass "
                   "--allow-non-finite to keep training.\n",
                   it + 1, static_cast<double>(s.loss_d), static_cast<double>(s.loss_g));
      return false;
    }
  }
  return true;
}

// The summary of the run (the first iteration, which also registers data, left out of the times).
struct Summary {
  double med = 0.0, best = 0.0, copy_med = 0.0;
};

Summary print_summary(const Options& o, const History& h, const EngineInfo& info) {
  const models::DcganConfig& c = o.config;
  const std::vector<double> timed(h.ms.size() > 1 ? h.ms.begin() + 1 : h.ms.begin(), h.ms.end());
  Summary r;
  r.med = median(timed);
  r.best = *std::min_element(timed.begin(), timed.end());
  std::printf(
      "\nDCGAN train: batch=%d filters=%d latent=%d image=32x32 lr=%g optimizer=%s beta1=%g beta2=%g "
      "data=Fashion-MNIST\n\n",
      c.batch, c.filters, c.latent, static_cast<double>(c.learning_rate), optimizer_name(c),
      static_cast<double>(c.beta1), static_cast<double>(c.beta2));
  std::printf(
      "| iterations | median ms/iter | min ms/iter | tasks/iter | policy | workers | first loss D | final loss D "
      "| first loss G | final loss G |\n|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|\n");
  std::printf("| %ld | %.2f | %.2f | %d | %s | %d | %.4f | %.4f | %.4f | %.4f |\n", o.iters, r.med, r.best, h.tasks,
              info.policy.c_str(), info.workers, first_or_nan(h.loss_d), last_or_nan(h.loss_d),
              first_or_nan(h.loss_g), last_or_nan(h.loss_g));
  if (h.ms.size() > 1) std::printf("(timing excludes the first iteration of this run)\n");
  r.copy_med = median(h.copy_ms);
  std::printf("weight copies between the two graphs: %.2f ms per iteration (median; %.2f%% of the median iteration)\n",
              r.copy_med, 100.0 * r.copy_med / r.med);
  return r;
}

void write_json(const Options& o, const History& h, const Summary& r, const EngineInfo& info) {
  const models::DcganConfig& c = o.config;
  json::Value config = {{"model", "dcgan"},
                        {"batch", c.batch},
                        {"filters", c.filters},
                        {"latent", c.latent},
                        {"image", c.image},
                        {"learning_rate", static_cast<double>(c.learning_rate)},
                        {"optimizer", optimizer_name(c)},
                        {"beta1", static_cast<double>(c.beta1)},
                        {"beta2", static_cast<double>(c.beta2)},
                        {"seed", static_cast<long>(c.seed)},
                        {"iters", o.iters},
                        {"data", "fashion-mnist"}};
  json::Value result = {
      {"config", std::move(config)},
      {"machine", {{"nproc", machine::nproc()}, {"cpu_model", machine::cpu_model()}, {"git_sha", machine::git_sha()}}},
      {"engine",
       {{"policy", info.policy},
        {"workers", info.workers},
        {"kernels", info.kernels},
        {"starpu_version", info.starpu_version}}},
      {"ms_per_iter", h.ms},
      {"loss_d", h.loss_d},
      {"loss_g", h.loss_g},
      {"d_real", h.d_real},
      {"d_fake", h.d_fake},
      {"summary",
       {{"median_ms", r.med},
        {"min_ms", r.best},
        {"copy_ms", r.copy_med},
        {"tasks_per_iter", h.tasks},
        {"first_loss_d", first_or_nan(h.loss_d)},
        {"final_loss_d", last_or_nan(h.loss_d)},
        {"first_loss_g", first_or_nan(h.loss_g)},
        {"final_loss_g", last_or_nan(h.loss_g)}}}};
  write_file_atomically(o.json, json::dump(result) + "\n", "the --json results");
}

}  // namespace

bool dcgan_requested(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--model=dcgan") == 0) return true;
    if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "dcgan") == 0) return true;
  }
  return false;
}

int train_dcgan(int argc, char** argv) {
  Options o;
  Config engine_config = Config::from_env();
  try {
    for (int i = 2; i < argc; ++i)
      if (std::strcmp(argv[i], "--help") == 0) {
        std::cout << usage();
        return 0;
      }
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    return usage_error("train", e, kFlags, usage());
  }
  check_before_building(o, engine_config);
  if (policy_help_requested(engine_config)) return 0;
  print_plan(o);
  DcganSession session(o.config, o.data);
  if (!o.load.empty()) session.load(o.load, o.allow_non_finite);
  engine_config.parallel_ops_auto_by_default = true;  // as corun train: groups only where the models predict a gain
  Engine engine(engine_config);
  const EngineInfo& info = engine.info();
  History history;
  if (!train_loop(session, engine, o, history)) {
    session.release(engine);
    return 1;
  }
  const Summary summary = print_summary(o, history, info);
  if (!o.samples.empty()) {
    session.write_samples(engine, o.samples, kSamples, kSampleColumns);
    std::printf("samples: %s (8x8 grid of G(z), fixed noise from --seed)\n", o.samples.c_str());
  }
  if (!o.save.empty()) session.save(engine, o.save);
  if (!o.json.empty()) write_json(o, history, summary, info);
  session.release(engine);
  return 0;
}

}  // namespace corun::cli
