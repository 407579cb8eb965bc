// PerfModel: calibration, outliers, sizes borrowed from their neighbours, persistence.
#include <scheduler/perf_model.hpp>

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.hpp"

namespace {

using nanort::rt::PerfKey;
using nanort::rt::PerfModel;

const PerfKey kGpu{"saxpy (saxpy.c:12)", "cuda:Test GPU", 20};
const PerfKey kCpu{"saxpy (saxpy.c:12)", "smp", 20};

TEST(PerfModel, CalibratedAfterEnoughSamples) {
  PerfModel model;
  EXPECT_FALSE(model.record(kGpu, 0.5)) << "the first sample (warm-up) is not kept";
  for (std::uint64_t i = 1; i < PerfModel::kCalibration; ++i) {
    EXPECT_TRUE(model.record(kGpu, 1e-3));
    EXPECT_FALSE(model.calibrated(kGpu));
    EXPECT_FALSE(model.expected(kGpu).has_value()) << "uncalibrated keys give no estimate";
  }
  EXPECT_TRUE(model.record(kGpu, 3e-3));
  EXPECT_TRUE(model.calibrated(kGpu));
  const double mean = (1e-3 * (PerfModel::kCalibration - 1) + 3e-3) / PerfModel::kCalibration;
  EXPECT_NEAR(*model.expected(kGpu), mean, 1e-12);
  EXPECT_FALSE(model.calibrated(kCpu)) << "places are learnt apart";
}

TEST(PerfModel, SlowOutliersOfACalibratedKeyAreRejected) {
  PerfModel model;
  model.record(kGpu, 1.0);  // warm-up, dropped
  for (std::uint64_t i = 0; i < PerfModel::kCalibration; ++i) model.record(kGpu, 2e-3);
  EXPECT_FALSE(model.record(kGpu, 2e-3 * PerfModel::kOutlierRatio * 1.5)) << "far too slow";
  EXPECT_TRUE(model.record(kGpu, 1e-3)) << "faster is kept";
  EXPECT_FALSE(model.record(kGpu, -1.0));
  EXPECT_NEAR(*model.expected(kGpu), (2e-3 * PerfModel::kCalibration + 1e-3) /
                                         (PerfModel::kCalibration + 1), 1e-12);
}

TEST(PerfModel, OtherSizesBorrowTheNearestCalibratedOneScaled) {
  PerfModel model;
  model.record(kGpu, 1.0);  // warm-up, dropped
  for (std::uint64_t i = 0; i < PerfModel::kCalibration; ++i) model.record(kGpu, 4e-3);
  PerfKey bigger = kGpu, smaller = kGpu;
  bigger.size_class += 2;
  smaller.size_class -= 1;
  EXPECT_NEAR(*model.expected(bigger), 16e-3, 1e-12) << "four times the data";
  EXPECT_NEAR(*model.expected(smaller), 2e-3, 1e-12);
  PerfKey other_task = kGpu;
  other_task.task = "scale (scale.c:3)";
  EXPECT_FALSE(model.expected(other_task).has_value());
  EXPECT_EQ(PerfModel::size_class(1 << 20), 20);
  EXPECT_EQ(PerfModel::size_class((1 << 20) + 5), 20);
  EXPECT_EQ(PerfModel::size_class(0), 0);
}

TEST(PerfModel, PersistsAndRejectsDamagedFiles) {
  const std::string folder = std::filesystem::temp_directory_path() /
                             ("nanort-perf-model-test-" + std::to_string(::getpid()));
  const std::string path = folder + "/machine.model";
  PerfModel model;
  model.record(kGpu, 1.0);  // warm-ups, dropped
  model.record(kCpu, 1.0);
  for (std::uint64_t i = 0; i < PerfModel::kCalibration; ++i) {
    model.record(kGpu, 1e-3 + 1e-6 * static_cast<double>(i));
    model.record(kCpu, 5e-3);
  }
  std::string why;
  ASSERT_TRUE(model.save(path, why)) << why;

  PerfModel loaded;
  ASSERT_TRUE(loaded.load(path, why)) << why;
  EXPECT_EQ(loaded.keys(), 2u);
  EXPECT_DOUBLE_EQ(*loaded.expected(kGpu), *model.expected(kGpu)) << "exact round trip";
  EXPECT_DOUBLE_EQ(*loaded.expected(kCpu), 5e-3);

  PerfModel empty;
  ASSERT_TRUE(empty.load(folder + "/missing.model", why)) << "a missing file is an empty model";
  EXPECT_EQ(empty.keys(), 0u);

  {
    std::ofstream damaged(path, std::ios::app);
    damaged << "saxpy\tsmp\tnot-a-number\t1\t1\t0\t0\n";
  }
  PerfModel kept;
  kept.record(kCpu, 1.0);
  why.clear();
  EXPECT_FALSE(kept.load(path, why));
  EXPECT_NE(why.find(":4 is damaged"), std::string::npos) << why;
  EXPECT_EQ(kept.keys(), 1u) << "a damaged file changes nothing";
  {
    std::ofstream other(path, std::ios::trunc);
    other << "something else\n";
  }
  EXPECT_FALSE(kept.load(path, why));
  EXPECT_NE(why.find("not a nanort performance model"), std::string::npos) << why;
  std::filesystem::remove_all(folder);
}

}  // namespace
