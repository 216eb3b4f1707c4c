// Under SimGrid, a parallel (SPMD) task on a team of k workers takes the time of its width-k model, not its
// width-1 one (issue 17 item 2): in 1.3.10 the CPU driver passes the combined worker's perf arch to
// _starpu_simgrid_submit_job (src/drivers/cpu/driver_cpu.c, src/core/simgrid.c). The models are written by
// the fixture (write_test_machine, the code of `corun simulate`) before this program starts: widths 1, 2
// and 4 take 4000, 3000 and 1000 µs, so each width's duration tells which model was used.
#include <gtest/gtest.h>

#include <starpu.h>  // renames main to starpu_main: StarPU's own main runs it as the simulated application

#include <cstdint>
#include <cstdlib>

namespace {

constexpr double kUs[] = {0, 4000, 3000, 0, 1000};  // indexed by width; the fixture's WIDTH:US arguments
constexpr uint32_t kFootprint = 0x5eed;             // the fixture's FOOTPRINT_HEX

uint32_t fixed_footprint(starpu_task*) { return kFootprint; }
void never_runs(void*[], void*) {}  // SimGrid does not execute kernels (no STARPU_CODELET_SIMGRID_EXECUTE)

starpu_perfmodel g_model = [] {
  starpu_perfmodel m{};
  m.type = STARPU_HISTORY_BASED;
  m.symbol = "corun_test_width_duration";
  m.footprint = fixed_footprint;
  return m;
}();

starpu_codelet g_codelet = [] {
  starpu_codelet c{};
  c.type = STARPU_SPMD;
  c.max_parallelism = 4;
  c.cpu_funcs[0] = never_runs;
  c.nbuffers = 0;
  c.model = &g_model;
  return c;
}();

// The id of a combined worker (team) of `width` workers; -1 when the policy made none.
int team_of_width(int width) {
  if (width == 1) return 0;
  const int first = static_cast<int>(starpu_worker_get_count());
  for (int id = first; id < first + static_cast<int>(starpu_combined_worker_get_count()); ++id) {
    int size = 0;
    int* members = nullptr;
    if (starpu_combined_worker_get_description(id, &size, &members) == 0 && size == width) return id;
  }
  return -1;
}

// Simulated µs from submission to completion of one task forced onto `workerid`.
double simulated_duration(int workerid) {
  starpu_task* task = starpu_task_create();
  task->cl = &g_codelet;
  task->execute_on_a_specific_worker = 1;
  task->workerid = static_cast<unsigned>(workerid);
  const double t0 = starpu_timing_now();
  EXPECT_EQ(starpu_task_submit(task), 0);
  starpu_task_wait_for_all();
  return starpu_timing_now() - t0;
}

}  // namespace

TEST(Simgrid, ParallelTaskTakesItsWidthModel) {
  ASSERT_EQ(starpu_worker_get_count(), 4u) << "the fixture's platform and STARPU_NCPU give 4 CPU workers";
  for (int width : {1, 2, 4}) {
    const int id = team_of_width(width);
    ASSERT_GE(id, 0) << "no team of " << width << " workers (STARPU_SCHED=peager makes them)";
    // Submission, scheduling and input costs are simulated as 0 (the test's environment), so the task's
    // duration is its model's plus StarPU's fixed simulated wake-up (1.1 µs measured, the same at every
    // width); the models are 1000 µs apart, so 5 µs tells them apart with room to spare.
    EXPECT_NEAR(simulated_duration(id), kUs[width], 5.0) << "width " << width;
  }
}

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (starpu_init(nullptr) != 0) {
    std::fprintf(stderr, "starpu_init failed\n");
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  starpu_shutdown();
  return rc;
}
