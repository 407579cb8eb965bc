// The memory table of the NANORT_STATS summary: per memory space (the host, each device), the
// bytes copied each way, the directory's hits, misses and evictions, the peak and the limit.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace nanort::dc {
class Directory;
}

namespace nanort::rt {

class Accelerator;

// "" without a directory (no device). 'accelerators' by device number, each in its space
// (device/device_numbering.hpp).
std::string memory_summary(const dc::Directory *directory,
                           const std::vector<std::unique_ptr<Accelerator>> &accelerators);

}  // namespace nanort::rt
