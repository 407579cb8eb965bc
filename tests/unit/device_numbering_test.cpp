// Device numbering (device/device_numbering.hpp): device numbers and memory spaces convert
// both ways, the host's space standing for the CPU workers; and nanort_task_set_device's index
// in a kind finds the right device among CUDA and OpenCL devices mixed. No device needed.
#include <device/device_numbering.hpp>

#include <gtest/gtest.h>
#include <nanort/nanort.h>

#include <cstddef>
#include <vector>

namespace {

using nanort::dc::SpaceId;
using nanort::rt::device_of;
using nanort::rt::device_of_kind_index;
using nanort::rt::index_in_kind;
using nanort::rt::space_of;

TEST(DeviceNumbering, SpacesFollowTheHost) {
  EXPECT_EQ(space_of(-1), nanort::dc::kHost);  // the CPU workers use the host's memory
  EXPECT_EQ(device_of(nanort::dc::kHost), -1);
  EXPECT_EQ(space_of(0), 1u);
  EXPECT_EQ(space_of(2), 3u);
  EXPECT_EQ(device_of(1), 0);
  EXPECT_EQ(device_of(3), 2);
}

TEST(DeviceNumbering, SpaceAndDeviceRoundTrip) {
  for (int device = -1; device + 1 < static_cast<int>(nanort::dc::kMaxSpaces); ++device)
    EXPECT_EQ(device_of(space_of(device)), device) << "device " << device;
  for (SpaceId space = 0; space < nanort::dc::kMaxSpaces; ++space)
    EXPECT_EQ(space_of(device_of(space)), space) << "space " << space;
}

// The devices as the runtime numbers them, by kind.
struct Machine {
  std::vector<nanort_device_kind> kinds;
  nanort_device_kind operator()(std::size_t device) const { return kinds[device]; }
  int device(nanort_device_kind kind, int index) const {
    return device_of_kind_index(kinds.size(), *this, kind, index);
  }
};

TEST(DeviceNumbering, IndexInKindFindsItsDevice) {
  // As the runtime opens them: the CUDA devices, then the OpenCL ones.
  const Machine machine{{NANORT_DEVICE_CUDA, NANORT_DEVICE_CUDA, NANORT_DEVICE_OPENCL}};
  EXPECT_EQ(machine.device(NANORT_DEVICE_CUDA, 0), 0);
  EXPECT_EQ(machine.device(NANORT_DEVICE_CUDA, 1), 1);
  EXPECT_EQ(machine.device(NANORT_DEVICE_OPENCL, 0), 2);  // opencl0: device 2, space 3
  EXPECT_EQ(space_of(machine.device(NANORT_DEVICE_OPENCL, 0)), 3u);
  EXPECT_EQ(machine.device(NANORT_DEVICE_CUDA, 2), -1);    // no cuda2
  EXPECT_EQ(machine.device(NANORT_DEVICE_OPENCL, 1), -1);  // no opencl1
  EXPECT_EQ(machine.device(NANORT_DEVICE_SMP, 0), -1);     // the CPU workers are no device
}

TEST(DeviceNumbering, KindsMixedRoundTrip) {
  // Kinds interleaved, so that neither a global index nor a fixed offset per kind is right.
  const Machine machine{{NANORT_DEVICE_OPENCL, NANORT_DEVICE_CUDA, NANORT_DEVICE_OPENCL,
                         NANORT_DEVICE_CUDA, NANORT_DEVICE_OPENCL}};
  EXPECT_EQ(machine.device(NANORT_DEVICE_OPENCL, 0), 0);
  EXPECT_EQ(machine.device(NANORT_DEVICE_OPENCL, 1), 2);
  EXPECT_EQ(machine.device(NANORT_DEVICE_OPENCL, 2), 4);
  EXPECT_EQ(machine.device(NANORT_DEVICE_CUDA, 0), 1);
  EXPECT_EQ(machine.device(NANORT_DEVICE_CUDA, 1), 3);
  EXPECT_EQ(machine.device(NANORT_DEVICE_CUDA, 2), -1);
  const std::vector<int> expected_index = {0, 0, 1, 1, 2};
  for (int device = 0; device < static_cast<int>(machine.kinds.size()); ++device) {
    const int index = index_in_kind(machine, device);
    EXPECT_EQ(index, expected_index[static_cast<std::size_t>(device)]) << "device " << device;
    EXPECT_EQ(machine.device(machine.kinds[static_cast<std::size_t>(device)], index), device)
        << "device " << device;
  }
}

}  // namespace
