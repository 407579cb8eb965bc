#include "task_pool.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "spin_lock.hpp"
#include "task.hpp"

namespace nanort::rt {

namespace {

constexpr std::size_t kBlock = (sizeof(Task) + 63) & ~std::size_t(63);
constexpr std::size_t kBatch = 64;

struct FreeBlock {
  FreeBlock *next;
};

// Batches of kBatch free blocks, shared by all threads. Never destroyed: threads may hand
// their blocks back while the program exits.
struct SharedBatches {
  SpinLock lock;
  std::vector<FreeBlock *> batches;
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
      shared().batches.push_back(head);
    }
    head = nullptr;
    count = 0;
  }

  void give_batch() {
    FreeBlock *batch = head;
    FreeBlock *last = head;
    for (std::size_t i = 1; i < kBatch; ++i) last = last->next;
    head = last->next;
    last->next = nullptr;
    count -= kBatch;
    std::lock_guard<SpinLock> guard(shared().lock);
    shared().batches.push_back(batch);
  }

  bool take_batch() {
    std::lock_guard<SpinLock> guard(shared().lock);
    if (shared().batches.empty()) return false;
    head = shared().batches.back();
    shared().batches.pop_back();
    count = 0;
    for (FreeBlock *b = head; b; b = b->next) ++count;
    return true;
  }
};

thread_local ThreadCache cache;

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
