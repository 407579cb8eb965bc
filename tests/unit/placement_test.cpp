// Placement policies, decided on made-up machines: candidates with given loads and data
// locations, as Runtime::place builds them. No device needed.
#include <scheduler/affinity.hpp>
#include <scheduler/placement.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using nanort::rt::LocalityPolicy;
using nanort::rt::PlacementCandidate;

PlacementCandidate cpu(double load, std::uint64_t valid = 0) {
  PlacementCandidate c;
  c.kind = NANORT_DEVICE_SMP;
  c.device = -1;
  c.load = load;
  c.valid = valid;
  return c;
}
PlacementCandidate gpu(int device, double load, std::uint64_t valid = 0, std::uint64_t owned = 0) {
  PlacementCandidate c;
  c.kind = NANORT_DEVICE_CUDA;
  c.device = device;
  c.load = load;
  c.valid = valid;
  c.owned = owned;
  return c;
}

std::size_t choose(std::vector<PlacementCandidate> candidates) {
  return LocalityPolicy().choose(candidates);
}

TEST(Locality, WrittenDataStaysWhereItLivesAlone) {
  // Device 1 holds the only copy of what the task writes: there, busy or not.
  EXPECT_EQ(choose({gpu(0, 0, 4096), gpu(1, 30, 0, 1024), cpu(0, 4096)}), 1u);
  // The larger owner wins when two devices own parts.
  EXPECT_EQ(choose({gpu(0, 0, 0, 100), gpu(1, 0, 0, 200)}), 1u);
}

TEST(Locality, MostInputBytesUnlessMarkedlyMoreLoaded) {
  EXPECT_EQ(choose({gpu(0, 0, 100), gpu(1, 1, 900)}), 1u) << "most bytes, slightly busier";
  EXPECT_EQ(choose({gpu(0, 2, 100), gpu(1, 5, 900)}), 1u) << "not more than twice plus one";
  EXPECT_EQ(choose({gpu(0, 2, 100), gpu(1, 6, 900)}), 0u) << "more than twice the load plus one";
  EXPECT_TRUE(LocalityPolicy::markedly_more_loaded(3.5, 1));
  EXPECT_FALSE(LocalityPolicy::markedly_more_loaded(3, 1));
  // Equal bytes: the less loaded of the two.
  EXPECT_EQ(choose({gpu(0, 2, 500), gpu(1, 1, 500)}), 1u);
}

TEST(Locality, FreshDataGoesToTheLeastLoadedDevice) {
  // Nothing on any device (the host holds it all): devices before the CPU workers.
  EXPECT_EQ(choose({cpu(0, 4096), gpu(0, 3), gpu(1, 1)}), 2u);
  EXPECT_EQ(choose({cpu(0, 4096), gpu(0, 0), gpu(1, 0)}), 1u) << "ties: the first device";
}

TEST(Locality, TheCpuWorkersOnlyWhenNoDeviceCanRunIt) {
  // However idle the CPU and busy the devices: locality knows no speeds.
  EXPECT_EQ(choose({cpu(0.5, 4096), gpu(0, 8), gpu(1, 9)}), 1u);
  EXPECT_EQ(choose({cpu(0, 4096), gpu(0, 10, 4096)}), 1u);
  // Data on a device markedly busier than another device: the other one.
  EXPECT_EQ(choose({gpu(0, 10, 4096), gpu(1, 1)}), 1u);
}

TEST(Locality, OnlyOnePlaceOrOnlyTheCpu) {
  EXPECT_EQ(choose({cpu(100)}), 0u);
  EXPECT_EQ(choose({gpu(3, 100)}), 0u);
}

TEST(Placement, PoliciesByName) {
  EXPECT_EQ(nanort::rt::make_placement("breadth-first"), nullptr) << "breadth-first places nothing";
  auto locality = nanort::rt::make_placement("locality");
  ASSERT_NE(locality, nullptr);
  EXPECT_STREQ(locality->name(), "locality");
}

}  // namespace

