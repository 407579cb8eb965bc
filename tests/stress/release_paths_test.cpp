// The release stress test: many small tasks whose releases switch between the dependency
// domain's two paths, compared with a sequential model of the same program.
//
// A task that took part in no reduction, held nothing commutative and did not fail, and whose
// successors are all plain CPU tasks, releases them without the domain's lock (under its own
// successors lock, racing with the creator that links new successors to it); every other
// release takes the domain lock (DependencyDomain::release). Here the tasks are small and
// dense on a 256-element array, so that most have successors, and those successors mix plain
// tasks (in, out, inout, concurrent), commutative tasks and OmpSs-2 reductions (over a few
// fixed slots of the array): a predecessor's release takes one path or the other depending on
// who happens to follow it. Some tasks fail (a throwing body, or nanort_task_fail), so that
// the tasks ordered after them are not run; some create children (in modes their own access
// allows), with a taskwait in the middle of them or at the end or none; top-level taskwaits
// come in the middle too.
//
// The sequential model runs the same program in creation order with the rule the runtime
// promises: a task is not run when a task before it (since the last taskwait of the same
// parent) that shares a byte with it in a conflicting mode failed or was not run; a reduction
// with a member that failed or was not run is not combined. Compared, for every graph: the
// final value of each element, the checksum each reading task saw, which tasks ran, and at
// every taskwait (top level and in bodies) whether it reported failures and exactly which
// tasks it names as failed and as not run (nanort_last_error, by task label).
//
//   out, inout    element = element * 31 + h         (order-dependent)
//   in            a checksum of the range            (order-dependent)
//   concurrent    atomic element += h                (commutes)
//   commutative   plain element += h, with a pause   (commutes, but only one at a time)
//   reduction(+)  element += h on the private copy   (one of 8 fixed slots of 4 elements)
//
// Bounded in time: STRESS_SECONDS (default 4, 2 in a sanitizer build, whose graphs are smaller
// too) per case, at least kMinGraphs graphs; STRESS_SEED=<n> starts the seeds at n.
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "stress_watchdog.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define RELEASE_STRESS_RELAX() _mm_pause()
#else
#define RELEASE_STRESS_RELAX() ((void)0)
#endif

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RELEASE_STRESS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define RELEASE_STRESS_SANITIZED 1
#endif
#endif
#ifndef RELEASE_STRESS_SANITIZED
#define RELEASE_STRESS_SANITIZED 0
#endif

