#include "topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace nanort::rt {

struct Topology::Hwloc {
  hwloc_topology_t topology = nullptr;
  hwloc_bitmap_t usable = nullptr;  // the process's binding within the machine
  ~Hwloc() {
    if (usable) hwloc_bitmap_free(usable);
  }
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
  // hwloc's OpenCL, CUDA, NVML, ROCm SMI, Level Zero and GL components open the vendors'
  // libraries (an OpenCL platform such as PoCL brings a whole LLVM, which also installs
  // signal handlers on the calling thread) at every start, to learn what the runtime's own
  // backends find anyway. The PCI bus alone says which cores sit near each device.
  for (const char *component : {"opencl", "cuda", "nvml", "rsmi", "levelzero", "gl"})
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component);
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return;
  }
  hwloc_->topology = topo;
  cores_ = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
  logical_cpus_ = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));
  numa_nodes_ = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
  // The process's binding (the threads it has so far: the launcher's, inherited), within the
  // machine's CPUs; the whole machine when it cannot be read or leaves none.
  hwloc_const_cpuset_t machine = hwloc_topology_get_topology_cpuset(topo);
  hwloc_->usable = hwloc_bitmap_alloc();
  if (hwloc_->usable) {
    if (hwloc_get_cpubind(topo, hwloc_->usable, HWLOC_CPUBIND_PROCESS) == 0)
      hwloc_bitmap_and(hwloc_->usable, hwloc_->usable, machine);
    if (hwloc_bitmap_iszero(hwloc_->usable)) hwloc_bitmap_copy(hwloc_->usable, machine);
    usable_cpus_ = std::max(1, hwloc_get_nbobjs_inside_cpuset_by_type(topo, hwloc_->usable,
                                                                       HWLOC_OBJ_PU));
  } else {
    usable_cpus_ = logical_cpus_;
  }

  for (hwloc_obj_t dev = hwloc_get_next_pcidev(topo, nullptr); dev;
       dev = hwloc_get_next_pcidev(topo, dev)) {
    // PCI base classes: 0x03 display (GPUs), 0x12 processing accelerators, 0x0b40
    // coprocessors.
    const unsigned class_id = dev->attr->pcidev.class_id;
    const bool gpu = (class_id >> 8) == 0x03;
    if (!gpu && (class_id >> 8) != 0x12 && class_id != 0x0b40) continue;
    AcceleratorInfo info;
    char bus_id[32];
    std::snprintf(bus_id, sizeof bus_id, "%04x:%02x:%02x.%01x", dev->attr->pcidev.domain,
                  dev->attr->pcidev.bus, dev->attr->pcidev.dev, dev->attr->pcidev.func);
    info.pci_bus_id = bus_id;
    info.name = dev->name ? dev->name : "";
    info.kind = gpu ? "GPU" : "accelerator";
    if (const char *vendor = hwloc_obj_get_info_by_name(dev, "PCIVendor")) info.vendor = vendor;
    hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, dev);
    if (near && near->cpuset) info.near_cpus = cpuset_list(near->cpuset);
    if (near && near->nodeset && hwloc_bitmap_weight(near->nodeset) == 1)
      info.numa_node = hwloc_bitmap_first(near->nodeset);
    accelerators_.push_back(std::move(info));
  }
}

Topology::~Topology() {
  if (hwloc_->topology) hwloc_topology_destroy(hwloc_->topology);
}

bool Topology::bind_thread_to_core(int index) const {
  hwloc_topology_t topo = hwloc_->topology;
  if (!topo || !hwloc_->usable) return false;
  // The cores that hold a CPU of the binding (a launcher may bind to single hardware threads).
  std::vector<hwloc_obj_t> usable_cores;
  for (hwloc_obj_t core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, nullptr); core;
       core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core))
    if (core->cpuset && hwloc_bitmap_intersects(core->cpuset, hwloc_->usable))
      usable_cores.push_back(core);
  if (usable_cores.empty()) return false;
  hwloc_obj_t core = usable_cores[static_cast<std::size_t>(index) % usable_cores.size()];
  if (!core || !core->cpuset) return false;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) return false;
  hwloc_bitmap_and(set, core->cpuset, hwloc_->usable);
  const bool bound = hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD) == 0;
  hwloc_bitmap_free(set);
  return bound;
}

bool Topology::bind_thread_near(const std::string &pci_bus_id) const {
  hwloc_topology_t topo = hwloc_->topology;
  if (!topo || !hwloc_->usable || pci_bus_id.empty()) return false;
  hwloc_obj_t device = hwloc_get_pcidev_by_busidstring(topo, pci_bus_id.c_str());
  if (!device) return false;
  hwloc_obj_t near = hwloc_get_non_io_ancestor_obj(topo, device);
  if (!near || !near->cpuset) return false;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) return false;
  hwloc_bitmap_and(set, near->cpuset, hwloc_->usable);
  const bool bound =
      !hwloc_bitmap_iszero(set) && hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD) == 0;
  hwloc_bitmap_free(set);
  return bound;
}

}  // namespace nanort::rt
