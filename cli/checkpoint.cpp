#include "cli/checkpoint.hpp"

#include "cli/non_finite.hpp"

#include <corun/npy.hpp>

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/hash.hpp"
#include "base/json.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

namespace corun::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "corun-checkpoint";
constexpr int kVersion = 1;
constexpr const char* kPrefix = "ckpt-";

std::string ckpt_name(long iteration) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s%09ld", kPrefix, iteration);
  return buf;
}

// The iteration of a "ckpt-<9 digits>" directory name, or -1.
long parse_name(const std::string& name) {
  if (name.size() != 5 + 9 || name.rfind(kPrefix, 0) != 0) return -1;
  long v = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

std::string fnv1a64(const float* data, size_t n) {
  const uint64_t h = hash::fnv1a(data, n * sizeof(float), hash::kFnvShortBasis);
  char buf[20];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, h);
  return buf;
}

// fsync of a file or directory: what makes a rename durable (the data and the directory entries).
void sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  CORUN_CHECK(fd >= 0, Status::io_error, "cannot open '" << path << "' to sync it: " << std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  CORUN_CHECK(rc == 0, Status::io_error, "fsync of '" << path << "' failed: " << std::strerror(err));
}

// The test-only hook CORUN_TEST_PAUSE_IN_CHECKPOINT (Config::test_pause_in_checkpoint): the process stops
// itself at `point` of a checkpoint write, and the test that set it kills it there.
// "stuck" stops at "files" too, then never returns once continued: a stuck task, for the grace-period test.
void pause_for_test(const Engine& engine, const char* point) {
  const std::string& when = engine.config().test_pause_in_checkpoint;
  if (when == point) ::raise(SIGSTOP);
  if (when == "stuck" && std::string(point) == "files") {
    ::raise(SIGSTOP);
    for (;;) ::pause();  // only the grace-period alarm (or SIGKILL) ends this
  }
}

// Removes a directory tree without ever leaving a partly removed one under its own name: it is renamed
// to a dot-name first (leftovers of a crash are cleared at the next start).
void remove_tree(const fs::path& dir, const Engine* engine = nullptr) {
  const fs::path aside = dir.parent_path() / (".trash-" + dir.filename().string() + "-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::rename(dir, aside, ec);
  if (!ec && engine) pause_for_test(*engine, "prune");
  fs::remove_all(ec ? dir : aside, ec);
}

// What a checkpoint holds: the parameters, then the optimizer state (momentum velocities), which a resumed
// run needs to take bitwise the same steps.
std::vector<Tensor> saved_tensors(const Graph& g) {
  std::vector<Tensor> t = g.params();
  for (Tensor s : g.optimizer_state()) t.push_back(s);
  return t;
}

// The update rule of a run ("sgd", "sgd_momentum", "adam", "adamw"): the identity's optimizer entry (corun
// train adds one for anything but the model's default), else what the graph's state says.
std::string optimizer_kind(const Graph& g, const RunIdentity& identity) {
  for (const auto& [k, v] : identity)
    if (k == "optimizer") return v == "momentum" ? "sgd_momentum" : v;
  return g.optimizer_state().empty() ? "sgd" : "sgd_momentum";
}

// The newest "ckpt-<iteration>" in `dir`, or -1 when none.
long newest_iteration(const std::string& dir) {
  long newest = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const long it = parse_name(e.path().filename().string());
    if (it < 0) continue;
    // Something named like a checkpoint that is not a directory (a file, a FIFO, a dangling link) is never
    // skipped in favour of an older checkpoint: resuming from there would silently repeat iterations.
    std::error_code type_ec;
    CORUN_CHECK(e.is_directory(type_ec), Status::io_error,
                "--resume: '" << e.path().string() << "' is named like a checkpoint but is not a directory; move it out of "
                              << dir << " (the newest checkpoint directory then is the one resumed)");
    newest = std::max(newest, it);
  }
  CORUN_CHECK(!ec, Status::io_error, "--checkpoint: cannot list '" << dir << "': " << ec.message());
  return newest;
}

// One checkpoint being read: its directory, its manifest and the hint every "this one is bad" message ends with.
struct CheckpointFiles {
  std::string path, manifest, hint;
};

// The manifest's format, version and iteration (which must be the directory's, `expected`).
long check_manifest_header(const json::Node& m, const CheckpointFiles& f, long expected) {
  const std::string& format = m.at("format").string();
  CORUN_CHECK(format == kFormat, Status::io_error, f.manifest << ": format '" << format << "' is not " << kFormat);
  const long version = m.at("version").integer(1, 1000);
  CORUN_CHECK(version == kVersion, Status::io_error,
              f.manifest << ": checkpoint format version " << version << ", this corun reads version " << kVersion);
  const long iteration = m.at("iteration").integer(0, 1L << 40);
  CORUN_CHECK(iteration == expected, Status::io_error,
              f.manifest << ": iteration " << iteration << " does not match the directory name" << f.hint);
  return iteration;
}

