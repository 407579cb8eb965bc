// DependencyDomain's 2-D blocks, differentially: seeded random programs of 2-D accesses are
// registered and released in random orders in two domains, one given each block as one
// access (which BlockMap keeps whole until something overlaps it partly) and one given the
// same block as its rows, one contiguous access each (which no domain keeps as a block).
// After every registration and release both must hand out the same tasks, and those must be
// what a byte-level model says: a task is ready exactly when every earlier task (since the last
// clear) that shares a byte with it in a conflicting mode has been released, except that tasks
// with commutative accesses run one at a time where those bytes overlap (a task left waiting
// overlaps one that runs), and a task after a failed or unrun one is marked not to run.
//
// The accesses: exact tiles of a matrix whose first row starts at an address that is not a
// multiple of its stride (the tiles named again and again), blocks shifted across tiles, parts
// of rows and ranges over several rows, and blocks of a second view of the same bytes with
// another stride. Domain by domain, every fragment is forgotten once every task is released
// and none failed. 400 programs (seeds 9000 on); DOMAIN_RANDOM_PROGRAMS=<n> runs n of them.
//
// A second test registers and releases at the same time, from several threads, as the
// runtime does: the creator links new tasks to predecessors that workers are releasing, most
// of them without the domain lock (plain successors), some with it (commutative successors).
#include <dependencies.hpp>
#include <task.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nanort::dc::Region;
using nanort::rt::Access;
using nanort::rt::DependencyDomain;
using nanort::rt::ReadyList;
using nanort::rt::Task;

constexpr std::size_t kMemory = 16384;
alignas(64) unsigned char memory[kMemory];

const nanort_task_site kSite{NANORT_ABI_VERSION, nullptr, nullptr, 0, nullptr, 0, nullptr};

// A 2-D access in the test's terms: 'rows' rows of 'row_bytes' bytes, 'stride' apart, from
// byte 'offset' of 'memory' (one row: a range).
struct Shape {
  std::size_t offset, row_bytes, rows, stride;
  nanort_access_mode mode;
};

std::string describe(const Shape &s) {
  std::ostringstream out;
  static const char *const names[] = {"?", "in", "out", "inout", "concurrent", "commutative"};
  out << names[s.mode] << " ";
  if (s.rows == 1)
    out << "[" << s.offset << ", " << s.offset + s.row_bytes << ")";
  else
    out << s.rows << " x " << s.row_bytes << " at " << s.offset << " (stride " << s.stride << ")";
  return out.str();
}

// The bytes of a shape, as a bitset over 'memory' (words [low, high) hold them all).
struct Bytes {
  std::vector<std::uint64_t> words = std::vector<std::uint64_t>(kMemory / 64, 0);
  std::size_t low = kMemory / 64, high = 0;
  void add(const Shape &s) {
    for (std::size_t r = 0; r < s.rows; ++r)
      for (std::size_t b = 0; b < s.row_bytes; ++b) {
        const std::size_t at = s.offset + r * s.stride + b;
        words[at / 64] |= std::uint64_t(1) << (at % 64);
        low = std::min(low, at / 64);
        high = std::max(high, at / 64 + 1);
      }
  }
  bool overlaps(const Bytes &other) const {
    for (std::size_t w = std::max(low, other.low); w < std::min(high, other.high); ++w)
      if (words[w] & other.words[w]) return true;
    return false;
  }
};

struct Planned {
  std::vector<Shape> shapes;
  std::vector<Bytes> bytes;  // per shape
  Bytes commutative;         // its commutative bytes
  bool has_commutative = false;
  bool fails = false;  // when it runs
};

class Program {
 public:
  explicit Program(std::uint64_t seed) : rng_(seed) {
    // The matrix: rows start at an address that is no multiple of the stride.
    static const std::size_t strides[] = {56, 72, 100, 128, 136, 192};
    stride_ = strides[uniform(0, 5)];
    base_ = uniform(1, 200);
    while ((reinterpret_cast<std::uintptr_t>(memory) + base_) % stride_ == 0) ++base_;
    tile_rows_ = uniform(2, 8);
    tile_bytes_ = uniform(4, 24);
    tiles_down_ = uniform(2, 4);
    tiles_across_ = std::max<std::size_t>(1, std::min<std::size_t>(4, stride_ / tile_bytes_));
    rows_ = tile_rows_ * tiles_down_;
    width_ = tile_bytes_ * tiles_across_;  // (<= the stride)
    other_stride_ = stride_ + (uniform(0, 1) ? 8 : stride_ / 2);
  }

