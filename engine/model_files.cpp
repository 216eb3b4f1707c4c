#include "engine/model_files.hpp"

#include "base/memory_budget.hpp"
#include "engine/blas.hpp"

#include <starpu.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>

#include <atomic>
#include <csignal>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace corun::engine {

// StarPU's own lookup (src/core/perfmodel/perfmodel.c:484-506, src/common/utils.c:488-500).
std::filesystem::path sampling_dir() {
  if (const char* d = std::getenv("STARPU_PERF_MODEL_DIR")) return std::filesystem::path(d);
  const char* home = std::getenv("XDG_CACHE_HOME");
  if (home == nullptr) home = std::getenv("STARPU_HOME");
  if (home == nullptr) home = std::getenv("HOME");
  if (home == nullptr) return {};
  return std::filesystem::path(home) / ".starpu" / "sampling";
}

std::string climb_memory_path(const std::string& machine_key) {
  const std::filesystem::path dir = sampling_dir();
  if (dir.empty() || machine_key.empty()) return {};
  return (dir / ("corun-climbs." + machine_key + ".json")).string();
}

namespace {

constexpr unsigned kChildSeconds = 20;
std::atomic<bool> g_checked{false};

std::filesystem::path codelet_model_dir() {
  const std::filesystem::path d = sampling_dir();
  return d.empty() ? d : d / "codelets" / "45";
}

// Loads the file with StarPU's parser in a child process: the parser asserts (aborts) on malformed input,
// which must not take the caller down. Runs before starpu_init, while the process has one thread.
bool loads_cleanly(const std::string& path) {
  // OpenBLAS's atfork handler joins its pool threads, and under an address-space limit a pool thread may
  // be retrying a buffer that does not fit, forever (issue 52): then the fork never returns. corun itself
  // starts no pool there (cli/blas_pool.hpp); a program that does is not forked, and StarPU parses alone.
  if (blas::threads() > 1 && address_space_left() >= 0) return true;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return true;  // cannot check: let StarPU try
  if (pid == 0) {
    // Silence StarPU's assertion message; the parent prints its own warning. A crash must end the child
    // (StarPU's own SIGSEGV handler, if installed, would loop), and a stuck parse must not block the run.
    std::freopen("/dev/null", "w", stderr);
    std::signal(SIGSEGV, SIG_DFL);
    std::signal(SIGBUS, SIG_DFL);
    std::signal(SIGABRT, SIG_DFL);
    alarm(kChildSeconds);
    starpu_perfmodel_initialize();
    starpu_perfmodel model{};
    model.type = STARPU_HISTORY_BASED;
    const int ret = starpu_perfmodel_load_file(path.c_str(), &model);
    _exit(ret == 0 ? 0 : 3);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return true;
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return true;  // undecided: let StarPU try
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}


}  // namespace

void quarantine_corrupt_models(const char* machine_key, bool quiet) {
  // Only before the first starpu_init of the process: the child must start from a pristine StarPU (after
  // a shutdown, the forked copy of the perfmodel state is stale), and files written since were written
  // by StarPU itself.
  if (machine_key == nullptr || g_checked.exchange(true)) return;
#ifdef STARPU_SIMGRID
  // The check forks, and a forked SimGrid process cannot run StarPU's parser (its locks are simulated);
  // the simulated run's models are the files `corun simulate` wrote (its format is tested against the parser).
  return;
#endif
  const std::filesystem::path dir = codelet_model_dir();
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return;
  const std::string suffix = std::string(".") + machine_key;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("corun_", 0) == 0 && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      files.push_back(entry.path());
  }
  for (const auto& f : files) {
    if (loads_cleanly(f.string())) continue;
    const std::filesystem::path moved = f.string() + ".corrupt";
    std::filesystem::rename(f, moved, ec);
    if (!quiet || ec)
      std::fprintf(stderr,
                   "corun: warning: performance model %s is corrupt; %s, the op recalibrates during this run\n",
                   f.c_str(), ec ? ("could not move it aside: " + ec.message()).c_str()
                                 : ("moved to " + moved.filename().string()).c_str());
    if (ec) std::filesystem::remove(f, ec);
  }
}

BusFilesLock::BusFilesLock(const char* machine_key) {
  const std::filesystem::path dir = sampling_dir();
  if (dir.empty() || machine_key == nullptr) return;
  std::error_code ec;
  std::filesystem::create_directories(dir / "bus", ec);
  const std::string path = (dir / "bus" / (std::string(machine_key) + ".corun-lock")).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return;  // a read-only home: StarPU will not write the bus files there either
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

BusFilesLock::~BusFilesLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace corun::engine
