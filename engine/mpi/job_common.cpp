// What both builds of engine/mpi/job.hpp share: the launcher's rank count and the fingerprints' hashes.
#include "engine/mpi/job.hpp"

#include "base/check.hpp"
#include "base/hash.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

namespace corun::job {

namespace {
// A launcher variable's value when it is a positive count; 0 otherwise.
int count_from(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return *end == '\0' && n > 0 && n < (1L << 24) ? static_cast<int>(n) : 0;
}
}  // namespace

int launcher_size() {
  // Open MPI's mpirun, MPICH/Hydra and Slurm's PMI2, and srun --mpi=pmix (which sets no size of its own).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const int n = count_from(name)) return n;
  if (std::getenv("PMIX_RANK") != nullptr)
    if (const int n = count_from("SLURM_STEP_NUM_TASKS")) return n;
  return 1;
}

uint64_t hash_text(const std::string& text, uint64_t seed) { return hash::fnv1a(text, seed); }

uint64_t executable_hash() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  CORUN_CHECK(in.good(), Status::io_error, "cannot read /proc/self/exe to fingerprint this binary across ranks");
  uint64_t h = hash::kFnvBasis;
  std::string block(1 << 16, '\0');
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    h = hash_text(block.substr(0, static_cast<size_t>(in.gcount())), h);
  }
  return h;
}

}  // namespace corun::job
