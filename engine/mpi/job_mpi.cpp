// engine/mpi/job.hpp with the MPI component: MPI's start and end, the collectives of the training loop
// (fingerprints, losses and stop requests), and the job-wide abort.
#include "engine/mpi/job.hpp"
#include "engine/mpi/starpu_mpi_ranks.hpp"

#include "base/check.hpp"
#include "engine/cross_ranks.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>

namespace corun::job {

namespace {
World g_world;
bool g_mpi_started = false;
std::unique_ptr<engine::CrossRanks> g_ranks;

void mpi_check(int ret, const char* what) {
  if (ret == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(ret, text, &len);
  detail::fail(Status::runtime_error, std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
}
}  // namespace

bool built_with_mpi() { return true; }

const World& start() {
  if (g_mpi_started || launcher_size() <= 1) return g_world;  // one process: MPI is not started at all
  int provided = 0;
  mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  g_mpi_started = true;
  // The errors of the collectives below come back as codes, so that they become corun::Error with a text.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &g_world.size), "MPI_Comm_size");
  CORUN_CHECK(provided >= MPI_THREAD_MULTIPLE, Status::invalid_config,
              "the MPI library provides thread level " << provided << ", corun needs MPI_THREAD_MULTIPLE ("
                                                       << MPI_THREAD_MULTIPLE
                                                       << "): the training loop's collectives run beside StarPU-MPI's "
                                                          "progress thread. Use Open MPI 4 (Debian's openmpi-bin)");
  if (g_world.size > 1) {
    g_ranks = make_starpu_mpi_ranks(g_world.rank, g_world.size);
    engine::set_cross_ranks(g_ranks.get());
  }
  return g_world;
}

const World& world() { return g_world; }

void check_same(const std::vector<Fingerprint>& mine) {
  if (!g_world.distributed()) return;
  std::vector<unsigned long long> all(mine.size() * static_cast<size_t>(g_world.size));
  std::vector<unsigned long long> own;
  for (const Fingerprint& f : mine) own.push_back(f.hash);
  mpi_check(MPI_Allgather(own.data(), static_cast<int>(own.size()), MPI_UNSIGNED_LONG_LONG, all.data(),
                          static_cast<int>(own.size()), MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD),
            "MPI_Allgather (fingerprints)");
  std::ostringstream wrong;
  for (size_t i = 0; i < mine.size(); ++i) {
    std::string ranks;
    for (int r = 1; r < g_world.size; ++r)
      if (all[static_cast<size_t>(r) * mine.size() + i] != all[i]) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    if (!ranks.empty()) wrong << (wrong.tellp() > 0 ? "; " : "") << "rank(s) " << ranks << " differ in " << mine[i].what;
  }
  CORUN_CHECK(wrong.str().empty(), Status::invalid_config,
              "the " << g_world.size << " ranks of this job do not run the same training: " << wrong.str()
                     << " (compared with rank 0). Start every rank with the same corun binary, arguments and "
                        "CORUN_* settings (mpirun -x VAR passes a variable to every rank)");
}

std::vector<double> all_gather(const std::vector<double>& mine) {
  if (!g_world.distributed()) return mine;
  std::vector<double> all(mine.size() * static_cast<size_t>(g_world.size));
  mpi_check(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                          static_cast<int>(mine.size()), MPI_DOUBLE, MPI_COMM_WORLD),
            "MPI_Allgather");
  return all;
}

void broadcast(float* data, size_t count) {
  if (!g_world.distributed()) return;
  // In pieces MPI's int count can hold.
  for (size_t done = 0; done < count;) {
    const int n = static_cast<int>(std::min<size_t>(count - done, size_t{1} << 30));
    mpi_check(MPI_Bcast(data + done, n, MPI_FLOAT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    done += static_cast<size_t>(n);
  }
}

long broadcast(long value) {
  if (!g_world.distributed()) return value;
  mpi_check(MPI_Bcast(&value, 1, MPI_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return value;
}

[[noreturn]] void abort_job(int exit_code) {
  if (g_mpi_started) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::exit(exit_code);
}

void finish() {
  if (!g_mpi_started) return;
  engine::set_cross_ranks(nullptr);
  g_ranks.reset();
  MPI_Finalize();
  g_mpi_started = false;
}

}  // namespace corun::job