  Planned task() {
    Planned p;
    const std::size_t count = uniform(1, 3);
    for (std::size_t i = 0; i < count; ++i) {
      Shape s = shape();
      s.mode = mode();
      p.shapes.push_back(s);
      Bytes b;
      b.add(s);
      p.bytes.push_back(b);
      if (s.mode == NANORT_COMMUTATIVE) {
        p.has_commutative = true;
        p.commutative.add(s);
      }
    }
    p.fails = uniform(0, 79) == 0;
    return p;
  }

  std::size_t uniform(std::size_t low, std::size_t high) {
    return std::uniform_int_distribution<std::size_t>(low, high)(rng_);
  }

 private:
  nanort_access_mode mode() {
    const std::size_t r = uniform(0, 99);
    if (r < 30) return NANORT_IN;
    if (r < 40) return NANORT_OUT;
    if (r < 65) return NANORT_INOUT;
    if (r < 80) return NANORT_CONCURRENT;
    return NANORT_COMMUTATIVE;
  }
  Shape shape() {
    const std::size_t r = uniform(0, 99);
    if (r < 55) {  // an exact tile
      const std::size_t ti = uniform(0, tiles_down_ - 1), tj = uniform(0, tiles_across_ - 1);
      return {base_ + ti * tile_rows_ * stride_ + tj * tile_bytes_, tile_bytes_, tile_rows_,
              stride_, NANORT_IN};
    }
    if (r < 70) {  // a block at any place and of any shape inside the matrix
      const std::size_t y = uniform(0, rows_ - 1), x = uniform(0, width_ - 1);
      const std::size_t h = uniform(1, rows_ - y), w = uniform(1, width_ - x);
      return {base_ + y * stride_ + x, w, h, stride_, NANORT_IN};
    }
    if (r < 80) {  // part of a row
      const std::size_t y = uniform(0, rows_ - 1), x = uniform(0, width_ - 1);
      return {base_ + y * stride_ + x, uniform(1, width_ - x), 1, 0, NANORT_IN};
    }
    if (r < 88) {  // a range over several rows
      const std::size_t start = uniform(0, (rows_ - 1) * stride_);
      const std::size_t length = uniform(1, 3 * stride_);
      return {base_ + start, std::min(length, rows_ * stride_ - start), 1, 0, NANORT_IN};
    }
    // A block of the same bytes seen with another stride (its own tiles named again too).
    const std::size_t other_rows = rows_ * stride_ / other_stride_;
    const std::size_t h = uniform(2, std::min<std::size_t>(6, other_rows));
    const std::size_t y = uniform(0, other_rows - h);
    const std::size_t x = uniform(0, 1) ? 0 : uniform(0, width_ / 2);
    return {base_ + y * other_stride_ + x, std::min(tile_bytes_, other_stride_ - x), h,
            other_stride_, NANORT_IN};
  }

  std::mt19937_64 rng_;
  std::size_t stride_, base_, tile_rows_, tile_bytes_, tiles_down_, tiles_across_, rows_,
      width_, other_stride_;
};

bool joinable(nanort_access_mode mode) {
  return mode == NANORT_IN || mode == NANORT_CONCURRENT || mode == NANORT_COMMUTATIVE;
}

// Whether a task of 'a' must wait for an earlier task of 'b' (they share a byte in modes that
// do not join each other).
bool conflict(const Planned &later, const Planned &earlier) {
  for (std::size_t x = 0; x < later.shapes.size(); ++x)
    for (std::size_t y = 0; y < earlier.shapes.size(); ++y) {
      const nanort_access_mode m = later.shapes[x].mode, n = earlier.shapes[y].mode;
      if (m == n && joinable(m)) continue;
      if (later.bytes[x].overlaps(earlier.bytes[y])) return true;
    }
  return false;
}

Task *make_task(const Planned &p, bool as_blocks) {
  auto *task = new Task();
  task->site = &kSite;
  for (const Shape &s : p.shapes) {
    if (s.rows == 1 || as_blocks) {
      task->accesses.push_back(
          {Region::block(memory + s.offset, s.row_bytes, s.rows, s.rows == 1 ? s.row_bytes : s.stride),
           s.mode});
      continue;
    }
    for (std::size_t r = 0; r < s.rows; ++r)
      task->accesses.push_back(
          {Region::contiguous(memory + s.offset + r * s.stride, s.row_bytes), s.mode});
  }
  task->has_commutative = p.has_commutative;  // (as submit does)
  return task;
}