// The checkpoint was written by this run: the same optimizer and every identity entry equal, none missing
// or extra.
void check_same_run(const json::Node& m, const std::string& path, const Graph& g, const RunIdentity& identity) {
  // The optimizer first: its state files would not match either, and this says why.
  const std::string saved_kind = m.at("optimizer").at("kind").string();
  const std::string kind = optimizer_kind(g, identity);
  CORUN_CHECK(saved_kind == kind, Status::invalid_config,
              path << " was written by the " << saved_kind << " optimizer, this run uses " << kind
                   << ": resume with the checkpoint's --optimizer and hyper-parameters, or use another --checkpoint "
                      "directory");
  std::map<std::string, std::string> saved;
  for (const auto& [k, v] : m.at("config").members()) saved[k] = v.string();
  for (const auto& [k, v] : identity) {
    const auto it = saved.find(k);
    CORUN_CHECK(it != saved.end(), Status::invalid_config,
                path << " has no '" << k << "' in its config: not a checkpoint of this run");
    CORUN_CHECK(it->second == v, Status::invalid_config,
                path << " was written with " << k << " = " << it->second << ", this run has " << k << " = " << v
                     << ": resume with the same settings, or use another --checkpoint directory");
    saved.erase(it);
  }
  CORUN_CHECK(saved.empty(), Status::invalid_config,
              path << " has config entry '" << saved.begin()->first << "' this run does not know");
}

// The losses and times of the `s.iteration` completed iterations.
void read_history(const json::Node& m, const CheckpointFiles& f, CheckpointState& s) {
  for (const json::Node& v : m.at("losses").items()) s.losses.push_back(v.number());
  for (const json::Node& v : m.at("ms_per_iter").items()) s.ms.push_back(v.number());
  CORUN_CHECK(static_cast<long>(s.losses.size()) == s.iteration && static_cast<long>(s.ms.size()) == s.iteration,
              Status::io_error,
              f.manifest << ": " << s.losses.size() << " losses and " << s.ms.size() << " times for " << s.iteration
                         << " iterations" << f.hint);
}

// Every one of `params`' files, with its shape and the data the hash was taken of, in the order of `params`.
std::vector<NpyArray> load_checked_tensors(const json::Node& m, const CheckpointFiles& f,
                                           const std::vector<Tensor>& params) {
  std::map<std::string, std::pair<std::string, std::string>> files;  // name -> file, hash
  for (const json::Node& p : m.at("params").items())
    files[p.at("name").string()] = {p.at("file").string(), p.at("fnv1a64").string()};
  CORUN_CHECK(files.size() == params.size(), Status::io_error,
              f.manifest << " lists " << files.size() << " parameters and optimizer state tensors, the model has "
                         << params.size() << f.hint);
  std::vector<NpyArray> loaded;
  for (Tensor t : params) {
    const auto it = files.find(t.name());
    CORUN_CHECK(it != files.end(), Status::io_error, f.manifest << " has no parameter '" << t.name() << "'" << f.hint);
    CORUN_CHECK(it->second.first.find('/') == std::string::npos, Status::io_error,
                f.manifest << ": parameter file '" << it->second.first << "' is not a plain file name");
    const std::string file = f.path + "/" + it->second.first;
    NpyArray a = load_npy(file);
    CORUN_CHECK(
        a.shape == t.shape(), Status::io_error,
        file << " has shape " << a.shape.str() << ", parameter '" << t.name() << "' is " << t.shape().str() << f.hint);
    CORUN_CHECK(fnv1a64(a.data.data(), a.data.size()) == it->second.second, Status::io_error,
                file << " does not match the checksum in " << f.manifest << " (damaged)" << f.hint);
    loaded.push_back(std::move(a));
  }
  return loaded;
}

}  // namespace

Checkpoints::Checkpoints(const std::string& dir) : dir_(dir) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  CORUN_CHECK(!ec && fs::is_directory(dir_), Status::io_error,
              "--checkpoint: cannot create directory '" << dir_ << "'" << (ec ? ": " + ec.message() : ""));
  const std::string lock = dir_ + "/.lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  CORUN_CHECK(lock_fd_ >= 0, Status::io_error, "--checkpoint: cannot create '" << lock << "': " << std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    detail::fail(Status::io_error, "--checkpoint: another corun is using '" + dir_ +
                                       "' (it holds " + lock + "); give each training run its own directory");
  }
  // We hold the lock: dot-entries are leftovers of interrupted writes and removals of a killed run.
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".tmp-", 0) == 0 || name.rfind(".trash-", 0) == 0) fs::remove_all(e.path(), ec);
  }
}

Checkpoints::~Checkpoints() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

