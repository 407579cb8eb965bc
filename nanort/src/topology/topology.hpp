// Topology: what the machine looks like, from hwloc: cores, logical CPUs, NUMA nodes, and the
// accelerators hwloc sees on the PCI bus together with the cores near them.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace nanort::rt {

struct AcceleratorInfo {
  std::string pci_bus_id; // "0000:3b:00.0"
  std::string name;       // the PCI device's name, when hwloc knows it
  std::string kind;       // "GPU" or "accelerator"
  std::string vendor;     // the PCI vendor, when hwloc knows it
  std::string near_cpus;  // cpuset of the cores nearest to it, as a list ("0-15")
  int numa_node = -1;     // -1: not one node
};

class Topology {
 public:
  Topology();
  ~Topology();
  Topology(const Topology &) = delete;
  Topology &operator=(const Topology &) = delete;

  int cores() const { return cores_; }
  int logical_cpus() const { return logical_cpus_; }
  // The logical CPUs this process may run on: those of its binding, as a launcher (mpirun
  // binds each rank), taskset or a batch system set it; all of them when it is not bound.
  int usable_cpus() const { return usable_cpus_; }
  int numa_nodes() const { return numa_nodes_; }
  const std::vector<AcceleratorInfo> &accelerators() const { return accelerators_; }

  // Binds the calling thread to the index-th core (modulo their number) among those the
  // process may run on, its CPUs there. Returns false (and leaves the thread as it was) if
  // the system refuses.
  bool bind_thread_to_core(int index) const;
  // Binds the calling thread to the cores nearest to the PCI device "0000:3b:00.0" (its NUMA
  // node or package) that the process may run on. False (the thread left as it was) when
  // hwloc does not know the device, the process may run on none of them, or the system
  // refuses: the runtime never leaves the process's binding.
  bool bind_thread_near(const std::string &pci_bus_id) const;

 private:
  struct Hwloc;
  std::unique_ptr<Hwloc> hwloc_;
  int cores_ = 1;
  int logical_cpus_ = 1;
  int usable_cpus_ = 1;
  int numa_nodes_ = 1;
  std::vector<AcceleratorInfo> accelerators_;
};

}  // namespace nanort::rt
