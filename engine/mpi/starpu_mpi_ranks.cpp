// The cross-rank gradient sum on StarPU-MPI: detached point-to-point requests on the data handles of each
// rank's in-process sums, along the binary rank tree of engine/cross_ranks.hpp, then the total back down it.
//
// Why point-to-point on handles rather than starpu_mpi_redux_data or starpu_mpi_task_insert: the order of the
// additions is then ours and fixed (each rank adds its children's subtree sums in child order, like the
// in-process tree), so results do not depend on arrival order; and each request is ordered by StarPU's
// sequential consistency on the handle, so a parameter's sum leaves this rank as soon as its own backward
// and in-process additions are done, while the other parameters' backward still runs (the overlap comes
// from the data dependencies; nothing waits for the whole backward pass).
#include "engine/mpi/starpu_mpi_ranks.hpp"

#include "base/check.hpp"
#include "engine/starpu_check.hpp"

#include <mpi.h>
#include <starpu_mpi.h>

#include <memory>
#include <vector>

namespace corun::job {

namespace {

class StarpuMpiRanks final : public engine::CrossRanks {
 public:
  StarpuMpiRanks(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void attach() override {
    // MPI is already started (job::start), so StarPU-MPI must not start it again.
    starpu_check(starpu_mpi_init_comm(nullptr, nullptr, 0, MPI_COMM_WORLD), "starpu_mpi_init_comm");
    attached_ = true;
  }
  void detach() override {
    if (!attached_) return;
    drop_buffers();
    starpu_mpi_shutdown();
    attached_ = false;
  }

  void submit_allreduce(const std::vector<starpu_data_handle_t>& sums,
                        const std::function<void(size_t, starpu_data_handle_t)>& add) override {
    CORUN_CHECK(attached_, Status::runtime_error, "the cross-rank reduction runs before StarPU-MPI started");
    const std::vector<int> children = engine::rank_children(rank_, size_);
    const int parent = engine::rank_parent(rank_);
    ensure_buffers(sums, children.size());
    bytes_ = 0.0;
    for (size_t k = 0; k < sums.size(); ++k) {
      const double size = static_cast<double>(starpu_vector_get_nx(sums[k]) * sizeof(float));
      // Up: each child's subtree sum arrives in its own buffer and is added in child order.
      for (size_t j = 0; j < children.size(); ++j) {
        starpu_data_handle_t buffer = received_[k * 2 + j];
        mpi_check(starpu_mpi_irecv_detached(buffer, children[j], up_tag(k), MPI_COMM_WORLD, nullptr, nullptr),
                  "starpu_mpi_irecv_detached");
        add(k, buffer);
      }
      if (parent >= 0) {
        mpi_check(starpu_mpi_isend_detached(sums[k], parent, up_tag(k), MPI_COMM_WORLD, nullptr, nullptr),
                  "starpu_mpi_isend_detached");
        bytes_ += size;
        // Down: the job's total replaces this rank's partial sum, then goes on to the children.
        mpi_check(starpu_mpi_irecv_detached(sums[k], parent, down_tag(k), MPI_COMM_WORLD, nullptr, nullptr),
                  "starpu_mpi_irecv_detached");
      }
      for (int c : children) {
        mpi_check(starpu_mpi_isend_detached(sums[k], c, down_tag(k), MPI_COMM_WORLD, nullptr, nullptr),
                  "starpu_mpi_isend_detached");
        bytes_ += size;
      }
    }
  }

  void wait_all() override { starpu_check(starpu_mpi_wait_for_all(MPI_COMM_WORLD), "starpu_mpi_wait_for_all"); }
  double last_bytes_sent() const override { return bytes_; }

 private:
  // Two messages per parameter and step, told apart by tag: a child's sum going up, the total coming down.
  static starpu_mpi_tag_t up_tag(size_t k) { return static_cast<starpu_mpi_tag_t>(2 * k); }
  static starpu_mpi_tag_t down_tag(size_t k) { return static_cast<starpu_mpi_tag_t>(2 * k + 1); }

  static void mpi_check(int ret, const char* what) { starpu_check(ret, what); }

  // One receive buffer per parameter and child (two at most), in main RAM, allocated once: again only when the
  // parameters' sizes change.
  void ensure_buffers(const std::vector<starpu_data_handle_t>& sums, size_t nchildren) {
    bool same = sizes_.size() == sums.size();
    for (size_t k = 0; same && k < sums.size(); ++k) same = sizes_[k] == starpu_vector_get_nx(sums[k]);
    if (same) return;
    drop_buffers();
    for (size_t k = 0; k < sums.size(); ++k) {
      sizes_.push_back(starpu_vector_get_nx(sums[k]));
      for (size_t j = 0; j < 2; ++j) {
        starpu_data_handle_t h = nullptr;
        if (j < nchildren) {
          storage_.emplace_back(new float[sizes_.back()]());
          starpu_vector_data_register(&h, STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(storage_.back().get()),
                                      static_cast<uint32_t>(sizes_.back()), sizeof(float));
        }
        received_.push_back(h);
      }
    }
  }
  void drop_buffers() {
    for (starpu_data_handle_t h : received_)
      if (h != nullptr) starpu_data_unregister(h);
    received_.clear();
    storage_.clear();
    sizes_.clear();
  }

  int rank_;
  int size_;
  bool attached_ = false;
  double bytes_ = 0.0;
  std::vector<size_t> sizes_;                       // elements of each parameter's sum
  std::vector<starpu_data_handle_t> received_;      // [k * 2 + child slot]; null where there is no child
  std::vector<std::unique_ptr<float[]>> storage_;
};

}  // namespace

std::unique_ptr<engine::CrossRanks> make_starpu_mpi_ranks(int rank, int size) {
  return std::make_unique<StarpuMpiRanks>(rank, size);
}

}  // namespace corun::job
