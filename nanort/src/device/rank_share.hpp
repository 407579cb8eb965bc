// The GPUs of a node shared among the MPI ranks that run on it: when a launcher (mpirun,
// mpiexec) starts several ranks on one node and the device variables are left at their
// defaults, each rank takes its own share of the node's GPUs instead of all of them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace nanort::rt {

struct LocalRank {
  int rank = 0;  // among the ranks of this node
  int size = 1;  // ranks on this node
};

// From the launcher's environment: Open MPI (OMPI_COMM_WORLD_LOCAL_RANK, _LOCAL_SIZE), MPICH
// and Intel MPI's Hydra (MPI_LOCALRANKID, MPI_LOCALNRANKS). {0, 1} when none says more.
LocalRank local_rank_from_environment();

// This process's rank among all the job's ranks, from the launcher's environment (Open MPI's
// OMPI_COMM_WORLD_RANK, Hydra's and PMIx's PMI_RANK / PMIX_RANK), or -1 outside a launcher.
int world_rank_from_environment();

// A file name with "%r" replaced by the world rank ("0" outside a launcher) and "%p" by the
// process id, so that each rank of a job writes a file of its own; "%%" is a "%".
std::string name_for_rank(const std::string &pattern);

// The share of 'devices'' (numbers of the devices that would be used) that 'local' takes:
// device i of the list goes to local rank i % size; a rank left without one (fewer devices
// than ranks) shares device rank % count with others. All of them when size is 1.
std::vector<std::size_t> share_for_rank(const std::vector<std::size_t> &devices, LocalRank local);

// The CPU workers a process takes by default: one per logical CPU it may run on, shared with
// the other ranks of the node that (as far as the counts tell) share its binding: an unbound
// rank shares the node's CPUs with all of them; a rank bound to cores of its own takes them;
// ranks that a launcher binds to a socket each (several per socket) divide the socket.
int default_cpu_workers(int usable_cpus, int logical_cpus, LocalRank local);

}  // namespace nanort::rt
