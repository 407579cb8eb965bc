// TaskPool: memory for Task objects without the system allocator on the hot path.
//
// Tasks are usually created by one thread and freed by another (a worker drops the last
// reference), which makes malloc move memory between arenas under a lock on every task. Here
// each thread keeps a free list; a thread that frees more than it allocates hands whole
// batches to a shared stack, where a thread that allocates more than it frees picks them up,
// one lock per batch instead of per task. Memory returns to the pool, not to the system.
#pragma once

#include <cstddef>

namespace nanort::rt {

struct TaskPool {
  static void *allocate(std::size_t bytes);
  static void deallocate(void *memory) noexcept;
};

}  // namespace nanort::rt