std::optional<CheckpointState> Checkpoints::load_newest(Graph& g, const RunIdentity& identity) {
  const long newest = newest_iteration(dir_);
  if (newest < 0) return std::nullopt;

  CheckpointFiles f;
  f.path = dir_ + "/" + ckpt_name(newest);
  f.manifest = f.path + "/manifest.json";
  f.hint = " (to resume from an older checkpoint, move " + f.path + " out of " + dir_ + ")";
  const json::Value doc = json::parse_file(f.manifest);
  const json::Node m(doc, f.manifest + ": ");
  CheckpointState s;
  s.iteration = check_manifest_header(m, f, newest);
  check_same_run(m, f.path, g, identity);
  read_history(m, f, s);
  const std::vector<Tensor> params = saved_tensors(g);
  std::vector<NpyArray> loaded = load_checked_tensors(m, f, params);
  // Only now, with everything checked, overwrite the graph's parameters.
  for (size_t i = 0; i < params.size(); ++i) std::copy(loaded[i].data.begin(), loaded[i].data.end(), g.data(params[i]));
  loaded_ = f.path;
  newest_ = newest;
  return s;
}

std::string Checkpoints::write(Graph& g, Engine& engine, const RunIdentity& identity, const CheckpointState& state,
                               double learning_rate, const std::string& data_generator, unsigned long long seed) {
  const std::string name = ckpt_name(state.iteration);
  const std::string final_path = dir_ + "/" + name;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(final_path, ec))) {  // the same iteration of the same run: the same content
    CORUN_CHECK(fs::is_directory(final_path, ec), Status::io_error,
                "cannot write checkpoint '" << final_path << "': something that is not a checkpoint directory is "
                                            << "in its place; move it away");
    newest_ = std::max(newest_, state.iteration);
    return final_path;
  }
  const std::string tmp = dir_ + "/.tmp-" + name + "-" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  CORUN_CHECK(fs::create_directory(tmp, ec), Status::io_error,
              "cannot create checkpoint directory '" << tmp << "': " << ec.message());
  try {
    write_into(tmp, final_path, g, engine, identity, state, learning_rate, data_generator, seed);
  } catch (...) {
    remove_tree(tmp);  // a failed write (a full disk) leaves nothing behind; the older checkpoints stay
    throw;
  }
  newest_ = std::max(newest_, state.iteration);

  // Keep the newest kKeep checkpoints.
  std::vector<long> all;
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (const long it = parse_name(e.path().filename().string()); it >= 0 && e.is_directory()) all.push_back(it);
  std::sort(all.rbegin(), all.rend());
  for (size_t i = kKeep; i < all.size(); ++i) remove_tree(fs::path(dir_) / ckpt_name(all[i]), &engine);
  return final_path;
}

void Checkpoints::write_into(const std::string& tmp, const std::string& final_path, Graph& g, Engine& engine,
                             const RunIdentity& identity, const CheckpointState& state, double learning_rate,
                             const std::string& data_generator, unsigned long long seed) {

  const std::vector<Tensor> state_tensors = g.optimizer_state();
  json::Value config = json::Value::object();
  for (const auto& [k, v] : identity) config[k] = v;
  json::Value state_names = json::Value::array();  // saved with the parameters below (plain SGD has none)
  for (Tensor t : state_tensors) state_names.push_back(t.name());
  json::Value params = json::Value::array();
  for (Tensor p : saved_tensors(g)) {
    const std::vector<float> v = engine.read(g, p);
    // A checkpoint is what a run resumes from: a nan in it would only replay the failure.
    CORUN_CHECK(first_non_finite(v) == v.size(), Status::runtime_error,
                "not writing checkpoint " << final_path << ": '" << p.name()
                                          << "' holds NaN or inf (the training diverged); the older checkpoints in "
                                          << dir_ << " are kept");
    const std::string file = p.name() + ".npy";
    save_npy(tmp + "/" + file, p.shape(), v.data());
    params.push_back({{"name", p.name()}, {"file", file}, {"fnv1a64", fnv1a64(v.data(), v.size())}});
  }
  pause_for_test(engine, "files");
  const json::Value manifest = {
      {"format", kFormat},
      {"version", kVersion},
      {"iteration", state.iteration},
      {"config", std::move(config)},
      // The data position and "RNG state": the generator is counter-based, batch k depends on its seed and k.
      {"data", {{"generator", data_generator}, {"seed", seed}, {"next_batch", state.iteration}}},
      {"optimizer",
       {{"kind", optimizer_kind(g, identity)},
        {"learning_rate", learning_rate},
        {"state", std::move(state_names)}}},
      {"params", std::move(params)},
      {"losses", state.losses},
      {"ms_per_iter", state.ms}};
  write_file_atomically(tmp + "/manifest.json", json::dump(manifest) + "\n",
                        "the checkpoint manifest");  // last: a directory with a manifest has every file
  pause_for_test(engine, "manifest");
  sync_path(tmp, true);
  CORUN_CHECK(std::rename(tmp.c_str(), final_path.c_str()) == 0, Status::io_error,
              "cannot rename '" << tmp << "' to '" << final_path << "': " << std::strerror(errno));
  sync_path(dir_, true);
}

}  // namespace corun::cli
