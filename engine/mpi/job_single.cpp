// engine/mpi/job.hpp in a build without the MPI component: one process is the whole job.
#include "engine/mpi/job.hpp"

#include "base/check.hpp"

#include <cstdlib>

namespace corun::job {

namespace {
World g_world;
}

bool built_with_mpi() { return false; }

const World& start() {
  const int launched = launcher_size();
  CORUN_CHECK(launched <= 1, Status::invalid_config,
              "this process was started as one of " << launched
                  << " ranks (mpirun/srun), but this corun was built without MPI: every rank would train alone "
                     "and write the same files. Install Open MPI (apt-get install openmpi-bin libopenmpi-dev) and "
                     "reconfigure with -DCORUN_MPI=ON (docs/batch-jobs.md#several-nodes), or run one process");
  return g_world;
}

const World& world() { return g_world; }
void check_same(const std::vector<Fingerprint>&) {}
std::vector<double> all_gather(const std::vector<double>& mine) { return mine; }
void broadcast(float*, size_t) {}
long broadcast(long value) { return value; }
[[noreturn]] void abort_job(int exit_code) { std::exit(exit_code); }
void finish() {}

}  // namespace corun::job
