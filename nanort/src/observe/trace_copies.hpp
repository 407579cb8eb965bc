// TraceCopies: the directory's copies in the NANORT_TRACE trace, each on the lane of the device
// involved (device number d, space_of(d), on lane first_device_lane + d).
#pragma once

#include <nanort/dc/directory.hpp>

#include <cstddef>

#include "../device/device_numbering.hpp"
#include "observer.hpp"

namespace nanort::rt {

// Shows the directory's copies in the trace, on the lane of the device involved.
class TraceCopies final : public dc::CopyListener {
 public:
  TraceCopies(Observer &observer, int first_device_lane)
      : observer_(observer), first_device_lane_(first_device_lane) {}
  void copy_started(dc::SpaceId from, dc::SpaceId to, std::size_t bytes) override {
    const dc::SpaceId space = to != dc::kHost ? to : from;
    const char *what = from == dc::kHost ? "copy to device"
                       : to == dc::kHost ? "copy to host"
                                         : "copy from another device";
    observer_.copy_started(first_device_lane_ + device_of(space), what, bytes);
  }

 private:
  Observer &observer_;
  int first_device_lane_;
};

}  // namespace nanort::rt
