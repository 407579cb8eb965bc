// Asking for a cache line ahead of its use, where the line was written last by another core
// (a task's memory, which the thread that ran it wrote): the transfer then overlaps other work.
#pragma once

namespace nanort::rt {

// For writing: the line comes owned, so the first store does not wait for a second transfer.
inline void prefetch_for_write(const void *address) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char *>(address)));
#else
  __builtin_prefetch(address, 1, 3);
#endif
}

inline void prefetch_for_read(const void *address) { __builtin_prefetch(address, 0, 3); }

}  // namespace nanort::rt