namespace {

using nanort::rt::EarliestFinishPolicy;

PlacementCandidate timed(int device, double free_in, double transfer, double expected,
                         double load = 0) {
  PlacementCandidate c = device < 0 ? cpu(load) : gpu(device, load);
  c.free_in = free_in;
  c.transfer = transfer;
  c.expected = expected;
  return c;
}

std::size_t earliest(std::vector<PlacementCandidate> candidates) {
  return EarliestFinishPolicy().choose(candidates);
}

TEST(EarliestFinish, EarliestExpectedFinishWins) {
  // The GPU computes in 1 ms but is busy for 5 ms; the CPU takes 3 ms and is free.
  EXPECT_EQ(earliest({timed(-1, 0, 0, 3e-3), timed(0, 5e-3, 0, 1e-3)}), 0u);
  EXPECT_EQ(earliest({timed(-1, 0, 0, 3e-3), timed(0, 1e-3, 0, 1e-3)}), 1u);
  // The inputs live on GPU 1: GPU 0 would have to copy them first.
  EXPECT_EQ(earliest({timed(0, 0, 2e-3, 1e-3), timed(1, 1e-3, 0, 1e-3)}), 1u);
}

TEST(EarliestFinish, IdlePlacesTheModelDoesNotKnowAreMeasuredFirst) {
  EXPECT_EQ(earliest({timed(-1, 0, 0, 1e-3), timed(0, 0, 0, -1)}), 1u);
  EXPECT_EQ(earliest({timed(0, 0, 0, -1, 3), timed(1, 0, 0, -1, 0), timed(-1, 0, 0, 1e-3)}), 1u)
      << "the idle unmeasured one";
  EXPECT_STREQ(EarliestFinishPolicy().name(), "dmda");
}

TEST(EarliestFinish, LikeLocalityWhileUnmeasuredPlacesAreBusy) {
  // The CPU is not measured yet and busy: locality's choice, the less loaded GPU.
  EXPECT_EQ(earliest({timed(-1, 0, 0, -1, 2), timed(0, 0, 0, 1e-3, 4), timed(1, 0, 0, 1e-3, 1)}),
            2u);
  // Even where the model would send it elsewhere: GPU 0 would finish first by the model.
  EXPECT_EQ(earliest({timed(-1, 0, 0, -1, 2), timed(0, 0, 0, 1e-6, 3), timed(1, 9, 0, 1e-3, 0)}),
            2u);
}

}  // namespace