namespace {

constexpr std::uint32_t kElements = 256;
constexpr std::uint32_t kReductionSlots = 8;  // slot k: elements [k * 32 + 8, k * 32 + 12)
constexpr std::uint32_t kSlotLength = 4;
constexpr int kMinGraphs = 3;
constexpr bool kSanitized = RELEASE_STRESS_SANITIZED != 0;

enum class Mode { In, Out, Inout, Concurrent, Commutative, Reduce };
enum class Fail { None, Throw, Api };

const char *mode_name(Mode mode) {
  switch (mode) {
    case Mode::In: return "in";
    case Mode::Out: return "out";
    case Mode::Inout: return "inout";
    case Mode::Concurrent: return "concurrent";
    case Mode::Commutative: return "commutative";
    case Mode::Reduce: return "reduction(+)";
  }
  return "?";
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Access {
  std::uint32_t offset, count;
  Mode mode;
  std::uint32_t add;  // h
};

struct Node {
  std::uint32_t id = 0;  // creation order in the whole graph; its label is "r<id>"
  std::string label;
  std::vector<Access> accesses;
  std::uint32_t first_sum = 0;  // checksum slots: one per access
  Fail fail = Fail::None;       // after its effects (and its children)
  bool undeferred = false;
  std::vector<Node> children;
  // Taskwaits in its body (or at the top level): after child (task) i, in increasing order;
  // the value children.size() is one at the end.
  std::vector<std::size_t> waits;
  std::uint32_t first_wait = 0;  // its taskwaits' numbers (see Graph::waits)
};

struct Graph {
  std::uint64_t seed = 0;
  Node top;  // the program itself (id unused): its children are the top-level tasks
  std::uint32_t nodes = 0, sums = 0, waits = 0;
};

// What a taskwait reported: the labels' ids it names as failed and as not run.
struct WaitSeen {
  bool threw = false;
  std::set<std::uint32_t> failed, not_run;
  bool operator==(const WaitSeen &) const = default;
};

std::string describe(const WaitSeen &w) {
  std::ostringstream s;
  s << (w.threw ? "threw" : "did not throw") << ", failed {";
  for (std::uint32_t id : w.failed) s << " " << id;
  s << " }, not run {";
  for (std::uint32_t id : w.not_run) s << " " << id;
  s << " }";
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// Generation

class Generator {
 public:
  Generator(std::uint64_t seed, bool nested) : rng_(seed), nested_(nested) { graph_.seed = seed; }

  Graph make() {
    const std::uint32_t count = kSanitized ? uniform(80, 250) : uniform(300, 1200);
    for (std::uint32_t i = 0; i < count; ++i) {
      Node node = task(nullptr, 0);
      graph_.top.children.push_back(std::move(node));
      if (chance(1, 40)) graph_.top.waits.push_back(graph_.top.children.size());
    }
    graph_.top.waits.push_back(graph_.top.children.size());  // the final taskwait
    number_waits(graph_.top);
    return std::move(graph_);
  }

 private:
  std::uint32_t uniform(std::uint32_t low, std::uint32_t high) {  // [low, high]
    return std::uniform_int_distribution<std::uint32_t>(low, high)(rng_);
  }
  bool chance(int n, int d) { return static_cast<int>(uniform(1, d)) <= n; }

  Mode random_mode() {
    const std::uint32_t r = uniform(0, 99);
    if (r < 25) return Mode::In;
    if (r < 35) return Mode::Out;
    if (r < 60) return Mode::Inout;
    if (r < 70) return Mode::Concurrent;
    if (r < 85) return Mode::Commutative;
    return Mode::Reduce;
  }
  Access random_access(Mode mode) {
    Access a{0, 0, mode, static_cast<std::uint32_t>(rng_()) | 1u};
    if (mode == Mode::Reduce) {
      a.offset = uniform(0, kReductionSlots - 1) * 32 + 8;
      a.count = kSlotLength;
      return a;
    }
    const std::uint32_t r = uniform(0, 99);
    const std::uint32_t length = r < 70 ? uniform(1, 8) : r < 95 ? uniform(8, 32) : uniform(32, 128);
    a.offset = uniform(0, kElements - 1);
    a.count = std::min(length, kElements - a.offset);
    return a;
  }
  // Modes a child may use inside its parent's access of 'mode' (the results stay the same in
  // every order the modes allow).
  Mode child_mode(Mode parent) {
    switch (parent) {
      case Mode::In: return Mode::In;
      case Mode::Concurrent: return Mode::Concurrent;
      case Mode::Commutative: return chance(1, 2) ? Mode::Commutative : Mode::Concurrent;
      default: {
        Mode m = random_mode();
        return m == Mode::Reduce ? Mode::Inout : m;
      }
    }
  }

  // A task: at the top level ('parent' null) with random accesses, else inside the parent's.
  Node task(const Node *parent, int depth) {
    Node node;
    node.id = graph_.nodes++;
    node.label = "r" + std::to_string(node.id);
    const std::uint32_t accesses = uniform(1, parent ? 2 : 3);
    for (std::uint32_t i = 0; i < accesses; ++i) {
      if (!parent) {
        node.accesses.push_back(random_access(random_mode()));
        continue;
      }
      const Access &from =
          parent->accesses[uniform(0, static_cast<std::uint32_t>(parent->accesses.size()) - 1)];
      Access a = random_access(child_mode(from.mode));
      const std::uint32_t first = uniform(0, from.count - 1);
      a.offset = from.offset + first;
      a.count = uniform(1, from.count - first);
      node.accesses.push_back(a);
    }
    // A task with a reduction has no other access (one may not overlap another of its task).
    for (const Access &a : node.accesses)
      if (a.mode == Mode::Reduce) {
        const Access only = a;
        node.accesses.assign(1, only);
        break;
      }
    node.first_sum = graph_.sums;
    graph_.sums += static_cast<std::uint32_t>(node.accesses.size());
    if (chance(1, 100)) node.fail = chance(1, 2) ? Fail::Throw : Fail::Api;
    node.undeferred = chance(1, 50);
    const bool reduces = node.accesses[0].mode == Mode::Reduce;
    if (nested_ && !reduces && depth < 2 && chance(1, depth == 0 ? 5 : 8)) {
      const std::uint32_t children = uniform(1, 5);
      for (std::uint32_t i = 0; i < children; ++i) {
        Node child = task(&node, depth + 1);
        node.children.push_back(std::move(child));
        if (i + 1 < children && chance(1, 4)) node.waits.push_back(node.children.size());
      }
      if (chance(1, 2)) node.waits.push_back(node.children.size());
    }
    return node;
  }

  void number_waits(Node &node) {
    node.first_wait = graph_.waits;
    graph_.waits += static_cast<std::uint32_t>(node.waits.size());
    for (Node &child : node.children) number_waits(child);
  }

  std::mt19937_64 rng_;
  bool nested_;
  Graph graph_;
};

// ---------------------------------------------------------------------------------------------
// The runtime's execution

struct Run {
  std::uint32_t *data;
  std::vector<std::uint64_t> sums;
  std::unique_ptr<std::atomic<bool>[]> ran;
  std::vector<WaitSeen> waits;
  std::atomic<std::uint32_t> bodies{0};
};

// What a writer (out, inout) does to its bytes, in the tasks and in the model alike.
void write(std::uint32_t *data, const Access &a) {
  for (std::uint32_t i = 0; i < a.count; ++i) data[a.offset + i] = data[a.offset + i] * 31u + a.add;
}

std::uint64_t checksum(const std::uint32_t *data, const Access &a) {
  std::uint64_t sum = 0x1234;
  for (std::uint32_t i = 0; i < a.count; ++i) sum = sum * 1000003u + data[a.offset + i];
  return sum;
}

// The ids a failed taskwait names: "task 'r12' (file:line) was not run: ..." or another
// message after the location (a failure).
WaitSeen parse_failures(const std::string &text) {
  WaitSeen seen;
  seen.threw = true;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::string prefix = "task 'r";
    if (line.compare(0, prefix.size(), prefix) != 0) continue;  // (not one of ours)
    const std::uint32_t id =
        static_cast<std::uint32_t>(std::strtoul(line.c_str() + prefix.size(), nullptr, 10));
    if (line.find(" was not run: it depends on ") != std::string::npos)
      seen.not_run.insert(id);
    else
      seen.failed.insert(id);
  }
  return seen;
}

void wait_and_record(Run &run, std::uint32_t number) {
  WaitSeen seen;
  try {
    nanort::taskwait();
  } catch (...) {
    seen = parse_failures(nanort_last_error());
  }
  run.waits[number] = std::move(seen);
}

void spawn(const Node &node, Run &run);

// The children of 'node' with its taskwaits among them.
void spawn_children(const Node &node, Run &run) {
  std::size_t next_wait = 0;
  for (std::size_t i = 0; i <= node.children.size(); ++i) {
    while (next_wait < node.waits.size() && node.waits[next_wait] == i) {
      wait_and_record(run, node.first_wait + static_cast<std::uint32_t>(next_wait));
      ++next_wait;
    }
    if (i < node.children.size()) spawn(node.children[i], run);
  }
}

class Failed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void body(const Node &node, Run &run) {
  run.ran[node.id].store(true, std::memory_order_relaxed);
  std::uint32_t *const data = run.data;
  for (std::size_t k = 0; k < node.accesses.size(); ++k) {
    const Access &a = node.accesses[k];
    switch (a.mode) {
      case Mode::Out:
      case Mode::Inout: write(data, a); break;
      case Mode::In:
        run.sums[node.first_sum + k] = checksum(data, a);
        break;
      case Mode::Concurrent:
        for (std::uint32_t i = 0; i < a.count; ++i)
          std::atomic_ref<std::uint32_t>(data[a.offset + i]).fetch_add(a.add, std::memory_order_relaxed);
        break;
      case Mode::Commutative:
        for (std::uint32_t i = 0; i < a.count; ++i) {
          const std::uint32_t v = data[a.offset + i];
          if ((i & 3) == 0)  // a pause between read and write: a lost update if not alone
            for (int p = 0; p < 8; ++p) RELEASE_STRESS_RELAX();
          data[a.offset + i] = v + a.add;
        }
        break;
      case Mode::Reduce: {
        std::uint32_t *copy = nanort::reduction_private(data + a.offset);
        for (std::uint32_t i = 0; i < a.count; ++i) copy[i] += a.add;
        break;
      }
    }
  }
  spawn_children(node, run);
  run.bodies.fetch_add(1, std::memory_order_relaxed);
  if (node.fail == Fail::Throw) throw Failed("failed on purpose");
  if (node.fail == Fail::Api) nanort_task_fail("failed on purpose", nullptr, nullptr);
}

void spawn(const Node &node, Run &run) {
  nanort::task t(node.label.c_str());
  for (const Access &a : node.accesses) {
    std::uint32_t *first = run.data + a.offset;
    const std::size_t bytes = a.count * sizeof(std::uint32_t);
    switch (a.mode) {
      case Mode::In: t.access(first, bytes, NANORT_IN); break;
      case Mode::Out: t.access(first, bytes, NANORT_OUT); break;
      case Mode::Inout: t.access(first, bytes, NANORT_INOUT); break;
      case Mode::Concurrent: t.access(first, bytes, NANORT_CONCURRENT); break;
      case Mode::Commutative: t.access(first, bytes, NANORT_COMMUTATIVE); break;
      case Mode::Reduce: t.reduction(NANORT_REDUCE_SUM, first, a.count); break;
    }
  }
  if (node.undeferred) t.when(false);
  const Node *n = &node;
  Run *r = &run;
  t.spawn([n, r] { body(*n, *r); });
}

// ---------------------------------------------------------------------------------------------
// The sequential model

class Model {
 public:
  Model(const Graph &g, std::uint32_t *data)
      : sums_(g.sums, 0), ran_(g.nodes, false), waits_(g.waits), data_(data) {}

  // The program: the top-level tasks and taskwaits.
  void run(const Node &top) {
    Level level;
    children(top, level);
  }

  std::vector<std::uint64_t> sums_;
  std::vector<bool> ran_;
  std::vector<WaitSeen> waits_;

 private:
  struct Instance {
    bool poisoned = false;
    std::uint32_t sum = 0;
  };
  struct Entry {
    const Node *node;
    bool poisoned;
    std::vector<std::uint64_t> instances;  // per access: its reduction instance (else 0)
  };
  // One domain (the children of one task) since its last taskwait.
  struct Level {
    std::vector<Entry> history;
    std::map<std::uint32_t, std::pair<std::uint64_t, Instance>> open;  // by slot offset
    WaitSeen errors;  // (threw unused)
  };

  static bool overlap(const Access &a, const Access &b) {
    return a.offset < b.offset + b.count && b.offset < a.offset + a.count;
  }
  static bool joinable(Mode m) {
    return m == Mode::In || m == Mode::Concurrent || m == Mode::Commutative;
  }

  void combine(std::uint32_t offset, const Instance &instance) {
    if (instance.poisoned) return;  // a member failed or was not run: no combination
    for (std::uint32_t i = 0; i < kSlotLength; ++i) data_[offset + i] += instance.sum;
  }

  void children(const Node &node, Level &level) {
    std::size_t next_wait = 0;
    for (std::size_t i = 0; i <= node.children.size(); ++i) {
      while (next_wait < node.waits.size() && node.waits[next_wait] == i) {
        WaitSeen &seen = waits_[node.first_wait + next_wait++];
        seen = level.errors;
        seen.threw = !seen.failed.empty() || !seen.not_run.empty();
        for (auto &[offset, open] : level.open) combine(offset, open.second);
        level = Level{};
      }
      if (i < node.children.size()) task(node.children[i], level);
    }
  }

  void task(const Node &node, Level &level) {
    Entry entry{&node, false, std::vector<std::uint64_t>(node.accesses.size(), 0)};
    // Registration: reductions joined or started, the open ones it touches otherwise closed.
    for (std::size_t k = 0; k < node.accesses.size(); ++k) {
      const Access &a = node.accesses[k];
      if (a.mode == Mode::Reduce) {
        auto it = level.open.find(a.offset);
        if (it == level.open.end())
          it = level.open.emplace(a.offset, std::make_pair(++next_instance_, Instance{})).first;
        entry.instances[k] = it->second.first;
        continue;
      }
      for (auto it = level.open.begin(); it != level.open.end();) {
        if (overlap(a, Access{it->first, kSlotLength, Mode::Reduce, 0})) {
          combine(it->first, it->second.second);
          it = level.open.erase(it);
        } else {
          ++it;
        }
      }
    }
    // Not run: after a conflicting task (since the last taskwait) that failed or was not run.
    bool not_run = false;
    for (const Entry &before : level.history) {
      if (!before.poisoned) continue;
      for (std::size_t x = 0; x < before.node->accesses.size() && !not_run; ++x)
        for (std::size_t y = 0; y < node.accesses.size() && !not_run; ++y) {
          const Access &a = before.node->accesses[x], &b = node.accesses[y];
          if (!overlap(a, b)) continue;
          if (a.mode == b.mode && joinable(a.mode)) continue;
          if (a.mode == Mode::Reduce && b.mode == Mode::Reduce &&
              before.instances[x] == entry.instances[y])
            continue;
          not_run = true;
        }
      if (not_run) break;
    }
    if (not_run) {
      level.errors.not_run.insert(node.id);
    } else {
      ran_[node.id] = true;
      for (std::size_t k = 0; k < node.accesses.size(); ++k) {
        const Access &a = node.accesses[k];
        switch (a.mode) {
          case Mode::Out:
          case Mode::Inout: write(data_, a); break;
          case Mode::In: sums_[node.first_sum + k] = checksum(data_, a); break;
          case Mode::Concurrent:
          case Mode::Commutative:
            for (std::uint32_t i = 0; i < a.count; ++i) data_[a.offset + i] += a.add;
            break;
          case Mode::Reduce: level.open[a.offset].second.sum += a.add; break;
        }
      }
      Level inner;
      children(node, inner);
      // What no taskwait of its body collected goes up to its parent when it completes.
      level.errors.failed.insert(inner.errors.failed.begin(), inner.errors.failed.end());
      level.errors.not_run.insert(inner.errors.not_run.begin(), inner.errors.not_run.end());
      if (node.fail != Fail::None) level.errors.failed.insert(node.id);
    }
    entry.poisoned = not_run || node.fail != Fail::None;
    if (entry.poisoned)
      for (std::size_t k = 0; k < node.accesses.size(); ++k)
        if (node.accesses[k].mode == Mode::Reduce)
          level.open[node.accesses[k].offset].second.poisoned = true;
    level.history.push_back(std::move(entry));
  }

  std::uint32_t *data_;
  std::uint64_t next_instance_ = 0;
};

// ---------------------------------------------------------------------------------------------

std::vector<std::uint32_t> initial_data(std::uint64_t seed) {
  std::vector<std::uint32_t> data(kElements);
  for (std::uint32_t i = 0; i < kElements; ++i)
    data[i] = static_cast<std::uint32_t>(mix(seed * 7919 + i));
  return data;
}

void collect_accesses(const Node &node, std::vector<const Node *> &all) {
  all.push_back(&node);
  for (const Node &child : node.children) collect_accesses(child, all);
}

// Turns a hang into a failure that names the graph: no task body for 30 s ends the process.
// Runs one graph both ways; returns an empty string when they agree.
std::string run_graph(const Graph &g, StressWatchdog &dog) {
  std::vector<std::uint32_t> data = initial_data(g.seed);
  Run run;
  run.data = data.data();
  run.sums.assign(g.sums, 0);
  run.ran = std::make_unique<std::atomic<bool>[]>(g.nodes);
  for (std::uint32_t i = 0; i < g.nodes; ++i) run.ran[i].store(false);
  run.waits.assign(g.waits, WaitSeen{});
  dog.graph(g.seed, 0, &run.bodies);
  spawn_children(g.top, run);  // (ends with a taskwait)
  dog.graph(g.seed, 0, nullptr);

  std::vector<std::uint32_t> expected = initial_data(g.seed);
  Model model(g, expected.data());
  model.run(g.top);

  std::ostringstream problems;
  std::vector<const Node *> all;
  for (const Node &node : g.top.children) collect_accesses(node, all);
  int shown = 0;
  for (const Node *node : all)
    if (run.ran[node->id].load() != model.ran_[node->id] && shown++ < 5)
      problems << "task " << node->id << (model.ran_[node->id] ? " did not run" : " ran")
               << ", sequentially it " << (model.ran_[node->id] ? "runs" : "is not run") << "\n";
  for (std::uint32_t w = 0; w < g.waits; ++w)
    if (!(run.waits[w] == model.waits_[w]) && shown++ < 5)
      problems << "taskwait " << w << " " << describe(run.waits[w]) << "; sequentially it "
               << describe(model.waits_[w]) << "\n";
  for (std::uint32_t e = 0; e < kElements; ++e)
    if (data[e] != expected[e] && shown++ < 5)
      problems << "element " << e << " is " << data[e] << ", sequentially " << expected[e] << "\n";
  for (const Node *node : all)
    for (std::size_t k = 0; k < node->accesses.size(); ++k) {
      const std::uint32_t slot = node->first_sum + static_cast<std::uint32_t>(k);
      if (node->accesses[k].mode == Mode::In && model.ran_[node->id] &&
          run.sums[slot] != model.sums_[slot] && shown++ < 5)
        problems << "task " << node->id << " read " << node->accesses[k].count
                 << " elements from " << node->accesses[k].offset << " ("
                 << mode_name(node->accesses[k].mode)
                 << ") and saw a state other than the sequential one\n";
    }
  if (shown > 5) problems << "(" << shown << " differences in all)\n";
  return problems.str();
}

struct Totals {
  std::uint64_t tasks = 0, not_run = 0, failed = 0;
};

void run_for_a_while(bool nested) {
  StressWatchdog dog(30);
  double seconds = kSanitized ? 2.0 : 4.0;
  if (const char *s = std::getenv("STRESS_SECONDS")) seconds = std::atof(s);
  std::uint64_t base = nested ? 4'000'000 : 3'000'000;
  if (const char *s = std::getenv("STRESS_SEED")) base = std::strtoull(s, nullptr, 10);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int graphs = 0;
  Totals totals;
  for (; graphs < kMinGraphs || elapsed() < seconds; ++graphs) {
    const std::uint64_t seed = base + static_cast<std::uint64_t>(graphs);
    const Graph g = Generator(seed, nested).make();
    totals.tasks += g.nodes;
    const std::string problems = run_graph(g, dog);
    if (!problems.empty()) {
      ADD_FAILURE() << "graph with seed " << seed << " (" << g.nodes << " tasks, "
                    << (nested ? "nested" : "flat") << "; rerun with STRESS_SEED=" << seed
                    << ") differs from the sequential model:\n"
                    << problems;
      return;
    }
  }
  std::printf("%d %s graphs, %llu tasks, %.1f s, seeds %llu..%llu\n", graphs,
              nested ? "nested" : "flat", static_cast<unsigned long long>(totals.tasks),
              elapsed(), static_cast<unsigned long long>(base),
              static_cast<unsigned long long>(base + graphs - 1));
}

TEST(ReleasePaths, Flat) { run_for_a_while(false); }

TEST(ReleasePaths, Nested) { run_for_a_while(true); }

// The generator makes what the test is about: successors of every kind, failures, children,
// taskwaits in bodies; and the model does not run everything (failures do reach successors).
TEST(ReleasePaths, GeneratorAndModelCoverTheCases) {
  const Graph g = Generator(4'000'000, true).make();
  int modes[6] = {}, fails = 0, parents = 0, body_waits = 0;
  std::vector<const Node *> all;
  for (const Node &node : g.top.children) collect_accesses(node, all);
  for (const Node *node : all) {
    for (const Access &a : node->accesses) {
      ++modes[static_cast<int>(a.mode)];
      ASSERT_LE(a.offset + a.count, kElements);
    }
    fails += node->fail != Fail::None;
    parents += !node->children.empty();
    body_waits += static_cast<int>(node->waits.size());
  }
  for (int m = 0; m < 6; ++m) EXPECT_GT(modes[m], 0) << mode_name(static_cast<Mode>(m));
  EXPECT_GT(fails, 0);
  EXPECT_GT(parents, 0);
  EXPECT_GT(body_waits, 0);
  EXPECT_GT(g.top.waits.size(), 1u);
  std::vector<std::uint32_t> data = initial_data(g.seed);
  Model model(g, data.data());
  model.run(g.top);
  const auto ran = static_cast<std::size_t>(std::count(model.ran_.begin(), model.ran_.end(), true));
  EXPECT_GT(ran, g.nodes / 2u);
  EXPECT_LT(ran + static_cast<std::size_t>(fails), g.nodes);  // some are not run
}

}  // namespace
