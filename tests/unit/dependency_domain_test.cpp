// DependencyDomain, driven by hand: tasks are built directly, registered in the order a parent
// would create them, and released in an order the test chooses. The ready lists say what the
// runtime would hand to the scheduler.
//
// Reference counts: a Task starts with one reference (the test's); the domain takes its own for
// every fragment group that remembers the task, and drops them when it is cleared or destroyed.
// 'pending' starts at 1; register_task removes that guard.
#include <dependencies.hpp>
#include <task.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <vector>

namespace {

using nanort::dc::Region;
using nanort::rt::Access;
using nanort::rt::DependencyDomain;
using nanort::rt::ReadyList;
using nanort::rt::Task;
using nanort::rt::kEarlyAnyDevice;

alignas(64) unsigned char memory[1 << 16];

Access range(std::size_t offset, std::size_t bytes, nanort_access_mode mode) {
  return {Region::contiguous(memory + offset, bytes), mode};
}
Access in(std::size_t offset, std::size_t bytes) { return range(offset, bytes, NANORT_IN); }
Access out(std::size_t offset, std::size_t bytes) { return range(offset, bytes, NANORT_OUT); }
Access inout(std::size_t offset, std::size_t bytes) { return range(offset, bytes, NANORT_INOUT); }
Access concurrent(std::size_t offset, std::size_t bytes) {
  return range(offset, bytes, NANORT_CONCURRENT);
}
Access commutative(std::size_t offset, std::size_t bytes) {
  return range(offset, bytes, NANORT_COMMUTATIVE);
}
// 'rows' rows of 'row_bytes' bytes, 'stride' bytes apart, from 'offset'.
Access block(std::size_t offset, std::size_t row_bytes, std::size_t rows, std::size_t stride,
             nanort_access_mode mode) {
  return {Region::block(memory + offset, row_bytes, rows, stride), mode};
}

using Tasks = std::vector<Task *>;

const nanort_task_site kSite{NANORT_ABI_VERSION, nullptr, nullptr, 0, nullptr, 0, nullptr};

std::set<Task *> as_set(const Tasks &tasks) { return {tasks.begin(), tasks.end()}; }

class Domain : public ::testing::Test {
 protected:
  ~Domain() override {
    for (Task *task : tasks_) task->drop_ref();
    // The domain (a member) is destroyed after this and drops its own references.
  }

  // Creates and registers a task; 'ready_' says what became ready.
  Task *add(std::initializer_list<Access> accesses) { return add_on(nullptr, accesses); }
  // The same for a task whose chosen implementation is 'impl'.
  Task *add_on(const nanort_task_impl *impl, std::initializer_list<Access> accesses) {
    auto *task = new Task();
    task->site = &kSite;  // (as every task a program makes has; 'taskwait on' markers have none)
    task->impl = impl;
    for (const Access &access : accesses) task->accesses.push_back(access);
    return adopt(task);
  }
  // Registers a task built by the test.
  Task *adopt(Task *task) {
    for (const Access &access : task->accesses)
      if (access.mode == NANORT_COMMUTATIVE) task->has_commutative = true;  // as submit does
    tasks_.push_back(task);
    ReadyList ready;
    domain_.register_task(task, ready);
    ready_ = collect(ready);
    return task;
  }

  // Releases a task (it completed); returns what became ready.
  Tasks release(Task *task) {
    EXPECT_TRUE(ever_ready_.count(task)) << "releasing a task that never became ready";
    ReadyList ready;
    domain_.release(task, ready);
    ready_ = collect(ready);
    return ready_;
  }

  // The kernel of 'task' was launched on in-order device 'device': the successors handed to
  // that device before their predecessors end.
  Tasks launched(Task *task, int device) {
    mark_launched(task);
    ReadyList ready;
    domain_.launched(task, device, ready);
    ready_ = collect(ready);
    for (Task *early : ready_) {
      EXPECT_TRUE(early->early_released);
      EXPECT_EQ(early->early_device, device);
    }
    return ready_;
  }

  // What a device's manager does before it reports a launch: the end of the kernel.
  static void mark_launched(Task *task) {
    if (!task->launch_done) task->launch_done = std::make_shared<nanort::dc::DoneCompletion>();
  }

  bool is_ready(Task *task) const { return ever_ready_.count(task) != 0; }

  DependencyDomain domain_;
  Tasks ready_;  // of the last add() or release()

 private:
  Tasks collect(ReadyList &ready) {
    Tasks result(ready.begin(), ready.end());
    for (Task *task : result) {
      EXPECT_TRUE(ever_ready_.insert(task).second) << "a task became ready twice";
      if (task->early_released)  // every predecessor left was launched on its device
        EXPECT_EQ(task->pending, task->pending_launched);
      else
        EXPECT_EQ(task->pending.load(), 0);
    }
    return result;
  }

