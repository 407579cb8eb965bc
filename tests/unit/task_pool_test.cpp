// TaskPool: blocks freed on one thread come back to another in whole batches, each with its
// length, and none is handed out twice. And the layout of the blocks' contents, a Task: what
// the thread running a task writes shares its first line (task.hpp).
#include "task_pool.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <initializer_list>
#include <new>
#include <set>
#include <thread>
#include <vector>

#include "dependencies.hpp"
#include "reduction.hpp"
#include "task.hpp"

namespace {

using nanort::rt::Task;
using nanort::rt::TaskPool;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kPoolBypassed = true;  // (task_pool.cpp: the system allocator under sanitizers)
#else
constexpr bool kPoolBypassed = false;
#endif

TEST(TaskPool, BlocksFreedByAnotherThreadAreReusedEachOnce) {
  if (kPoolBypassed) GTEST_SKIP() << "SKIP: under a sanitizer every task comes from malloc";
  constexpr std::size_t kBlocks = 1000;
  std::vector<void *> first;
  std::thread maker([&] {
    for (std::size_t i = 0; i < kBlocks; ++i) first.push_back(TaskPool::allocate(sizeof(Task)));
  });
  maker.join();
  ASSERT_EQ(std::set<void *>(first.begin(), first.end()).size(), kBlocks);
  // Freed on another thread, which hands them on in batches, and the rest when it ends.
  std::thread freer([&] {
    for (void *block : first) TaskPool::deallocate(block);
  });
  freer.join();
  std::vector<void *> second;
  std::thread user([&] {
    for (std::size_t i = 0; i < kBlocks; ++i) second.push_back(TaskPool::allocate(sizeof(Task)));
    for (void *block : second) TaskPool::deallocate(block);
  });
  user.join();
  const std::set<void *> reused(second.begin(), second.end());
  EXPECT_EQ(reused.size(), kBlocks) << "a block handed out twice";
  const std::set<void *> freed(first.begin(), first.end());
  std::size_t from_first = 0;
  for (void *block : second) from_first += freed.count(block);
  EXPECT_EQ(from_first, kBlocks) << "every freed block comes back (batches and the thread's rest)";
}

// A task's memory goes from its creator to the thread that runs it and back; each line both
// write moves between their caches once more per task (bench/README.md, "Scaling with workers").
TEST(TaskLayout, WhatTheRunningThreadTouchesSitsInTheFirstLines) {
  Task *task = new Task();
  const auto offset = [task](const void *field) {
    return static_cast<std::size_t>(static_cast<const char *>(field) -
                                    reinterpret_cast<const char *>(task));
  };
  struct Field {
    const char *name;
    const void *address;
  };
  // Every field of 'fields' within the first 'lines' lines.
  const auto expect_within = [&offset](std::initializer_list<Field> fields, std::size_t lines) {
    for (const Field &field : fields)
      EXPECT_LT(offset(field.address), lines * 64)
          << field.name << " left the first " << lines << " line(s)";
  };
  expect_within({{"refs", &task->refs},
                 {"pending", &task->pending},
                 {"released", &task->released},
                 {"successors_lock", &task->successors_lock},
                 {"prune_next", &task->prune_next},
                 {"args_constructed", &task->args_constructed},
                 // (read there by the end of every task instead of lines further down)
                 {"counted_children", &task->counted_children},
                 {"in_domain", &task->in_domain},
                 {"has_successors", &task->has_successors},
                 {"replayed", &task->replayed},
                 {"launched_on", &task->launched_on}},
                1);
  // What else the end of every task reads.
  expect_within({{"site", &task->site},
                 {"impl", &task->impl},
                 {"parent", &task->parent},
                 {"priority", &task->priority},
                 {"child_domain", &task->child_domain},
                 {"errors", &task->errors},
                 {"failed", &task->failed},
                 {"ran_behind_failure", &task->ran_behind_failure},
                 {"reductions", &task->reductions}},
                3);
  EXPECT_LE(offset(&task->args) + sizeof(task->args), 64u) << "args left the first line";
  EXPECT_EQ(offset(&task->alive) % 64, 0u) << "'alive' shares a line (every child writes it)";
  EXPECT_LE(sizeof(Task), 12u * 64) << "a task grew past 12 lines";
  task->drop_ref();
}

TEST(TaskPool, RefusesMoreThanATask) {
  if (kPoolBypassed) GTEST_SKIP() << "SKIP: under a sanitizer every task comes from malloc";
  EXPECT_THROW(TaskPool::allocate(sizeof(Task) + 4096), std::bad_alloc);
}

}  // namespace
