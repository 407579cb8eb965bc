// Task reductions: an operator, the private copies of one reduction, and what a task that takes
// part in reductions remembers.
//
// A ReductionInfo is one reduction: the bytes it combines into (its target), the addresses the
// tasks name for them (its key: the same bytes, unless the reduction is a taskgroup's inside a
// task that reduces them itself), the operator, and the private copies ("slots"). A slot is
// held by one task at a time, from its body's first nanort_reduction_private to its
// completion, and keeps its partial value from task to task: so there are about as many slots
// as CPU workers, not as tasks. A pool worker takes the slot of its own lane when it is free;
// the threads that share the last lane (a thread in taskwait, spare threads) and a worker whose
// slot is held (by a task suspended in a taskwait on that thread, or by a parent whose children
// still run) take any free slot, or a new one.
//
// Who makes them: the dependency domain, for OmpSs-2 reductions among siblings (combined by an
// internal task, DependencyDomain::close_reductions); a taskgroup, for OpenMP's task_reduction
// (combined at its end).
#pragma once

#include <nanort/nanort.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "small_vector.hpp"
#include "spin_lock.hpp"

namespace nanort::rt {

struct Task;

// An operator as the runtime applies it (from nanort_reduction_op, checked).
struct ReductionOp {
  std::uint32_t op = 0;    // nanort_reduction_operator
  std::uint32_t type = 0;  // nanort_reduction_type (built-in operators)
  std::size_t element_size = 0;
  // Built-in operators: whole arrays at once.
  void (*fill_identity)(void *priv, std::size_t count) = nullptr;
  void (*combine_array)(void *out, const void *in, std::size_t count) = nullptr;
  // NANORT_REDUCE_USER: one element at a time.
  void (*initialize)(void *priv, const void *orig) = nullptr;
  void (*combine)(void *out, const void *in) = nullptr;
  void (*destroy)(void *priv) = nullptr;
  const char *name = nullptr;

  bool same_as(const ReductionOp &other) const;
  // "+", "min", "'merge'" for messages.
  std::string describe() const;
};

// Checks 'op' and resolves it; the reason when it is not a valid operator.
std::optional<std::string> resolve_reduction_op(const nanort_reduction_op *op, ReductionOp &out);

class ReductionInfo {
 public:
  ReductionInfo(std::uintptr_t key, std::size_t bytes, unsigned char *target,
                const ReductionOp &op);
  ~ReductionInfo();  // destroys and frees the slots (combined or not)
  ReductionInfo(const ReductionInfo &) = delete;
  ReductionInfo &operator=(const ReductionInfo &) = delete;

  // A free slot for the calling thread ('lane': its pool lane, -1 for other threads), set to
  // the identity the first time; its index goes to 'slot'.
  unsigned char *take_slot(int lane, int &slot);
  void release_slot(int slot);
  // Combines every slot into the target (all their holders are done).
  void combine();

  std::uintptr_t key() const { return key_; }
  std::uintptr_t key_end() const { return key_ + bytes_; }
  std::size_t bytes() const { return bytes_; }
  unsigned char *target() const { return target_; }
  const ReductionOp &op() const { return op_; }

  // A task taking part failed or was not run: the copies are not combined (the original
  // keeps its value; the failure is reported by the taskwait, the tasks after are not run).
  std::atomic<bool> participant_failed{false};

  // Dependency domain only (guarded by its lock): its number there (fragments name it by
  // that, not by address), the tasks that took part (each holding a reference; the released
  // ones are dropped now and then), how many of them are not released yet, and whether a
  // later access closed it (then the last member released combines it).
  std::uint64_t id = 0;
  SmallVector<Task *, 8> members;
  int active = 0;
  bool closed = false;

 private:
  struct Slot {
    unsigned char *storage = nullptr;
    bool in_use = false;
  };
  void initialize(unsigned char *storage);
  void destroy_elements(unsigned char *storage);

  const std::uintptr_t key_;
  const std::size_t bytes_;
  unsigned char *const target_;
  const ReductionOp op_;
  SpinLock lock_;
  std::vector<Slot> slots_;
};

// One reduction clause of a task (reduction or in_reduction).
struct ReductionEntry {
  std::uintptr_t start = 0, end = 0;  // the bytes the task names
  ReductionOp op;
  ReductionInfo *info = nullptr;  // the reduction it takes part in, once known
  // OmpSs-2 reduction: where a new reduction started by this task combines (set at submit:
  // the original, or the parent's private copy when the parent reduces these bytes too).
  unsigned char *target = nullptr;
  unsigned char *storage = nullptr;  // its private bytes for [start, end), once taken
  int slot = -1;                     // of 'info', while held
  bool in_reduction = false;         // OpenMP in_reduction: 'info' is a taskgroup's
  bool in_domain = false;            // a reduction access registered among its siblings
};

struct TaskReductions {
  std::vector<ReductionEntry> entries;
  ReductionEntry *find(std::uintptr_t address);  // the entry whose bytes hold 'address'
};

// An OpenMP taskgroup opened by a task's body (or a thread outside tasks), with the reductions
// of its task_reduction clause.
struct TaskgroupScope {
  struct Item {
    std::uintptr_t key, key_end;
    std::unique_ptr<ReductionInfo> info;
  };
  TaskgroupScope *outer = nullptr;
  const void *owner = nullptr;  // the Task whose body opened it
  SpinLock lock;                // guards 'items' (descendants look them up when created)
  std::vector<Item> items;
};

// In a task's body: its private bytes for 'address' (a slot of the reduction taken at the
// first call, 'lane' the calling thread's pool lane); a task run at once inside a final task
// works on its parent's copy, else the original. Null if it takes part in no reduction there.
unsigned char *reduction_private_of(Task *task, std::uintptr_t address, int lane);
// At the task's completion (its children done and combined): gives its slots back, and marks
// its reductions failed if it failed or was not run.
void release_reduction_slots(Task *task);

}  // namespace nanort::rt