// One random program, both ways and in the model; returns what went wrong, or "".
std::string run_program(std::uint64_t seed, std::size_t &blocks_seen) {
  Program program(seed);
  std::mt19937_64 order(seed * 31 + 7);
  const auto pick = [&order](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(order);
  };
  auto blocks = std::make_unique<DependencyDomain>();
  auto rows = std::make_unique<DependencyDomain>();
  std::vector<Planned> planned;
  std::vector<Task *> in_blocks, in_rows;
  // Model state, per task: the earlier conflicting tasks, ready, released, not to run.
  std::vector<std::vector<std::size_t>> waits_for;
  std::vector<bool> ready, released, not_run;
  std::vector<std::size_t> running;
  std::size_t segment_start = 0;
  std::ostringstream problems;
  std::string step;

  const auto task_text = [&](std::size_t i) {
    std::ostringstream out;
    out << "task " << i << " {";
    for (const Shape &s : planned[i].shapes) out << " " << describe(s);
    out << " }";
    return out.str();
  };
  // Checks one step's ready lists against each other and against the model.
  const auto check = [&](ReadyList &from_blocks, ReadyList &from_rows) {
    std::set<std::size_t> a, b;
    for (Task *t : from_blocks) {
      const auto i = static_cast<std::size_t>(std::find(in_blocks.begin(), in_blocks.end(), t) - in_blocks.begin());
      if (!a.insert(i).second || ready[i]) problems << step << ": " << task_text(i) << " became ready twice\n";
    }
    for (Task *t : from_rows)
      b.insert(static_cast<std::size_t>(std::find(in_rows.begin(), in_rows.end(), t) - in_rows.begin()));
    if (a != b) {
      problems << step << ": with blocks {";
      for (std::size_t i : a) problems << " " << i;
      problems << " } became ready, row by row {";
      for (std::size_t i : b) problems << " " << i;
      problems << " }\n";
    }
    for (std::size_t i : a) {
      ready[i] = true;
      running.push_back(i);
      bool wrong = false, unrun = false;
      for (std::size_t j : waits_for[i]) {
        wrong = wrong || !released[j];
        unrun = unrun || not_run[j] || planned[j].fails;
      }
      not_run[i] = unrun;
      if (wrong) problems << step << ": " << task_text(i) << " became ready before an earlier conflicting task was released\n";
      if ((in_blocks[i]->not_run_after != nullptr) != unrun ||
          (in_rows[i]->not_run_after != nullptr) != unrun)
        problems << step << ": " << task_text(i) << (unrun ? " is not marked" : " is marked")
                 << " not to run\n";
    }
    // Commutative tasks that run do not overlap there; one that may run but waits overlaps one.
    for (std::size_t x = 0; x < running.size(); ++x)
      for (std::size_t y = x + 1; y < running.size(); ++y)
        if (planned[running[x]].commutative.overlaps(planned[running[y]].commutative))
          problems << step << ": " << task_text(running[x]) << " and " << task_text(running[y])
                   << " run at once on the same commutative bytes\n";
    for (std::size_t i = segment_start; i < planned.size(); ++i) {
      if (ready[i]) continue;
      bool may = true;
      for (std::size_t j : waits_for[i]) may = may && released[j];
      if (!may) continue;
      bool held = false;
      for (std::size_t r : running)
        held = held || planned[i].commutative.overlaps(planned[r].commutative);
      if (!held) problems << step << ": " << task_text(i) << " waits for nothing but is not ready\n";
    }
  };

  const std::size_t segments = program.uniform(1, 3);
  for (std::size_t segment = 0; segment < segments && problems.str().empty(); ++segment) {
    const std::size_t count = program.uniform(20, 90);
    const std::size_t end = planned.size() + count;
    bool any_failed = false;
    while (problems.str().empty()) {
      const bool can_add = planned.size() < end;
      if (!can_add && running.empty()) break;
      ReadyList from_blocks, from_rows;
      if (can_add && (running.empty() || pick(3) == 0)) {
        const std::size_t i = planned.size();
        planned.push_back(program.task());
        waits_for.emplace_back();
        for (std::size_t j = segment_start; j < i; ++j)
          if (conflict(planned[i], planned[j])) waits_for[i].push_back(j);
        ready.push_back(false);
        released.push_back(false);
        not_run.push_back(false);
        in_blocks.push_back(make_task(planned[i], true));
        in_rows.push_back(make_task(planned[i], false));
        step = "registering " + task_text(i);
        blocks->register_task(in_blocks[i], from_blocks);
        rows->register_task(in_rows[i], from_rows);
        // Now and then: whether a block is kept whole (looking forgets released tasks' fragments
        // at once, which changes nothing the model sees).
        if (pick(8) == 0) blocks_seen += blocks->fragment_count() < rows->fragment_count();
      } else {
        const std::size_t at = pick(running.size());
        const std::size_t i = running[at];
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(at));
        released[i] = true;
        const bool fails = planned[i].fails && !not_run[i];
        any_failed = any_failed || fails || not_run[i];
        in_blocks[i]->failed = in_rows[i]->failed = fails;
        step = "releasing " + task_text(i);
        blocks->release(in_blocks[i], from_blocks);
        rows->release(in_rows[i], from_rows);
      }
      check(from_blocks, from_rows);
    }
    if (!any_failed && problems.str().empty()) {
      if (blocks->fragment_count() != 0)
        problems << "every task released: " << blocks->fragment_count()
                 << " fragments left with blocks\n";
      if (rows->fragment_count() != 0)
        problems << "every task released: " << rows->fragment_count()
                 << " fragments left row by row\n";
    }
    // A taskwait: the history goes.
    blocks->clear();
    rows->clear();
    segment_start = planned.size();
  }
  blocks.reset();
  rows.reset();
  for (Task *t : in_blocks) t->drop_ref();
  for (Task *t : in_rows) t->drop_ref();
  return problems.str();
}

