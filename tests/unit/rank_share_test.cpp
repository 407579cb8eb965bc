// The GPUs of a node shared among the MPI ranks on it (device/rank_share.hpp): which rank
// takes which, and where the local rank comes from.
#include <device/rank_share.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using nanort::rt::LocalRank;
using nanort::rt::name_for_rank;
using nanort::rt::world_rank_from_environment;
using nanort::rt::local_rank_from_environment;
using nanort::rt::share_for_rank;
using V = std::vector<std::size_t>;

TEST(RankShare, EachLocalRankTakesEveryNthDevice) {
  const V gpus = {0, 1, 2, 3};
  EXPECT_EQ(share_for_rank(gpus, {0, 1}), gpus) << "alone: every GPU";
  EXPECT_EQ(share_for_rank(gpus, {0, 2}), (V{0, 2}));
  EXPECT_EQ(share_for_rank(gpus, {1, 2}), (V{1, 3}));
  EXPECT_EQ(share_for_rank(gpus, {3, 4}), (V{3}));
  // Fewer GPUs than ranks: shared, rank % count.
  EXPECT_EQ(share_for_rank(V{0, 1}, {2, 4}), (V{0}));
  EXPECT_EQ(share_for_rank(V{0, 1}, {3, 4}), (V{1}));
  EXPECT_EQ(share_for_rank(V{}, {1, 2}), V{});
  // The numbers are those of the devices the selection kept, not positions.
  EXPECT_EQ(share_for_rank(V{2, 5}, {1, 2}), (V{5}));
}

TEST(RankShare, LocalRankFromTheLaunchersEnvironment) {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                           "MPI_LOCALRANKID", "MPI_LOCALNRANKS"})
    unsetenv(name);
  setenv("SLURM_LOCALID", "1", 1);  // a batch job's variables, MPI or not: not used
  setenv("SLURM_TASKS_PER_NODE", "4", 1);
  LocalRank none = local_rank_from_environment();
  EXPECT_EQ(none.rank, 0);
  EXPECT_EQ(none.size, 1);
  setenv("MPI_LOCALRANKID", "1", 1);
  setenv("MPI_LOCALNRANKS", "3", 1);
  LocalRank mpich = local_rank_from_environment();
  EXPECT_EQ(mpich.rank, 1);
  EXPECT_EQ(mpich.size, 3);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  LocalRank ompi = local_rank_from_environment();  // Open MPI's first
  EXPECT_EQ(ompi.rank, 2);
  EXPECT_EQ(ompi.size, 4);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2(x3)", 1);  // not a number: the next launcher's
  EXPECT_EQ(local_rank_from_environment().size, 3);
  unsetenv("SLURM_LOCALID");
  unsetenv("SLURM_TASKS_PER_NODE");
}

TEST(RankShare, FileNamePerRank) {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) unsetenv(name);
  EXPECT_EQ(world_rank_from_environment(), -1);
  EXPECT_EQ(name_for_rank("trace-%r.json"), "trace-0.json");  // outside a launcher
  setenv("PMI_RANK", "5", 1);
  EXPECT_EQ(name_for_rank("trace-%r.json"), "trace-5.json");
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);  // Open MPI's first
  EXPECT_EQ(name_for_rank("/tmp/%r/t%r.json"), "/tmp/3/t3.json");
  EXPECT_EQ(name_for_rank("t-%p.json"), "t-" + std::to_string(getpid()) + ".json");
  EXPECT_EQ(name_for_rank("100%%-%x%"), "100%-%x%");  // others are left as written
  EXPECT_EQ(name_for_rank("plain.json"), "plain.json");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("PMI_RANK");
}

TEST(RankShare, DefaultCpuWorkers) {
  using nanort::rt::default_cpu_workers;
  EXPECT_EQ(default_cpu_workers(32, 32, {0, 1}), 32);  // alone, unbound: every CPU
  EXPECT_EQ(default_cpu_workers(32, 32, {1, 2}), 16);  // unbound, two ranks on the node
  EXPECT_EQ(default_cpu_workers(32, 32, {2, 3}), 10);
  EXPECT_EQ(default_cpu_workers(2, 2, {3, 4}), 1);     // never none
  EXPECT_EQ(default_cpu_workers(8, 32, {1, 2}), 8);    // bound: the CPUs of its binding
  EXPECT_EQ(default_cpu_workers(1, 32, {0, 2}), 1);    // mpirun's default for two ranks
  EXPECT_EQ(default_cpu_workers(16, 32, {3, 8}), 4);   // 8 ranks bound to 2 sockets: 4 each
  EXPECT_EQ(default_cpu_workers(8, 32, {3, 4}), 8);    // 4 ranks with 8 cores each
}

}  // namespace
