#include "rank_share.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace nanort::rt {

namespace {

// A non-negative integer from the environment, or -1.
int env_number(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text) return -1;
  char *end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 0 && value < (1 << 20) ? static_cast<int>(value) : -1;
}

}  // namespace

LocalRank local_rank_from_environment() {
  // (Not Slurm's variables: they are set in every program of a batch job, MPI or not, and
  // describe the job rather than the step.)
  const char *pairs[][2] = {{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                            {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}};
  for (const auto &pair : pairs) {
    const int rank = env_number(pair[0]), size = env_number(pair[1]);
    if (rank >= 0 && size > 0 && rank < size) return {rank, size};
  }
  return {};
}

int world_rank_from_environment() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const int rank = env_number(name); rank >= 0) return rank;
  return -1;
}

std::string name_for_rank(const std::string &pattern) {
  std::string name;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] != '%' || (next != 'r' && next != 'p' && next != '%')) {
      name += pattern[i];
      continue;
    }
    ++i;
    if (next == 'r')
      name += std::to_string(std::max(world_rank_from_environment(), 0));
    else if (next == 'p')
      name += std::to_string(static_cast<long>(getpid()));
    else
      name += '%';
  }
  return name;
}

int default_cpu_workers(int usable_cpus, int logical_cpus, LocalRank local) {
  usable_cpus = std::max(usable_cpus, 1);
  if (local.size <= 1 || logical_cpus <= 0) return usable_cpus;
  // How many ranks of the node share a binding like this one: all of them when none is bound;
  // one when each has its own cores; a few when a launcher binds each rank to a socket.
  const long sharing =
      (static_cast<long>(local.size) * usable_cpus + logical_cpus - 1) / logical_cpus;
  return std::max(static_cast<int>(usable_cpus / std::max(sharing, 1L)), 1);
}

std::vector<std::size_t> share_for_rank(const std::vector<std::size_t> &devices, LocalRank local) {
  if (local.size <= 1 || devices.empty()) return devices;
  std::vector<std::size_t> share;
  for (std::size_t i = static_cast<std::size_t>(local.rank); i < devices.size();
       i += static_cast<std::size_t>(local.size))
    share.push_back(devices[i]);
  if (share.empty()) share.push_back(devices[static_cast<std::size_t>(local.rank) % devices.size()]);
  return share;
}

}  // namespace nanort::rt
