// The Nanos++ routines of include/nanort/omp/nanos.h, answered by nanort through its C ABI
// (part of libnanort-omp, which nanocc / nanocxx link).
#include <nanort/nanort.h>
#include <nanos.h>

#include <cstdlib>

namespace {
unsigned count(nanort_device_kind kind) {
  const int devices = nanort_device_count(kind);
  return devices > 0 ? static_cast<unsigned>(devices) : 0u;
}
}  // namespace

extern "C" {

unsigned int nanos_get_opencl_num_devices(void) { return count(NANORT_DEVICE_OPENCL); }
void nanos_get_opencl_num_devices_(int *result) {
  if (result) *result = static_cast<int>(count(NANORT_DEVICE_OPENCL));
}
unsigned int nanos_get_cuda_num_devices(void) { return count(NANORT_DEVICE_CUDA); }

void *ompss_opencl_malloc(size_t size) { return std::malloc(size); }
void ompss_opencl_free(void *address) { std::free(address); }
void *nanos_malloc_opencl(size_t size) { return std::malloc(size); }
void nanos_free_opencl(void *address) { std::free(address); }

void *nanos_malloc_pinned_cuda(size_t size) {
  void *memory = std::malloc(size);
  // Without a GPU (or when locking fails) the memory is ordinary: staged, not refused.
  if (memory && size) nanort_host_register(memory, size);
  return memory;
}
void nanos_free_pinned_cuda(void *address) {
  if (!address) return;
  nanort_host_unregister(address);  // (an error when it was not locked: nothing to undo)
  std::free(address);
}

}  // extern "C"
