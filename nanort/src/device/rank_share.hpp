// The GPUs of a node shared among the MPI ranks that run on it: when a launcher (mpirun,
// mpiexec) starts several ranks on one node and the device variables are left at their
// defaults, each rank takes its own share of the node's GPUs instead of all of them.
#pragma once

#include <cstddef>
#include <vector>

namespace nanort::rt {

struct LocalRank {
  int rank = 0;  // among the ranks of this node
  int size = 1;  // ranks on this node
};

// From the launcher's environment: Open MPI (OMPI_COMM_WORLD_LOCAL_RANK, _LOCAL_SIZE), MPICH
// and Intel MPI's Hydra (MPI_LOCALRANKID, MPI_LOCALNRANKS). {0, 1} when none says more.
LocalRank local_rank_from_environment();

// The share of 'devices' (numbers of the devices that would be used) that 'local' takes:
// device i of the list goes to local rank i % size; a rank left without one (fewer devices
// than ranks) shares device rank % count with others. All of them when size is 1.
std::vector<std::size_t> share_for_rank(const std::vector<std::size_t> &devices, LocalRank local);

}  // namespace nanort::rt
