// Placement policies, decided on made-up machines: candidates with given loads and data
// locations, as Runtime::place builds them. No device needed.
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
