#include "task_pool.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "hot_tls.hpp"
#include "prefetch.hpp"
#include "spin_lock.hpp"
#include "task.hpp"

namespace nanort::rt {

namespace {

constexpr std::size_t kBlock = (sizeof(Task) + 63) & ~std::size_t(63);
constexpr std::size_t kBatch = 64;

struct FreeBlock {
  FreeBlock *next;
};

// Lists of free blocks, with their lengths (kBatch, or less from a thread that ended), shared
// by all threads. Never destroyed: threads may hand their blocks back while the program exits.
// The length travels with the list: counting it would walk blocks that other cores wrote last,
// one cache miss after another.
struct Batch {
  FreeBlock *head;
  std::size_t count;
};
struct SharedBatches {
  SpinLock lock;
  std::vector<Batch> batches;
};
SharedBatches &shared() {
  static auto *instance = new SharedBatches();
  return *instance;
}

struct ThreadCache {
  FreeBlock *head = nullptr;
  std::size_t count = 0;

  ~ThreadCache() {  // the thread ends: its blocks go to the shared stack
    while (count >= kBatch) give_batch();
    if (head) {
      std::lock_guard<SpinLock> guard(shared().lock);
      shared().batches.push_back(Batch{head, count});
    }
    head = nullptr;
    count = 0;
  }

  void give_batch() {
    // (These blocks were freed by this thread: walking them stays in its own cache.)
    FreeBlock *batch = head;
    FreeBlock *last = head;
    for (std::size_t i = 1; i < kBatch; ++i) last = last->next;
    head = last->next;
    last->next = nullptr;
    count -= kBatch;
    std::lock_guard<SpinLock> guard(shared().lock);
    shared().batches.push_back(Batch{batch, kBatch});
  }

  bool take_batch() {
    std::lock_guard<SpinLock> guard(shared().lock);
    if (shared().batches.empty()) return false;
    head = shared().batches.back().head;
    count = shared().batches.back().count;
    shared().batches.pop_back();
    return true;
  }
};

NANORT_HOT_TLS thread_local ThreadCache cache;

}  // namespace

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Under sanitizers every task comes from the system allocator, so that a use after free or a
// race on a recycled task is seen, not hidden by the pool.
void *TaskPool::allocate(std::size_t bytes) {
  void *memory = std::aligned_alloc(64, (bytes + 63) & ~std::size_t(63));
  if (!memory) throw std::bad_alloc();
  return memory;
}
void TaskPool::deallocate(void *memory) noexcept { std::free(memory); }
#else
void *TaskPool::allocate(std::size_t bytes) {
  if (bytes > kBlock) throw std::bad_alloc();
  if (!cache.head && !cache.take_batch()) {
    void *memory = std::aligned_alloc(64, kBlock);
    if (!memory) throw std::bad_alloc();
    return memory;
  }
  FreeBlock *block = cache.head;
  cache.head = block->next;
  --cache.count;
  // The blocks were last written by the threads that freed them, on other cores: ask for the
  // lines of the block after next now, for writing, so that a task's construction does not
  // wait for them one by one (a store to a line another core owns holds up the stores behind
  // it). (The next block's first line, read here, was asked for by the call before.)
  if (FreeBlock *next = cache.head) {
    if (FreeBlock *after = next->next)
      for (std::size_t offset = 0; offset < kBlock; offset += 64)
        prefetch_for_write(reinterpret_cast<const char *>(after) + offset);
  }
  return block;
}

void TaskPool::deallocate(void *memory) noexcept {
  auto *block = static_cast<FreeBlock *>(memory);
  block->next = cache.head;
  cache.head = block;
  if (++cache.count >= 2 * kBatch) cache.give_batch();
}
#endif

}  // namespace nanort::rt
