#include "topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>

namespace nanort::rt {

struct Topology::Hwloc {
  hwloc_topology_t topology = nullptr;
};

namespace {
std::string cpuset_list(hwloc_const_cpuset_t set) {
  char *text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return "";
  std::string list(text);
  std::free(text);
  return list;
}
}  // namespace

Topology::Topology() : hwloc_(std::make_unique<Hwloc>()) {
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) return;
  // Keep the PCI devices that matter (GPUs, coprocessors) to know which cores sit near them.
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return;
  }
  hwloc_->topology = topo;
  cores_ = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
  logical_cpus_ = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
  numa_nodes_ = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));

  for (hwloc_obj_t dev = hwloc_get_next_osdev(topo, nullptr); dev;
       dev = hwloc_get_next_osdev(topo, dev)) {
    if (dev->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
        dev->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC)
      continue;
    AcceleratorInfo info;
    info.name = dev->name ? dev->name : "?";
    info.kind = dev->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU ? "GPU" : "coprocessor";
    if (const char *vendor = hwloc_obj_get_info_by_name(dev, "GPUVendor")) info.vendor = vendor;
    if (info.vendor.empty())
      if (const char *vendor = hwloc_obj_get_info_by_name(dev->parent, "PCIVendor"))
        info.vendor = vendor;
    hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, dev);
    if (near && near->cpuset) info.near_cpus = cpuset_list(near->cpuset);
    if (near && near->nodeset) {
      int node = hwloc_bitmap_first(near->nodeset);
      if (hwloc_bitmap_weight(near->nodeset) == 1) info.numa_node = node;
    }
    accelerators_.push_back(std::move(info));
  }
}

Topology::~Topology() {
  if (hwloc_->topology) hwloc_topology_destroy(hwloc_->topology);
}

bool Topology::bind_thread_to_core(int index) const {
  hwloc_topology_t topo = hwloc_->topology;
  if (!topo) return false;
  hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, index % cores_);
  if (!core || !core->cpuset) return false;
  return hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_THREAD) == 0;
}

}  // namespace nanort::rt
