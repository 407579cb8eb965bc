#include "rank_share.hpp"

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