namespace {

using nanort::rt::AffinityTable;
using nanort::rt::EnergyPolicy;
using nanort::rt::choose_by_affinity;

PlacementCandidate scored(PlacementCandidate c, double affinity) {
  c.affinity = affinity;
  return c;
}

TEST(Affinity, LeastLoadTimesScoreAmongScoredPlaces) {
  // cuda=1, smp=8: the GPU until it holds 8 tasks more than the CPU workers per worker.
  std::vector<PlacementCandidate> c = {scored(cpu(0), 8), scored(gpu(0, 0), 1)};
  EXPECT_EQ(choose_by_affinity(c), 1u);
  c[1].load = 7;  // (7 + 1) x 1 = 8 = (0 + 1) x 8: a tie goes to the less loaded
  EXPECT_EQ(choose_by_affinity(c), 0u);
  c[1].load = 6;
  EXPECT_EQ(choose_by_affinity(c), 1u);
  // Places without a score are left out while any has one; none scored: none chosen.
  EXPECT_EQ(choose_by_affinity(std::vector{gpu(0, 0), scored(gpu(1, 50), 1)}), 1u);
  EXPECT_EQ(choose_by_affinity(std::vector{gpu(0, 0), gpu(1, 0)}), 2u);
}

TEST(Affinity, ScoresComeBeforeLocalityAndStandInForAnUncalibratedModel) {
  // Locality would keep the task where it owns its data (GPU 0); the scores say GPU 1.
  EXPECT_EQ(choose({scored(gpu(0, 0, 0, 4096), 5), scored(gpu(1, 0), 1)}), 1u);
  // Under locality the CPU takes a task only if no device can; with scores it can win.
  EXPECT_EQ(choose({scored(cpu(0), 1), scored(gpu(0, 2), 4)}), 0u);
  // dmda, model unknown on a busy CPU: the scores decide instead of locality.
  PlacementCandidate busy_cpu = scored(timed(-1, 0, 0, -1, 2), 1);
  EXPECT_EQ(earliest({busy_cpu, scored(timed(0, 0, 0, 1e-3, 3), 10)}), 0u);
  // Once the model knows every place, measurements win over scores.
  busy_cpu.expected = 5e-3;
  EXPECT_EQ(earliest({busy_cpu, scored(timed(0, 0, 0, 1e-3, 3), 10)}), 1u);
}

TEST(Affinity, TableParsesScoresAndRefusesBadText) {
  AffinityTable table;
  EXPECT_TRUE(table.empty());
  EXPECT_FALSE(table.parse("gemm:cuda=1,smp=8; blur : opencl0 = 0.5 ;").has_value());
  EXPECT_FALSE(table.empty());
  EXPECT_TRUE(table.has("gemm"));
  EXPECT_FALSE(table.has("other"));
  EXPECT_EQ(table.score("gemm", "cuda", "cuda1"), 1);
  EXPECT_EQ(table.score("gemm", "smp", "smp"), 8);
  EXPECT_EQ(table.score("blur", "opencl", "opencl0"), 0.5);
  EXPECT_EQ(table.score("blur", "opencl", "opencl1"), 0) << "another device, no kind score";
  EXPECT_EQ(table.score("gemm", "opencl", "opencl0"), 0);
  // A device's score wins over its kind's.
  EXPECT_TRUE(table.set("gemm", "cuda1", 3));
  EXPECT_EQ(table.score("gemm", "cuda", "cuda1"), 3);
  EXPECT_EQ(table.score("gemm", "cuda", "cuda0"), 1);
  // Malformed: nothing of it is taken.
  for (const char *bad : {"gemm", "gemm:cuda", "gemm:cuda=0", "gemm:cuda=-1", "gemm:cuda=x",
                          ":cuda=1", "fft:cuda=1,smp=", "fft:=2"}) {
    AffinityTable t;
    EXPECT_TRUE(t.parse(bad).has_value()) << bad;
    EXPECT_TRUE(t.empty()) << bad;
  }
  EXPECT_FALSE(table.set("", "cuda", 1));
  EXPECT_FALSE(table.set("x", "cuda", 0));
}

PlacementCandidate powered(PlacementCandidate c, double watts) {
  c.watts = watts;
  return c;
}

TEST(Energy, TradesTimeForJoulesAtTheGivenRate) {
  // CPU: 10 ms at 10 W = 0.1 J, finishes at 10 ms. GPU: 1 ms at 300 W = 0.3 J, finishes at 1 ms.
  const std::vector<PlacementCandidate> c = {powered(timed(-1, 0, 0, 10e-3), 10),
                                             powered(timed(0, 0, 0, 1e-3), 300)};
  // 9 ms later saves 0.2 J: 0.022 J per ms. A rate below that takes the CPU, above the GPU.
  EXPECT_EQ(EnergyPolicy(0).choose(c), 0u) << "energy alone";
  EXPECT_EQ(EnergyPolicy(0.02).choose(c), 0u);
  EXPECT_EQ(EnergyPolicy(0.025).choose(c), 1u);
  EXPECT_EQ(EnergyPolicy(1e6).choose(c), 1u) << "a large rate is dmda";
  EXPECT_STREQ(EnergyPolicy(1).name(), "energy");
  EXPECT_EQ(EnergyPolicy(2.5).joules_per_ms(), 2.5);
}

TEST(Energy, CalibratesLikeDmdaAndFallsBackToTimeWithoutPower) {
  // Unknown on an idle GPU: measured there first.
  EXPECT_EQ(EnergyPolicy(0).choose(std::vector{powered(timed(-1, 0, 0, 1e-3), 10),
                                               powered(timed(0, 0, 0, -1), 300)}),
            1u);
  // A place of unknown power: the earliest finish.
  EXPECT_EQ(EnergyPolicy(0).choose(std::vector{powered(timed(-1, 0, 0, 10e-3), 10),
                                               timed(0, 0, 0, 1e-3)}),
            1u);
  auto made = nanort::rt::make_placement("energy", 0.5);
  ASSERT_NE(made, nullptr);
  EXPECT_STREQ(made->name(), "energy");
}

}  // namespace
