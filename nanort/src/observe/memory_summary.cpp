#include "memory_summary.hpp"

#include <nanort/dc/directory.hpp>
#include <nanort/dc/human_size.hpp>

#include <cstdio>

#include "../device/accelerator.hpp"
#include "../device/device_numbering.hpp"

namespace nanort::rt {

std::string memory_summary(const dc::Directory *directory,
                           const std::vector<std::unique_ptr<Accelerator>> &accelerators) {
  if (!directory) return {};
  std::string text;
  char line[256];
  std::snprintf(line, sizeof line, "  %-10s %10s %10s %10s %8s %8s %9s %10s %10s\n", "memory",
                "to device", "to host", "from peer", "hits", "misses", "evictions", "peak",
                "limit");
  text += line;
  // Sizes as people read them: a few KiB never show as "0.0" MiB.
  auto size = [](std::uint64_t bytes) { return bytes ? dc::human_size(bytes) : std::string("0"); };
  for (dc::SpaceId space = 0; space < directory->space_count(); ++space) {
    const dc::TransferCounters c = directory->counters(space);
    const std::string name = space == dc::kHost
                                 ? "host"
                                 : accelerators[static_cast<std::size_t>(device_of(space))]->name();
    std::snprintf(line, sizeof line, "  %-10s %10s %10s %10s %8llu %8llu %9llu %10s %10s\n",
                  name.c_str(), size(c.bytes_to_device).c_str(), size(c.bytes_to_host).c_str(),
                  size(c.bytes_from_peer).c_str(), static_cast<unsigned long long>(c.hits),
                  static_cast<unsigned long long>(c.misses),
                  static_cast<unsigned long long>(c.evictions), size(c.peak_bytes).c_str(),
                  space == dc::kHost ? "-" : size(directory->capacity(space)).c_str());
    text += line;
  }
  return text;
}

}  // namespace nanort::rt
