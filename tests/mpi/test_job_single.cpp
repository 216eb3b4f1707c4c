// The job layer without MPI (engine/mpi/job_single.cpp): a launch as several ranks is refused with a message
// that says how to get MPI, one process is rank 0 of 1; and the rank tree of the cross-rank reduction.
#include "engine/cross_ranks.hpp"
#include "engine/mpi/job.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace {

// Sets (or unsets) the launcher variables for one test and restores them after.
class LauncherEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) unsetenv(v);
  }
  void TearDown() override {
    for (const char* v : kVars) unsetenv(v);
  }
  static constexpr const char* kVars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"};
};

TEST_F(LauncherEnv, NoLauncherIsOneProcess) {
  EXPECT_EQ(corun::job::launcher_size(), 1);
  const corun::job::World& w = corun::job::start();
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.size, 1);
  EXPECT_FALSE(w.distributed());
  EXPECT_FALSE(corun::job::built_with_mpi());
  EXPECT_EQ(corun::job::all_gather({1.5, 2.0}), (std::vector<double>{1.5, 2.0}));
  EXPECT_NO_THROW(corun::job::check_same({{"binary", 1}}));
}

TEST_F(LauncherEnv, EachLauncherIsRecognised) {
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_EQ(corun::job::launcher_size(), 4);
  unsetenv("OMPI_COMM_WORLD_SIZE");
  setenv("PMI_SIZE", "3", 1);
  EXPECT_EQ(corun::job::launcher_size(), 3);
  unsetenv("PMI_SIZE");
  setenv("SLURM_STEP_NUM_TASKS", "8", 1);
  EXPECT_EQ(corun::job::launcher_size(), 1) << "Slurm's task count alone is no MPI launch (srun of a plain job)";
  setenv("PMIX_RANK", "0", 1);
  EXPECT_EQ(corun::job::launcher_size(), 8);
  setenv("OMPI_COMM_WORLD_SIZE", "2x", 1);  // not a count: ignored, the next launcher variable counts
  EXPECT_EQ(corun::job::launcher_size(), 8);
}

TEST_F(LauncherEnv, SeveralRanksWithoutMpiAreRefused) {
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  try {
    corun::job::start();
    FAIL() << "a 2-rank launch of a build without MPI must fail";
  } catch (const corun::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("one of 2 ranks"), std::string::npos) << what;
    EXPECT_NE(what.find("built without MPI"), std::string::npos) << what;
    EXPECT_NE(what.find("libopenmpi-dev"), std::string::npos) << what;
  }
}

TEST(RankTree, BinaryHeapLikeTheReplicaTree) {
  using corun::engine::rank_children;
  using corun::engine::rank_parent;
  EXPECT_TRUE(rank_children(0, 1).empty());
  EXPECT_EQ(rank_children(0, 2), (std::vector<int>{1}));
  EXPECT_EQ(rank_children(0, 4), (std::vector<int>{1, 2}));
  EXPECT_EQ(rank_children(1, 4), (std::vector<int>{3}));
  EXPECT_TRUE(rank_children(2, 4).empty());
  EXPECT_EQ(rank_parent(0), -1);
  EXPECT_EQ(rank_parent(3), 1);
  EXPECT_EQ(rank_parent(2), 0);
  // Every rank but 0 is the child of exactly its parent, for any size.
  for (int size = 1; size <= 17; ++size)
    for (int r = 1; r < size; ++r) {
      const auto c = rank_children(rank_parent(r), size);
      EXPECT_EQ(std::count(c.begin(), c.end(), r), 1) << "rank " << r << " of " << size;
    }
}

TEST(Fingerprints, HashSeesEveryByte) {
  EXPECT_NE(corun::job::hash_text("--lr 0.5"), corun::job::hash_text("--lr 0.4"));
  EXPECT_EQ(corun::job::hash_text("abc"), corun::job::hash_text("abc"));
  EXPECT_EQ(corun::job::executable_hash(), corun::job::executable_hash());
}

}  // namespace
