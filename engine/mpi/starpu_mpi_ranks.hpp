// engine/mpi/starpu_mpi_ranks.hpp — the engine's cross-rank reduction on StarPU-MPI (engine/cross_ranks.hpp).
#pragma once

#include "engine/cross_ranks.hpp"

#include <memory>

namespace corun::job {

/// The reduction of rank `rank` of `size` (MPI already started on MPI_COMM_WORLD).
std::unique_ptr<engine::CrossRanks> make_starpu_mpi_ranks(int rank, int size);

}  // namespace corun::job