TEST(DomainBlocksRandom, BlocksAndRowsAgreeWithTheByteModel) {
  const int kPrograms = std::getenv("DOMAIN_RANDOM_PROGRAMS") ? std::atoi(std::getenv("DOMAIN_RANDOM_PROGRAMS")) : 400;
  std::size_t blocks_seen = 0;
  for (int p = 0; p < kPrograms; ++p) {
    const std::uint64_t seed = 9000 + static_cast<std::uint64_t>(p);
    const std::string problems = run_program(seed, blocks_seen);
    if (!problems.empty()) {
      std::string shown = problems.substr(0, 3000);
      ADD_FAILURE() << "program with seed " << seed << " differs from the model:\n" << shown;
      return;
    }
  }
  // Blocks were kept whole (fewer fragments than row by row) at some moments.
  EXPECT_GT(blocks_seen, 100u);
}

// ---------------------------------------------------------------------------------------------
// Registration and release at the same time

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kConcurrentTasks = 4000;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr std::size_t kConcurrentTasks = 4000;
#else
constexpr std::size_t kConcurrentTasks = 60000;
#endif
#else
constexpr std::size_t kConcurrentTasks = 60000;
#endif

TEST(DomainConcurrent, RegistrationRacesReleasesWithAndWithoutTheLock) {
  // Tasks on 32 slots of 8 bytes, whole slots only: their direct predecessors are those of
  // the domain's own rule per slot (the group before when joining one, else the current one),
  // worked out here beforehand; a worker checks them released before it releases a task.
  constexpr std::size_t kSlots = 32;
  std::mt19937_64 rng(77);
  const auto uniform = [&rng](std::size_t low, std::size_t high) {
    return std::uniform_int_distribution<std::size_t>(low, high)(rng);
  };
  struct Planned {
    std::vector<std::pair<std::size_t, nanort_access_mode>> slots;
    std::vector<std::size_t> predecessors;
  };
  std::vector<Planned> plan(kConcurrentTasks);
  struct SlotState {
    std::vector<std::size_t> previous, current;
    nanort_access_mode mode = NANORT_IN;
  };
  std::vector<SlotState> slot_state(kSlots);
  for (std::size_t i = 0; i < kConcurrentTasks; ++i) {
    const std::size_t count = uniform(1, 2);
    const std::size_t first = uniform(0, kSlots - 1);
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t r = uniform(0, 99);
      const nanort_access_mode mode = r < 35   ? NANORT_IN
                                      : r < 75 ? NANORT_INOUT
                                      : r < 88 ? NANORT_CONCURRENT
                                               : NANORT_COMMUTATIVE;
      plan[i].slots.emplace_back((first + k * uniform(1, 3)) % kSlots, mode);
    }
    if (plan[i].slots.size() == 2 && plan[i].slots[0].first == plan[i].slots[1].first)
      plan[i].slots.pop_back();
    for (const auto &[slot, mode] : plan[i].slots) {
      SlotState &s = slot_state[slot];
      if (joinable(mode) && s.mode == mode && !s.current.empty()) {
        plan[i].predecessors.insert(plan[i].predecessors.end(), s.previous.begin(), s.previous.end());
        s.current.push_back(i);
        continue;
      }
      plan[i].predecessors.insert(plan[i].predecessors.end(), s.current.begin(), s.current.end());
      s.previous = joinable(mode) ? s.current : std::vector<std::size_t>{};
      s.current.assign(1, i);
      s.mode = mode;
    }
  }

  alignas(64) static unsigned char slots_memory[kSlots * 8];
  DependencyDomain domain;
  std::vector<Task *> tasks(kConcurrentTasks);
  std::unique_ptr<std::atomic<bool>[]> released(new std::atomic<bool>[kConcurrentTasks]);
  std::unique_ptr<std::atomic<int>[]> owners(new std::atomic<int>[kSlots]);
  for (std::size_t i = 0; i < kConcurrentTasks; ++i) {
    released[i].store(false);
    tasks[i] = new Task();
    tasks[i]->site = &kSite;
    tasks[i]->line = static_cast<int>(i);  // (its index, for the workers)
    for (const auto &[slot, mode] : plan[i].slots) {
      tasks[i]->accesses.push_back({Region::contiguous(slots_memory + slot * 8, 8), mode});
      tasks[i]->has_commutative = tasks[i]->has_commutative || mode == NANORT_COMMUTATIVE;
    }
  }
  for (std::size_t s = 0; s < kSlots; ++s) owners[s].store(0);

  std::mutex mutex;
  std::condition_variable more;
  std::deque<std::size_t> ready;
  std::size_t done = 0;
  std::atomic<int> problems{0};
  std::string first_problem;
  const auto index_of = [](Task *t) { return static_cast<std::size_t>(t->line); };
  const auto hand_out = [&](ReadyList &list) {
    if (list.empty()) return;
    std::lock_guard<std::mutex> guard(mutex);
    for (Task *t : list) ready.push_back(index_of(t));
    more.notify_all();
  };
  const auto problem = [&](const std::string &what) {
    std::lock_guard<std::mutex> guard(mutex);
    if (problems++ == 0) first_problem = what;
  };

  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w)
    workers.emplace_back([&] {
      for (;;) {
        std::size_t i;
        {
          std::unique_lock<std::mutex> lock(mutex);
          more.wait(lock, [&] { return !ready.empty() || done == kConcurrentTasks; });
          if (ready.empty()) return;
          i = ready.front();
          ready.pop_front();
        }
        for (std::size_t p : plan[i].predecessors)
          if (!released[p].load(std::memory_order_acquire))
            problem("task " + std::to_string(i) + " became ready before task " +
                    std::to_string(p) + " was released");
        for (const auto &[slot, mode] : plan[i].slots)
          if (mode == NANORT_COMMUTATIVE && owners[slot].fetch_add(1) != 0)
            problem("task " + std::to_string(i) + " runs with another commutative one on slot " +
                    std::to_string(slot));
        std::this_thread::yield();
        for (const auto &[slot, mode] : plan[i].slots)
          if (mode == NANORT_COMMUTATIVE) owners[slot].fetch_sub(1);
        released[i].store(true, std::memory_order_release);
        ReadyList list;
        domain.release(tasks[i], list);
        hand_out(list);
        std::lock_guard<std::mutex> guard(mutex);
        if (++done == kConcurrentTasks) more.notify_all();
      }
    });
  for (std::size_t i = 0; i < kConcurrentTasks; ++i) {
    ReadyList list;
    domain.register_task(tasks[i], list);
    hand_out(list);
  }
  for (std::thread &worker : workers) worker.join();

  EXPECT_EQ(problems.load(), 0) << first_problem;
  EXPECT_EQ(done, kConcurrentTasks);
  std::size_t edges = 0;
  for (const Planned &p : plan) edges += p.predecessors.size();
  EXPECT_GT(edges, kConcurrentTasks);  // (the plan does order most tasks)
  EXPECT_EQ(domain.fragment_count(), 0u);  // every one released: all forgotten
  domain.clear();
  for (Task *t : tasks) t->drop_ref();
}

}  // namespace