  Tasks tasks_;
  std::set<Task *> ever_ready_;
};

// ---------------------------------------------------------------------------------------------
// The three classic hazards

TEST_F(Domain, FirstTaskIsReadyAtOnce) {
  Task *w = add({out(0, 100)});
  EXPECT_EQ(ready_, Tasks{w});
}

TEST_F(Domain, TaskWithoutAccessesIsReadyAtOnce) {
  Task *t = add({});
  EXPECT_EQ(ready_, Tasks{t});
}

TEST_F(Domain, ReadAfterWrite) {
  Task *w = add({out(0, 100)});
  Task *r = add({in(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(w), Tasks{r});
}

TEST_F(Domain, WriteAfterRead) {
  Task *r = add({in(0, 100)});
  EXPECT_EQ(ready_, Tasks{r});
  Task *w = add({out(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(r), Tasks{w});
}

TEST_F(Domain, WriteAfterWrite) {
  Task *w1 = add({out(0, 100)});
  Task *w2 = add({inout(0, 100)});
  EXPECT_TRUE(ready_.empty());
  Task *w3 = add({out(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(w1), Tasks{w2});
  EXPECT_EQ(release(w2), Tasks{w3});
}

TEST_F(Domain, DisjointAndAdjacentRangesDoNotOrder) {
  Task *a = add({out(0, 100)});
  EXPECT_EQ(ready_, Tasks{a});
  Task *b = add({out(100, 100)});  // [100, 200) touches [0, 100) but does not overlap
  EXPECT_EQ(ready_, Tasks{b});
  Task *c = add({inout(300, 1)});
  EXPECT_EQ(ready_, Tasks{c});
}

TEST_F(Domain, ChainReleasesOneAtATime) {
  Task *a = add({inout(0, 8)});
  Task *b = add({inout(0, 8)});
  Task *c = add({inout(0, 8)});
  EXPECT_TRUE(is_ready(a));
  EXPECT_FALSE(is_ready(b));
  EXPECT_EQ(release(a), Tasks{b});
  EXPECT_FALSE(is_ready(c));
  EXPECT_EQ(release(b), Tasks{c});
}

TEST_F(Domain, AReleasedPredecessorIsNotWaitedFor) {
  Task *w = add({out(0, 100)});
  release(w);
  Task *r = add({in(0, 100)});
  EXPECT_EQ(ready_, Tasks{r});
  release(r);
  Task *w2 = add({out(0, 100)});
  EXPECT_EQ(ready_, Tasks{w2});
}

// ---------------------------------------------------------------------------------------------
// Readers

TEST_F(Domain, ReadersJoinReaders) {
  Task *r1 = add({in(0, 100)});
  Task *r2 = add({in(0, 100)});
  Task *r3 = add({in(50, 10)});
  EXPECT_TRUE(is_ready(r1) && is_ready(r2) && is_ready(r3));
}

TEST_F(Domain, ReadersAfterAWriterBecomeReadyTogether) {
  Task *w = add({out(0, 100)});
  Task *r1 = add({in(0, 100)});
  Task *r2 = add({in(0, 100)});
  Task *r3 = add({in(0, 50)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(as_set(release(w)), as_set({r1, r2, r3}));
}

TEST_F(Domain, WriterAfterReadersWaitsForEveryReader) {
  Task *r1 = add({in(0, 100)});
  Task *r2 = add({in(0, 100)});
  Task *r3 = add({in(20, 10)});
  Task *w = add({out(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(r2).empty());
  EXPECT_TRUE(release(r1).empty());
  EXPECT_EQ(release(r3), Tasks{w});
}

TEST_F(Domain, ReaderAfterReadersWaitsForTheWriterBeforeThem) {
  Task *w = add({out(0, 100)});
  Task *r1 = add({in(0, 100)});
  Task *r2 = add({in(0, 100)});
  EXPECT_EQ(as_set(release(w)), as_set({r1, r2}));
  Task *r3 = add({in(0, 100)});
  EXPECT_EQ(ready_, Tasks{r3});  // joins the running readers
}

// A large group of readers, some of them finished: a writer waits exactly for the others.
// (Groups of readers drop finished members as they grow.)
TEST_F(Domain, WriterAfterManyReadersWaitsForTheUnfinishedOnes) {
  Tasks running;
  for (int i = 0; i < 300; ++i) {
    Task *r = add({in(0, 64)});
    ASSERT_EQ(ready_, Tasks{r});
    if (i % 3 != 2)
      release(r);
    else
      running.push_back(r);
  }
  Task *w = add({out(0, 64)});
  EXPECT_TRUE(ready_.empty());
  // The oldest reader last: it has been in the group through every pruning.
  std::reverse(running.begin(), running.end());
  for (std::size_t i = 0; i + 1 < running.size(); ++i) {
    EXPECT_TRUE(release(running[i]).empty()) << i;
    EXPECT_FALSE(is_ready(w));
  }
  EXPECT_EQ(release(running.back()), Tasks{w});
}

// ---------------------------------------------------------------------------------------------
// Partial overlaps

TEST_F(Domain, ReaderOfTwoHalvesWaitsForBothWriters) {
  Task *w1 = add({out(0, 1024)});
  Task *w2 = add({out(1024, 1024)});
  EXPECT_TRUE(is_ready(w1) && is_ready(w2));
  Task *r = add({in(512, 1024)});  // [512, 1536)
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(w1).empty());
  EXPECT_EQ(release(w2), Tasks{r});
}

TEST_F(Domain, ReaderOfTwoHalvesWaitsForBothWritersReleasedInReverse) {
  Task *w1 = add({out(0, 1024)});
  Task *w2 = add({out(1024, 1024)});
  Task *r = add({in(512, 1024)});
  EXPECT_TRUE(release(w2).empty());
  EXPECT_EQ(release(w1), Tasks{r});
}

TEST_F(Domain, WriterInsideALargerReadWaitsOnlyForTheReader) {
  Task *r = add({in(0, 1000)});
  Task *w = add({out(400, 100)});
  EXPECT_TRUE(ready_.empty());
  Task *r2 = add({in(0, 100)});  // outside the writer: joins the first reader
  EXPECT_EQ(ready_, Tasks{r2});
  Task *r3 = add({in(450, 10)});  // inside the writer
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(r), Tasks{w});
  EXPECT_EQ(release(w), Tasks{r3});
}

// One predecessor met on several fragments counts once: a single release frees the task.
TEST_F(Domain, APredecessorOnSeveralFragmentsIsOneEdge) {
  Task *w = add({out(0, 300)});
  release(w);
  Task *a = add({out(0, 300)});
  Task *b = add({out(100, 100)});  // cuts a's range into three fragments; waits for a
  EXPECT_TRUE(ready_.empty());
  Task *r = add({in(0, 300)});  // a, b, a
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(a), Tasks{b});
  EXPECT_EQ(release(b), Tasks{r});
}

TEST_F(Domain, ManyAccessesOfOneTask) {
  Task *w1 = add({out(0, 10)});
  Task *w2 = add({out(100, 10)});
  Task *w3 = add({out(200, 10)});
  Task *r = add({in(0, 10), in(100, 10), inout(200, 10), in(300, 10)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(w3).empty());
  EXPECT_TRUE(release(w1).empty());
  EXPECT_EQ(release(w2), Tasks{r});
}

// ---------------------------------------------------------------------------------------------
// Concurrent

TEST_F(Domain, ConcurrentTasksAreReadyTogether) {
  Task *c1 = add({concurrent(0, 100)});
  Task *c2 = add({concurrent(0, 100)});
  Task *c3 = add({concurrent(50, 100)});
  EXPECT_TRUE(is_ready(c1) && is_ready(c2) && is_ready(c3));
}

TEST_F(Domain, ConcurrentGroupAfterAWriter) {
  Task *w = add({out(0, 100)});
  Task *c1 = add({concurrent(0, 100)});
  Task *c2 = add({concurrent(0, 100)});
  Task *c3 = add({concurrent(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(as_set(release(w)), as_set({c1, c2, c3}));
}

TEST_F(Domain, ReaderAfterConcurrentGroupWaitsForAllOfIt) {
  Task *c1 = add({concurrent(0, 100)});
  Task *c2 = add({concurrent(0, 100)});
  Task *c3 = add({concurrent(0, 100)});
  Task *r = add({in(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(c2).empty());
  EXPECT_TRUE(release(c1).empty());
  EXPECT_EQ(release(c3), Tasks{r});
}

TEST_F(Domain, ConcurrentAfterReadersWaitsForTheReadersNotForEachOther) {
  Task *r1 = add({in(0, 100)});
  Task *r2 = add({in(0, 100)});
  Task *c1 = add({concurrent(0, 100)});
  Task *c2 = add({concurrent(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(r1).empty());
  EXPECT_EQ(as_set(release(r2)), as_set({c1, c2}));
  Task *w = add({inout(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(c1).empty());
  EXPECT_EQ(release(c2), Tasks{w});
}

TEST_F(Domain, ConcurrentAndReadersDoNotJoinEachOther) {
  Task *c = add({concurrent(0, 100)});
  Task *r = add({in(0, 100)});
  EXPECT_TRUE(ready_.empty());
  Task *c2 = add({concurrent(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(c), Tasks{r});
  EXPECT_EQ(release(r), Tasks{c2});
}

// ---------------------------------------------------------------------------------------------
// Commutative

TEST_F(Domain, CommutativeTasksRunOneAtATime) {
  Task *c1 = add({commutative(0, 100)});
  EXPECT_EQ(ready_, Tasks{c1});
  Task *c2 = add({commutative(0, 100)});
  EXPECT_TRUE(ready_.empty());
  Task *c3 = add({commutative(0, 100)});
  EXPECT_TRUE(ready_.empty());
  Tasks next = release(c1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_TRUE(next[0] == c2 || next[0] == c3);
  Tasks last = release(next[0]);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(as_set({next[0], last[0]}), as_set({c2, c3}));
  EXPECT_TRUE(release(last[0]).empty());
}

TEST_F(Domain, CommutativeGroupAfterAWriterStillRunsOneAtATime) {
  Task *w = add({out(0, 100)});
  Task *c1 = add({commutative(0, 100)});
  Task *c2 = add({commutative(0, 100)});
  EXPECT_TRUE(ready_.empty());
  Tasks first = release(w);
  ASSERT_EQ(first.size(), 1u);
  Tasks second = release(first[0]);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(as_set({first[0], second[0]}), as_set({c1, c2}));
}

TEST_F(Domain, ReaderAfterCommutativeGroupWaitsForAllOfIt) {
  Task *c1 = add({commutative(0, 100)});
  Task *c2 = add({commutative(0, 100)});
  Task *r = add({in(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(c1), Tasks{c2});
  EXPECT_EQ(release(c2), Tasks{r});
}

TEST_F(Domain, CommutativeOnDisjointRangesRunTogether) {
  Task *a = add({commutative(0, 100)});
  Task *b = add({commutative(100, 100)});
  EXPECT_TRUE(is_ready(a) && is_ready(b));
}

TEST_F(Domain, CommutativePartialOverlapsAreExclusiveOnlyWhereTheyOverlap) {
  Task *c1 = add({commutative(0, 100)});    // [0, 100)
  Task *c2 = add({commutative(50, 100)});   // [50, 150): overlaps c1 and c3
  Task *c3 = add({commutative(100, 100)});  // [100, 200): disjoint from c1
  EXPECT_TRUE(is_ready(c1));
  EXPECT_FALSE(is_ready(c2));
  EXPECT_TRUE(is_ready(c3));
  EXPECT_TRUE(release(c1).empty());  // c3 still holds [100, 150)
  EXPECT_EQ(release(c3), Tasks{c2});
}

TEST_F(Domain, CommutativeWithASecondAccessWaitsForItsPredecessorAndTheOwner) {
  Task *c1 = add({commutative(0, 100)});
  Task *w = add({out(500, 10)});
  Task *c2 = add({commutative(0, 100), in(500, 10)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(w).empty());  // its predecessor is done, but c1 owns [0, 100)
  EXPECT_EQ(release(c1), Tasks{c2});
}

// ---------------------------------------------------------------------------------------------
// A task never waits for itself

TEST_F(Domain, OverlappingAccessesOfOneTaskDoNotMakeItWaitForItself) {
  Task *t = add({in(0, 100), out(50, 100)});
  EXPECT_EQ(ready_, Tasks{t});
  Task *r = add({in(0, 150)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(t), Tasks{r});
}

TEST_F(Domain, SameRangeTwiceInDifferentModes) {
  Task *t1 = add({out(0, 64), in(0, 64)});
  EXPECT_EQ(ready_, Tasks{t1});
  Task *t2 = add({in(0, 64), inout(0, 64)});
  EXPECT_TRUE(ready_.empty());
  Task *t3 = add({concurrent(0, 64), commutative(0, 64), in(0, 32)});
  EXPECT_TRUE(ready_.empty());
  Task *t4 = add({commutative(0, 64), commutative(0, 64)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(t1), Tasks{t2});
  EXPECT_EQ(release(t2), Tasks{t3});
  EXPECT_EQ(release(t3), Tasks{t4});
}

TEST_F(Domain, SelfOverlapAfterAWriterWaitsOnlyForTheWriter) {
  Task *w = add({out(0, 200)});
  Task *t = add({inout(0, 100), in(50, 100), concurrent(80, 50)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(w), Tasks{t});
}

// ---------------------------------------------------------------------------------------------
// 2-D blocks: a 16 x 64-byte matrix

constexpr std::size_t kRow = 64;

TEST_F(Domain, DisjointColumnBlocksDoNotOrder) {
  Task *left = add({block(0, 16, 16, kRow, NANORT_OUT)});    // columns [0, 16)
  Task *right = add({block(16, 16, 16, kRow, NANORT_OUT)});  // columns [16, 32)
  EXPECT_TRUE(is_ready(left) && is_ready(right));
}

TEST_F(Domain, RowAcrossColumnBlocksWaitsForBoth) {
  Task *left = add({block(0, 16, 16, kRow, NANORT_OUT)});
  Task *right = add({block(16, 16, 16, kRow, NANORT_OUT)});
  Task *row = add({in(3 * kRow, kRow)});  // row 3, all columns
  EXPECT_TRUE(ready_.empty());
  Task *far = add({block(32, 32, 16, kRow, NANORT_IN)});  // columns [32, 64): untouched
  EXPECT_EQ(ready_, Tasks{far});
  EXPECT_TRUE(release(right).empty());
  EXPECT_EQ(release(left), Tasks{row});
}

TEST_F(Domain, BlockOverlappingTwoBlocksWaitsForBoth) {
  Task *a = add({block(0, 16, 8, kRow, NANORT_OUT)});        // rows 0-7, columns [0, 16)
  Task *b = add({block(8 * kRow, 16, 8, kRow, NANORT_OUT)});  // rows 8-15, columns [0, 16)
  Task *c = add({block(6 * kRow + 8, 16, 4, kRow, NANORT_INOUT)});  // rows 6-9, columns [8, 24)
  EXPECT_TRUE(ready_.empty());
  Task *d = add({block(6 * kRow + 24, 8, 4, kRow, NANORT_IN)});  // rows 6-9, columns [24, 32)
  EXPECT_EQ(ready_, Tasks{d});
  EXPECT_TRUE(release(a).empty());
  EXPECT_EQ(release(b), Tasks{c});
}

TEST_F(Domain, BlockBetweenTheRowsOfAnotherDoesNotOrder) {
  // Rows 0, 2, 4, ...: 8 rows of 64 bytes, 128 apart; then rows 1, 3, 5, ...
  Task *even = add({block(0, kRow, 8, 2 * kRow, NANORT_OUT)});
  Task *odd = add({block(kRow, kRow, 8, 2 * kRow, NANORT_OUT)});
  EXPECT_TRUE(is_ready(even) && is_ready(odd));
  Task *all = add({in(0, 16 * kRow)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(odd).empty());
  EXPECT_EQ(release(even), Tasks{all});
}

// Tiles: a block named again exactly is one fragment, however many rows it has; whatever
// overlaps it partly turns it into rows first, and the order is the same either way.

constexpr std::size_t kTile = 16;  // tiles of 16 rows of 16 bytes, in rows of 64 bytes

Access tile(std::size_t ti, std::size_t tj, nanort_access_mode mode) {
  return block(ti * kTile * kRow + tj * kTile, kTile, kTile, kRow, mode);
}

TEST_F(Domain, TilesAreOneFragmentEach) {
  Task *w00 = add({tile(0, 0, NANORT_OUT)});
  Task *w01 = add({tile(0, 1, NANORT_OUT)});
  EXPECT_EQ(domain_.fragment_count(), 2u);  // not 32: one per tile
  Task *gemm = add({tile(0, 0, NANORT_IN), tile(0, 1, NANORT_INOUT)});
  Task *reader = add({tile(0, 0, NANORT_IN)});
  EXPECT_EQ(domain_.fragment_count(), 2u);
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(w00), Tasks{reader});  // gemm waits for w01 too
  EXPECT_EQ(release(w01), Tasks{gemm});
  release(reader);
  release(gemm);
  EXPECT_EQ(domain_.fragment_count(), 0u);  // all done: forgotten
}

// A matrix whose rows do not start at a multiple of the stride (malloc's matrices rarely do):
// measured from address 0, its second column of tiles would wrap past the end of a row; the
// plane starts at the first tile, so every tile stays one fragment.
TEST_F(Domain, TilesOfAMatrixAtAnyAddressAreOneFragmentEach) {
  constexpr std::size_t kBase = 40;  // (the tile at column 1 spans bytes 56 to 72 mod 64)
  const auto at = [](std::size_t ti, std::size_t tj, nanort_access_mode mode) {
    return block(kBase + ti * kTile * kRow + tj * kTile, kTile, kTile, kRow, mode);
  };
  std::vector<Task *> writers, readers;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) writers.push_back(add({at(i, j, NANORT_OUT)}));
  EXPECT_EQ(domain_.fragment_count(), 16u);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) readers.push_back(add({at(i, j, NANORT_IN)}));
  EXPECT_EQ(domain_.fragment_count(), 16u);
  for (std::size_t t = 0; t < writers.size(); ++t)
    EXPECT_EQ(release(writers[t]), Tasks{readers[t]}) << "tile " << t;
  for (Task *reader : readers) release(reader);
  EXPECT_EQ(domain_.fragment_count(), 0u);
}

// Tasks released without the domain lock hold their memory until their fragments are
// forgotten; with no registration coming (a creator in taskwait), the release that makes the
// list of them 64 long forgets them, so that their memory goes back while it is warm.
TEST_F(Domain, TasksReleasedWithoutTheLockAreForgottenSixtyFourAtATime) {
  std::vector<Task *> writers;
  for (std::size_t i = 0; i < 64; ++i) writers.push_back(add({out(i * 8, 8)}));
  const int held = writers[0]->refs.load();  // the test's, and its fragment's
  for (std::size_t i = 0; i < 63; ++i) release(writers[i]);
  EXPECT_EQ(writers[0]->refs.load(), held + 1) << "kept on the list, with its fragment";
  release(writers[63]);
  EXPECT_EQ(writers[0]->refs.load(), held - 1) << "list and fragment forgotten";
  EXPECT_EQ(writers[63]->refs.load(), held - 1);
}

TEST_F(Domain, RowThroughTilesTurnsThemIntoRows) {
  Task *w00 = add({tile(0, 0, NANORT_OUT)});
  Task *w01 = add({tile(0, 1, NANORT_OUT)});
  Task *w10 = add({tile(1, 0, NANORT_OUT)});
  Task *row = add({in(3 * kRow, kRow)});  // row 3: through tiles (0, 0) and (0, 1)
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(domain_.fragment_count(), 1u + 2 * kTile + 1);  // tile (1, 0) stays whole
  // A writer of tile (0, 0) again, now row by row, waits for both the writer and the row.
  Task *again = add({tile(0, 0, NANORT_INOUT)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_TRUE(release(w01).empty());
  EXPECT_EQ(release(w00), Tasks{row});
  EXPECT_EQ(release(row), Tasks{again});
  EXPECT_TRUE(release(w10).empty());
}

TEST_F(Domain, ShiftedBlockTurnsTheTilesItCrossesIntoRows) {
  Task *w00 = add({tile(0, 0, NANORT_OUT)});
  Task *w11 = add({tile(1, 1, NANORT_OUT)});
  Task *w03 = add({tile(0, 3, NANORT_OUT)});
  // 16 x 16 bytes from row 8, column 8: a quarter of (0, 0), of (0, 1), of (1, 0), of (1, 1).
  Task *shifted = add({block(8 * kRow + 8, kTile, kTile, kRow, NANORT_IN)});
  EXPECT_TRUE(ready_.empty());
  Task *w03_again = add({tile(0, 3, NANORT_INOUT)});  // untouched: still one fragment
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(w03), Tasks{w03_again});
  EXPECT_TRUE(release(w11).empty());
  EXPECT_EQ(release(w00), Tasks{shifted});
}

TEST_F(Domain, TilesOfTwoStridesOrderWhereTheyOverlap) {
  // The same bytes seen as a 16 x 64 matrix and as a 32 x 32 one.
  Task *a = add({block(0, 16, 4, 64, NANORT_OUT)});  // rows 0-3 of the first, columns [0, 16)
  Task *b = add({block(32, 16, 4, 32, NANORT_IN)});  // bytes 32-47, 64-79, 96-111, 128-143
  EXPECT_TRUE(ready_.empty());                       // 64-79 is a's row 1
  Task *c = add({block(16, 16, 2, 32, NANORT_IN)});  // bytes 16-31, 48-63: not a's
  EXPECT_EQ(ready_, Tasks{c});
  EXPECT_EQ(release(a), Tasks{b});
}

TEST_F(Domain, CommutativeTilesRunOneAtATime) {
  Task *c1 = add({tile(0, 0, NANORT_COMMUTATIVE)});
  Task *c2 = add({tile(0, 0, NANORT_COMMUTATIVE)});
  EXPECT_TRUE(is_ready(c1));
  EXPECT_FALSE(is_ready(c2));
  // A partial reader turns the owned tile into rows; the ownership goes with them.
  Task *r = add({in(2 * kRow, 8)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(release(c1), Tasks{c2});
  EXPECT_EQ(release(c2), Tasks{r});
}

// ---------------------------------------------------------------------------------------------
// History

TEST_F(Domain, ClearForgetsHistory) {
  Task *w = add({out(0, 100)});
  Task *w2 = add({out(200, 100)});
  EXPECT_EQ(domain_.fragment_count(), 2u);
  release(w);
  release(w2);
  domain_.clear();
  EXPECT_EQ(domain_.fragment_count(), 0u);
  Task *r = add({in(0, 300)});
  EXPECT_EQ(ready_, Tasks{r});
}

TEST_F(Domain, FragmentsFollowTheCuts) {
  add({out(0, 100)});
  EXPECT_EQ(domain_.fragment_count(), 1u);
  add({in(25, 50)});
  EXPECT_EQ(domain_.fragment_count(), 3u);
  add({in(100, 50)});
  EXPECT_EQ(domain_.fragment_count(), 4u);
}

TEST(DomainEdges, EdgesAreCountedWhenTheDomainGoes) {
  const std::uint64_t before = DependencyDomain::total_edges();
  auto *w = new Task();
  auto *r1 = new Task();
  auto *r2 = new Task();
  w->accesses.push_back(out(0, 10));
  r1->accesses.push_back(in(0, 10));
  r2->accesses.push_back(in(0, 10));
  {
    DependencyDomain domain;
    ReadyList ready;
    domain.register_task(w, ready);
    domain.register_task(r1, ready);
    domain.register_task(r2, ready);
    EXPECT_EQ(ready.size(), 1u);
    ReadyList after;
    domain.release(w, after);
    EXPECT_EQ(after.size(), 2u);
  }
  EXPECT_EQ(DependencyDomain::total_edges() - before, 2u);
  w->drop_ref();
  r1->drop_ref();
  r2->drop_ref();
}

// ---------------------------------------------------------------------------------------------
// Early start behind kernels launched on an in-order device

const nanort_task_impl kCuda{NANORT_DEVICE_CUDA, nullptr, "k", nullptr, nullptr, 0};
const nanort_task_impl kOpenCl{NANORT_DEVICE_OPENCL, nullptr, "k", nullptr, nullptr, 0};
const nanort_task_impl kSmp{NANORT_DEVICE_SMP, nullptr, nullptr, nullptr, nullptr, 0};

TEST_F(Domain, SuccessorFollowsItsLaunchedPredecessorOnTheDevice) {
  Task *p = add_on(&kCuda, {inout(0, 100)});
  Task *t = add_on(&kCuda, {inout(0, 100)});
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(launched(p, 3), Tasks{t});
  EXPECT_TRUE(release(p).empty()) << "handed out twice";
  EXPECT_EQ(t->pending.load(), 0);
  Task *u = add_on(&kCuda, {in(0, 100)});  // registered after t's launch is not known
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(launched(t, 3), Tasks{u});
  // (u, handed out early, holds a reference until t is released: it may end first.)
  EXPECT_TRUE(release(t).empty()) << "handed out twice";
  EXPECT_EQ(u->pending.load(), 0);
}

TEST_F(Domain, SuccessorRegisteredAfterTheLaunchFollowsAtOnce) {
  Task *p = add_on(&kCuda, {out(0, 100)});
  EXPECT_TRUE(launched(p, 0).empty());
  Task *t = add_on(&kCuda, {in(0, 50), in(50, 50)});
  EXPECT_EQ(ready_, Tasks{t});
  EXPECT_TRUE(t->early_released);
  EXPECT_EQ(t->early_device, 0);
  EXPECT_TRUE(release(p).empty());
}

TEST_F(Domain, NoEarlyStartAcrossDevicesOrKinds) {
  Task *a = add_on(&kCuda, {out(0, 100)});
  Task *b = add_on(&kCuda, {out(100, 100)});
  Task *t = add_on(&kCuda, {in(0, 200)});
  EXPECT_TRUE(launched(a, 0).empty());
  EXPECT_TRUE(launched(b, 1).empty()) << "its predecessors run on two devices";
  EXPECT_TRUE(release(a).empty());
  EXPECT_EQ(release(b), Tasks{t});
  EXPECT_FALSE(t->early_released);

  Task *c = add_on(&kCuda, {out(300, 10)});
  Task *o = add_on(&kOpenCl, {in(300, 10)});
  EXPECT_TRUE(launched(c, 0).empty()) << "another kind of device";
  EXPECT_EQ(release(c), Tasks{o});

  Task *d = add_on(&kCuda, {out(400, 10)});
  Task *h = add_on(&kSmp, {in(400, 10)});
  EXPECT_TRUE(launched(d, 0).empty()) << "a CPU task";
  EXPECT_EQ(release(d), Tasks{h});

  Task *e = add_on(&kCuda, {out(500, 10)});
  Task *placed = new Task();  // placed by the program on another device
  placed->impl = &kCuda;
  placed->placed_device = 1;
  placed->accesses.push_back(in(500, 10));
  adopt(placed);
  EXPECT_TRUE(launched(e, 0).empty()) << "placed elsewhere";
  EXPECT_EQ(release(e), Tasks{placed});
}

// Devices of a kind that wait for each other's kernels (CUDA peers, say): a successor of
// kernels launched on several of them goes early too, to any of them, carrying the kernels'
// ends to wait for there.
TEST_F(Domain, EarlyStartAcrossDevicesThatWaitForEachOther) {
  struct AcrossCuda {  // for this test only
    AcrossCuda() { DependencyDomain::set_early_across_kinds(1u << NANORT_DEVICE_CUDA); }
    ~AcrossCuda() { DependencyDomain::set_early_across_kinds(0); }
  } across;
  Task *a = add_on(&kCuda, {out(0, 100)});
  Task *b = add_on(&kCuda, {out(100, 100)});
  Task *t = add_on(&kCuda, {in(0, 200)});
  mark_launched(a);
  mark_launched(b);
  ReadyList ready;
  const int refs = t->refs.load();
  domain_.launched(a, 0, ready);
  EXPECT_TRUE(ready.empty()) << "b is not launched yet";
  domain_.launched(b, 1, ready);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0], t);
  EXPECT_TRUE(t->early_released);
  EXPECT_EQ(t->early_device, kEarlyAnyDevice);
  EXPECT_EQ(t->pending, t->pending_launched);
  ASSERT_EQ(t->early_after.size(), 2u);
  EXPECT_EQ(t->early_after[0].first, 0);
  EXPECT_EQ(t->early_after[0].second, a->launch_done);
  EXPECT_EQ(t->early_after[1].first, 1);
  EXPECT_EQ(t->early_after[1].second, b->launch_done);
  EXPECT_EQ(t->refs.load(), refs + 1) << "alive until a and b are released: it may end first";
  ready.clear();
  domain_.release(a, ready);
  EXPECT_EQ(t->refs.load(), refs + 1);
  domain_.release(b, ready);
  EXPECT_EQ(t->refs.load(), refs);
  EXPECT_TRUE(ready.empty()) << "handed out twice";
  EXPECT_EQ(t->pending.load(), 0);
  EXPECT_EQ(t->pending_launched, 0);
  EXPECT_EQ(a->launch_done, nullptr) << "kept past its release";

  // Placed by the program on a third device: it waits there for both.
  Task *c = add_on(&kCuda, {out(300, 10)});
  Task *placed = new Task();
  placed->impl = &kCuda;
  placed->placed_device = 2;
  placed->accesses.push_back(in(300, 10));
  adopt(placed);
  mark_launched(c);
  domain_.launched(c, 0, ready);
  EXPECT_EQ(ready.size(), 1u);
  EXPECT_TRUE(placed->early_released);
  EXPECT_EQ(placed->early_device, kEarlyAnyDevice);
  ready.clear();
  domain_.release(c, ready);
  EXPECT_TRUE(ready.empty());

  // Not for a kind whose devices do not wait for each other.
  Task *d = add_on(&kOpenCl, {out(400, 10)});
  Task *e = add_on(&kOpenCl, {out(410, 10)});
  Task *u = add_on(&kOpenCl, {in(400, 20)});
  mark_launched(d);
  mark_launched(e);
  domain_.launched(d, 3, ready);
  domain_.launched(e, 4, ready);
  EXPECT_TRUE(ready.empty()) << "OpenCL devices here do not wait for each other";
  domain_.release(d, ready);
  domain_.release(e, ready);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0], u);
  EXPECT_FALSE(u->early_released);
}

TEST_F(Domain, EarlyStartWaitsForEveryOtherPredecessor) {
  Task *c = add_on(&kSmp, {out(200, 10)});
  Task *p = add_on(&kCuda, {out(0, 100)});
  Task *t = add_on(&kCuda, {in(0, 100), in(200, 10)});
  EXPECT_TRUE(launched(p, 2).empty()) << "the CPU task is not done";
  EXPECT_EQ(release(c), Tasks{t});
  EXPECT_TRUE(t->early_released) << "only the launched kernel left";
  EXPECT_EQ(t->early_device, 2);
  EXPECT_TRUE(release(p).empty());
}

// ---------------------------------------------------------------------------------------------
// After a failure: the tasks ordered after a failed task are marked not to run

TEST_F(Domain, SuccessorsOfAFailedTaskAreMarkedNotToRun) {
  Task *w = add({out(0, 100)});
  Task *r = add({in(0, 100), out(200, 10)});
  Task *rr = add({in(200, 10)});
  Task *other = add({out(400, 10)});
  EXPECT_EQ(ready_, Tasks{other});
  w->label = "w";
  r->label = "r";
  w->failed = true;
  EXPECT_EQ(release(w), Tasks{r}) << "released as usual, to be ended unrun";
  ASSERT_TRUE(r->not_run_after);
  EXPECT_EQ(*r->not_run_after, "task 'w', which failed");
  EXPECT_FALSE(rr->not_run_after) << "marked when r ends, not before";
  EXPECT_EQ(release(r), Tasks{rr});
  ASSERT_TRUE(rr->not_run_after);
  EXPECT_EQ(*rr->not_run_after, "task 'r', which was not run");
  EXPECT_FALSE(other->not_run_after);
}

TEST_F(Domain, ATaskRegisteredAfterTheFailedOneEndedIsMarkedToo) {
  Task *w = add({out(0, 100)});
  w->failed = true;
  EXPECT_TRUE(release(w).empty());
  // The failed task's fragment stays until the domain is cleared (the taskwait).
  EXPECT_EQ(domain_.fragment_count(), 1u);
  Task *late = add({in(50, 10)});
  EXPECT_EQ(ready_, Tasks{late}) << "nothing to wait for";
  EXPECT_TRUE(late->not_run_after);
  // A task that succeeded leaves nothing behind, as before.
  Task *fine = add({out(1000, 10)});
  EXPECT_TRUE(release(fine).empty());
  Task *after_fine = add({in(1000, 10)});
  EXPECT_FALSE(after_fine->not_run_after);
  domain_.clear();
  Task *after_taskwait = add({in(0, 100)});
  EXPECT_FALSE(after_taskwait->not_run_after) << "the taskwait forgets the failure";
}

TEST_F(Domain, WritersAfterAFailedReaderAreNotRunEither) {
  Task *r = add({in(0, 100)});
  Task *w = add({out(0, 100)});
  r->failed = true;
  EXPECT_EQ(release(r), Tasks{w});
  EXPECT_TRUE(w->not_run_after) << "every task ordered after it";
}

// A task not to run is not launched early behind its launched predecessor: it waits for it,
// and is then ended unrun (launched, it would be ended while that kernel still lists it).
TEST_F(Domain, ATaskNotToRunIsNotLaunchedEarly) {
  Task *p = add_on(&kSmp, {out(0, 10)});
  Task *q = add_on(&kCuda, {out(100, 10)});
  Task *s = add_on(&kCuda, {in(0, 10), inout(100, 10)});
  EXPECT_TRUE(launched(q, 2).empty()) << "the CPU task is not done";
  p->failed = true;
  EXPECT_TRUE(release(p).empty()) << "not launched behind q, though only q is left";
  EXPECT_FALSE(s->early_released);
  ASSERT_TRUE(s->not_run_after);
  EXPECT_EQ(release(q), Tasks{s});
}

// A successor already launched behind the kernel that failed runs (or fails) on its device;
// the tasks after it are not run.
TEST_F(Domain, TasksAfterOneLaunchedBehindAFailedKernelAreNotRun) {
  Task *q = add_on(&kCuda, {out(0, 10)});
  Task *s = add_on(&kCuda, {inout(0, 10)});
  Task *after = add_on(&kSmp, {in(0, 10)});
  EXPECT_EQ(launched(q, 1), Tasks{s});
  q->failed = true;
  EXPECT_TRUE(release(q).empty()) << "s is on its device already";
  EXPECT_FALSE(s->not_run_after) << "handed out: not touched";
  EXPECT_EQ(release(s), Tasks{after});
  ASSERT_TRUE(after->not_run_after);
  EXPECT_NE(after->not_run_after->find("which ran behind a failed task"), std::string::npos)
      << *after->not_run_after;
}

// Readers after a failed writer are all not run, but the group keeps only one of them once
// they are done: a long loop of readers does not pile up.
TEST_F(Domain, ReadersAfterAFailureDoNotPileUp) {
  Task *w = add({out(0, 10)});
  w->failed = true;
  EXPECT_TRUE(release(w).empty());
  Tasks readers;
  for (int i = 0; i < 500; ++i) {
    Task *r = add({in(0, 10)});
    readers.push_back(r);
    ASSERT_TRUE(r->not_run_after);
    EXPECT_TRUE(release(r).empty());
  }
  int still_held = 0;  // readers the domain still holds a reference to
  for (Task *t : readers)
    if (t->refs.load() > 1) ++still_held;
  EXPECT_LE(still_held, 64);
  Task *writer = add({out(0, 10)});
  EXPECT_TRUE(writer->not_run_after) << "a writer after the readers is not run either";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Reductions (OmpSs-2): a group of its own, combined when the last member is released

namespace reductions {

using nanort::rt::ReductionEntry;
using nanort::rt::ReductionOp;
using nanort::rt::TaskReductions;

const nanort_reduction_op kSumInt{NANORT_ABI_VERSION, NANORT_REDUCE_SUM, NANORT_TYPE_INT, 0,
                                  nullptr, nullptr, nullptr, nullptr};
const nanort_reduction_op kMaxInt{NANORT_ABI_VERSION, NANORT_REDUCE_MAX, NANORT_TYPE_INT, 0,
                                  nullptr, nullptr, nullptr, nullptr};

int *ints(std::size_t offset) { return reinterpret_cast<int *>(memory + offset); }

class Reductions : public Domain {
 protected:
  // A task reducing 'count' ints from byte 'offset' with 'op', as nanort_task_reduction and
  // submit make it.
  Task *reducer(std::size_t offset, std::size_t count, const nanort_reduction_op &op) {
    auto *task = new Task();
    task->site = &kSite;
    ReductionEntry entry;
    EXPECT_FALSE(nanort::rt::resolve_reduction_op(&op, entry.op).has_value());
    entry.start = reinterpret_cast<std::uintptr_t>(memory + offset);
    entry.end = entry.start + count * sizeof(int);
    entry.target = memory + offset;
    task->reductions = std::make_unique<TaskReductions>();
    task->reductions->entries.push_back(entry);
    task->accesses.push_back(range(offset, count * sizeof(int), nanort::rt::kReductionAccess));
    return adopt(task);
  }
  // The body of 'task', on worker 'lane': 'value' into each of its elements' private copies;
  // then what completion does before the release.
  Tasks run_and_release(Task *task, int lane, int value) {
    ReductionEntry &entry = task->reductions->entries[0];
    int *copy = reinterpret_cast<int *>(
        nanort::rt::reduction_private_of(task, entry.start, lane));
    const std::size_t count = (entry.end - entry.start) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) copy[i] += value;
    nanort::rt::release_reduction_slots(task);
    return release(task);
  }
};

TEST_F(Reductions, ReducersRunTogetherAfterTheWriterAndTheReaderWaitsForTheCombination) {
  std::fill(ints(0), ints(0) + 4, 0);
  Task *w = add({out(0, 4 * sizeof(int))});
  Task *r1 = reducer(0, 4, kSumInt);
  Task *r2 = reducer(0, 4, kSumInt);
  Task *r3 = reducer(2 * sizeof(int), 2, kSumInt);  // a section inside: the same reduction
  EXPECT_TRUE(ready_.empty());
  Task *reader = add({in(0, sizeof(int))});
  std::fill(ints(0), ints(0) + 4, 10);  // what the writer wrote
  EXPECT_EQ(as_set(release(w)), as_set({r1, r2, r3}));
  EXPECT_TRUE(run_and_release(r1, 0, 1).empty());
  EXPECT_TRUE(run_and_release(r3, 1, 100).empty());
  EXPECT_EQ(ints(0)[0], 10) << "combined before the last member ended";
  EXPECT_EQ(run_and_release(r2, 0, 2), Tasks{reader});  // lane 0 again: the same copy
  EXPECT_EQ(ints(0)[0], 13);
  EXPECT_EQ(ints(0)[1], 13);
  EXPECT_EQ(ints(0)[2], 113);
  EXPECT_EQ(ints(0)[3], 113);
  EXPECT_EQ(domain_.open_reduction_count(), 0u);
  release(reader);
}

TEST_F(Reductions, AnAccessAfterEveryMemberEndedCombinesAtOnce) {
  std::fill(ints(64), ints(64) + 2, 5);
  Task *r1 = reducer(64, 2, kSumInt);
  Task *r2 = reducer(64, 2, kSumInt);
  EXPECT_EQ(as_set(ready_), as_set({r2}));  // (r1 was ready at its own add)
  run_and_release(r1, 0, 1);
  run_and_release(r2, 1, 1);
  EXPECT_EQ(ints(64)[0], 5) << "combined while the reduction could still grow";
  EXPECT_EQ(domain_.open_reduction_count(), 1u);
  Task *r3 = reducer(64, 2, kSumInt);  // joins the open reduction
  EXPECT_EQ(ready_, Tasks{r3});
  run_and_release(r3, 0, 1);
  Task *reader = add({in(64, 2 * sizeof(int))});
  EXPECT_EQ(ready_, Tasks{reader});
  EXPECT_EQ(ints(64)[0], 8);
  EXPECT_EQ(ints(64)[1], 8);
  release(reader);
}

TEST_F(Reductions, AnotherOperatorWaitsForTheCombination) {
  std::fill(ints(128), ints(128) + 1, 1);
  Task *sum = reducer(128, 1, kSumInt);
  Task *max = reducer(128, 1, kMaxInt);
  EXPECT_TRUE(ready_.empty());
  EXPECT_EQ(run_and_release(sum, 0, 6), Tasks{max});
  EXPECT_EQ(ints(128)[0], 7);
  // The max copy starts at INT_MIN: 7 stays unless a larger value comes.
  run_and_release(max, 0, 0);
  domain_.clear();  // (the taskwait)
  EXPECT_EQ(ints(128)[0], 7);
}

TEST_F(Reductions, AFailedMemberMeansNoCombinationAndTheReaderIsNotRun) {
  std::fill(ints(192), ints(192) + 1, 3);
  Task *r1 = reducer(192, 1, kSumInt);
  Task *r2 = reducer(192, 1, kSumInt);
  Task *reader = add({in(192, sizeof(int))});
  r1->failed = true;
  run_and_release(r1, 0, 50);
  EXPECT_EQ(run_and_release(r2, 1, 1), Tasks{reader});
  ASSERT_NE(reader->not_run_after, nullptr);
  EXPECT_EQ(ints(192)[0], 3);
  release(reader);
}

TEST_F(Reductions, TaskwaitCombinesTheOpenReductions) {
  std::fill(ints(256), ints(256) + 1, 0);
  Task *r1 = reducer(256, 1, kSumInt);
  run_and_release(r1, 0, 9);
  EXPECT_EQ(ints(256)[0], 0);
  domain_.clear();
  EXPECT_EQ(ints(256)[0], 9);
}

}  // namespace reductions

namespace reductions {

// A task over part of a reduction ends it; a later task over another part must still wait
// for every member, since the combination writes all the bytes at the last one's release.
TEST_F(Reductions, AfterTheEndEveryByteWaitsForTheCombination) {
  std::fill(ints(320), ints(320) + 8, 0);
  Task *whole = reducer(320, 8, kSumInt);
  Task *front = reducer(320, 6, kSumInt);  // joins: its bytes are inside
  Task *middle = add({inout(320 + sizeof(int), 5 * sizeof(int))});  // ends the reduction
  Task *last = add({inout(320 + 7 * sizeof(int), sizeof(int))});    // bytes only 'whole' names
  EXPECT_TRUE(ready_.empty()) << "ran before the combination of the bytes it writes";
  EXPECT_TRUE(run_and_release(whole, 0, 1).empty()) << "the last byte's writer went first";
  EXPECT_EQ(ints(320)[7], 0);
  EXPECT_EQ(as_set(run_and_release(front, 1, 2)), as_set({middle, last}));
  EXPECT_EQ(ints(320)[7], 1);
  EXPECT_EQ(ints(320)[0], 3);
  release(middle);
  release(last);
}

}  // namespace reductions
