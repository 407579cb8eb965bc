// The random task-graph test: seeded random task graphs over a small array, run by the runtime
// and compared with a sequential execution of the same tasks in creation order.
//
// Every task names 1 to 3 random ranges of a 4096-element array (sometimes 2-D blocks of its
// 64 x 64 view, some of them 8 x 8 tiles named again exactly, which the dependency domain
// keeps whole until something overlaps them partly), overlapping each other and other tasks' ranges at random, with random modes.
// What a task does with a range depends on the mode, and is chosen so that any execution the
// access modes allow gives exactly the sequential result, while any execution they forbid is
// very likely to give another:
//   out, inout    element = element * 31 + h         (order-dependent)
//   in            a checksum of the range, stored in a slot of the task (order-dependent)
//   concurrent    atomic element += h                (commutes, safe together)
//   commutative   plain element += h, with a pause   (commutes, but only one at a time)
//   reduction(+)  plain element += h on the task's private copy (nanort::reduction_private),
//                 contiguous spans only, the task's only access (commutes; copies combined
//                 before the next other access); a reducer's children reduce too
// Nested graphs: some tasks create children on sub-ranges of their own accesses (in modes the
// parent's mode allows), then wait for them or not; some are final. Some top-level tasks are
// undeferred; some have priorities; taskwait and taskwait-on checkpoints appear in the middle
// and are checked against the sequential state at that point. One graph in three is
// read-mostly on a hot spot of the array.
//
// Bounded in time: graphs run until STRESS_SECONDS (default 6) have passed, at least
// kMinGraphs of them. Each graph's seed is printed on failure; STRESS_SEED=<n> starts the
// seeds at n (graph i uses n + i).
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "stress_watchdog.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define STRESS_RELAX() _mm_pause()
#else
#define STRESS_RELAX() ((void)0)
#endif

namespace {

constexpr std::uint32_t kWidth = 64;
constexpr std::uint32_t kElements = kWidth * kWidth;  // 4096
constexpr int kMinGraphs = 5;
constexpr int kMaxGraphs = 100000;  // in practice the time bound stops first

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The test's own name for a reduction(+) access (not a nanort_access_mode: the task declares it
// with task::reduction).
constexpr nanort_access_mode kReduce = static_cast<nanort_access_mode>(NANORT_COMMUTATIVE + 1);

const char *mode_name(nanort_access_mode mode) {
  if (mode == kReduce) return "reduction(+)";
  switch (mode) {
    case NANORT_IN: return "in";
    case NANORT_OUT: return "out";
    case NANORT_INOUT: return "inout";
    case NANORT_CONCURRENT: return "concurrent";
    case NANORT_COMMUTATIVE: return "commutative";
  }
  return "?";
}

// Elements [offset + r * ld, offset + r * ld + cols) for r in [0, rows).
struct Span {
  std::uint32_t offset = 0, cols = 1, rows = 1, ld = kWidth;
  std::string str() const {
    std::ostringstream s;
    if (rows == 1)
      s << "[" << offset << ", " << offset + cols << ")";
    else
      s << rows << "x" << cols << " block at " << offset << " (ld " << ld << ")";
    return s.str();
  }
};

struct Access {
  Span span;
  nanort_access_mode mode;
  std::uint32_t add;  // h: what out/inout/concurrent/commutative mix in
};

struct Node {
  std::uint32_t id = 0;     // creation order in the whole graph (children included)
  std::uint32_t first_slot = 0;  // checksum slots: one per access
  std::vector<Access> accesses;
  std::vector<Node> children;
  bool wait_for_children = true;
  bool undeferred = false;
  bool is_final = false;
  int priority = 0;
};

// A taskwait (span.cols == 0) or a taskwait on 'span' after top-level task 'after'.
struct Checkpoint {
  std::size_t after;
  Span span;
  bool full;
  std::vector<std::uint32_t> seen;  // the state the parallel run showed there
};

struct Graph {
  std::uint64_t seed;
  std::vector<Node> tasks;  // top level
  std::vector<Checkpoint> checkpoints;
  std::uint32_t nodes = 0, slots = 0;
};

// ---------------------------------------------------------------------------------------------
// Generation

class Generator {
 public:
  Generator(std::uint64_t seed, bool nested) : rng_(seed), nested_(nested) {
    graph_.seed = seed;
    // One graph in three is read-mostly on a hot spot: long groups of readers of the same
    // bytes (which the dependency graph prunes as they grow), cut now and then by writers.
    hot_ = chance(1, 3);
  }

  Graph make() {
    const std::uint32_t count =
        nested_ ? uniform(100, 600) : uniform(200, 2000);
    graph_.tasks.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      Node node = top_level();
      graph_.tasks.push_back(std::move(node));
      if (chance(1, 250)) {
        Checkpoint c;
        c.after = graph_.tasks.size() - 1;
        c.full = chance(1, 4);
        c.span = random_span();
        if (c.span.rows > 1) c.span = Span{c.span.offset, std::min(c.span.cols * 4, kElements - c.span.offset), 1, 0};
        graph_.checkpoints.push_back(std::move(c));
      }
    }
    return std::move(graph_);
  }

 private:
  std::uint32_t uniform(std::uint32_t low, std::uint32_t high) {  // [low, high]
    return std::uniform_int_distribution<std::uint32_t>(low, high)(rng_);
  }
  bool chance(int n, int d) { return static_cast<int>(uniform(1, d)) <= n; }

  nanort_access_mode random_mode() {
    if (hot_ && chance(3, 4)) return NANORT_IN;
    const std::uint32_t r = uniform(0, 99);
    if (r < 30) return NANORT_IN;
    if (r < 45) return NANORT_OUT;
    if (r < 65) return NANORT_INOUT;
    if (r < 80) return NANORT_CONCURRENT;
    if (r < 90) return NANORT_COMMUTATIVE;
    return kReduce;
  }

  Span random_span() {
    Span s;
    if (chance(1, 8)) {  // an 8 x 8 tile of the 64 x 64 view: tiles are named again exactly
      s.rows = s.cols = 8;
      s.offset = uniform(0, 7) * 8 * kWidth + uniform(0, 7) * 8;
      s.ld = kWidth;
      return s;
    }
    if (chance(1, 4)) {  // a 2-D block of the 64 x 64 view
      const std::uint32_t r0 = uniform(0, kWidth - 1), c0 = uniform(0, kWidth - 1);
      s.rows = uniform(1, std::min(16u, kWidth - r0));
      s.cols = uniform(1, std::min(24u, kWidth - c0));
      s.offset = r0 * kWidth + c0;
      s.ld = kWidth;
      if (s.rows == 1) s.ld = s.cols;
      return s;
    }
    if (hot_) {
      s.offset = uniform(0, 7) * 64;
      s.cols = chance(1, 2) ? 64 : uniform(1, 128);
      s.ld = s.cols;
      return s;
    }
    std::uint32_t length;
    const std::uint32_t r = uniform(0, 99);
    if (r < 50)
      length = uniform(1, 16);
    else if (r < 85)
      length = uniform(16, 256);
    else
      length = uniform(256, 1024);
    std::uint32_t offset = uniform(0, kElements - 1);
    if (chance(1, 2)) offset &= ~63u;  // aligned starts: exact matches of fragments too
    s.offset = offset;
    s.cols = std::min(length, kElements - offset);
    s.rows = 1;
    s.ld = s.cols;
    return s;
  }

  // A sub-block of 's' (rows and columns of it).
  Span sub_span(const Span &s) {
    Span sub;
    const std::uint32_t r0 = uniform(0, s.rows - 1), r1 = uniform(r0 + 1, s.rows);
    const std::uint32_t c0 = uniform(0, s.cols - 1), c1 = uniform(c0 + 1, s.cols);
    sub.offset = s.offset + r0 * s.ld + c0;
    sub.rows = r1 - r0;
    sub.cols = c1 - c0;
    sub.ld = sub.rows == 1 ? sub.cols : s.ld;
    return sub;
  }

  // Modes a child may use inside a parent's access of 'mode'.
  nanort_access_mode child_mode(nanort_access_mode parent) {
    if (parent == kReduce) return kReduce;  // weakreduction: a part of the parent's reduction
    switch (parent) {
      case NANORT_IN: return NANORT_IN;
      case NANORT_CONCURRENT: return NANORT_CONCURRENT;
      case NANORT_COMMUTATIVE: return chance(1, 2) ? NANORT_COMMUTATIVE : NANORT_CONCURRENT;
      default: return random_mode();  // out, inout: the parent holds the data alone
    }
  }

  void number(Node &node) {
    node.id = graph_.nodes++;
    node.first_slot = graph_.slots;
    graph_.slots += static_cast<std::uint32_t>(node.accesses.size());
  }

  Access make_access(Span span, nanort_access_mode mode) {
    if (mode == kReduce && span.rows > 1) span = Span{span.offset, span.cols, 1, span.cols};
    return Access{span, mode, static_cast<std::uint32_t>(rng_()) | 1u};
  }
  // A reduction may not overlap another access of its task: a task with one has no other.
  static void keep_reduction_alone(std::vector<Access> &accesses) {
    for (const Access &a : accesses)
      if (a.mode == kReduce) {
        const Access only = a;
        accesses.assign(1, only);
        return;
      }
  }

  Node top_level() {
    Node node;
    const std::uint32_t accesses = uniform(1, 3);
    for (std::uint32_t i = 0; i < accesses; ++i)
      node.accesses.push_back(make_access(random_span(), random_mode()));
    keep_reduction_alone(node.accesses);
    node.undeferred = chance(1, 100);
    if (chance(1, 10)) node.priority = static_cast<int>(uniform(0, 20)) - 10;
    number(node);
    if (nested_ && chance(1, 3)) add_children(node, 1);
    return node;
  }

  void add_children(Node &parent, int depth) {
    parent.wait_for_children = chance(2, 3);
    parent.is_final = chance(1, 10);
    const std::uint32_t count = uniform(1, 4);
    for (std::uint32_t i = 0; i < count; ++i) {
      Node child;
      const std::uint32_t accesses = uniform(1, 2);
      for (std::uint32_t a = 0; a < accesses; ++a) {
        const Access &from = parent.accesses[uniform(0, static_cast<std::uint32_t>(parent.accesses.size()) - 1)];
        child.accesses.push_back(make_access(sub_span(from.span), child_mode(from.mode)));
      }
      keep_reduction_alone(child.accesses);
      child.undeferred = chance(1, 20);
      number(child);
      if (depth < 2 && chance(1, 4)) add_children(child, depth + 1);
      parent.children.push_back(std::move(child));
    }
  }

  std::mt19937_64 rng_;
  bool nested_;
  bool hot_ = false;
  Graph graph_;
};

// ---------------------------------------------------------------------------------------------
// What a task does (the same code for the runtime and for the sequential execution)

struct State {
  std::uint32_t *data;
  std::uint64_t *sums;
  std::atomic<std::uint32_t> *ran;
};

template <class Visit>
void for_each_element(const Span &s, Visit visit) {
  for (std::uint32_t r = 0; r < s.rows; ++r)
    for (std::uint32_t c = 0; c < s.cols; ++c) visit(s.offset + r * s.ld + c);
}

void apply(const Node &node, const State &state) {
  std::uint32_t *const data = state.data;
  for (std::size_t k = 0; k < node.accesses.size(); ++k) {
    const Access &a = node.accesses[k];
    if (a.mode == kReduce) {
      // In a task: its private copy (or, run at once inside a final task, its parent's).
      std::uint32_t *base = state.data + a.span.offset;
      if (nanort_in_task()) base = nanort::reduction_private(base);
      for (std::uint32_t i = 0; i < a.span.cols; ++i) base[i] += a.add;
      continue;
    }
    switch (a.mode) {
      case NANORT_OUT:
      case NANORT_INOUT:
        for_each_element(a.span, [&](std::uint32_t e) { data[e] = data[e] * 31u + a.add; });
        break;
      case NANORT_IN: {
        std::uint64_t sum = 0x1234;
        for_each_element(a.span, [&](std::uint32_t e) { sum = sum * 1000003u + data[e]; });
        state.sums[node.first_slot + k] = sum;
        break;
      }
      case NANORT_CONCURRENT:
        for_each_element(a.span, [&](std::uint32_t e) {
          std::atomic_ref<std::uint32_t>(data[e]).fetch_add(a.add, std::memory_order_relaxed);
        });
        break;
      case NANORT_COMMUTATIVE: {
        int n = 0;
        for_each_element(a.span, [&](std::uint32_t e) {
          const std::uint32_t v = data[e];
          if ((n++ & 15) == 0)  // a pause between read and write: a lost update if not alone
            for (int i = 0; i < 8; ++i) STRESS_RELAX();
          data[e] = v + a.add;
        });
        break;
      }
    }
  }
  state.ran->fetch_add(1, std::memory_order_relaxed);
}

void run_sequentially(const Node &node, const State &state) {
  apply(node, state);
  for (const Node &child : node.children) run_sequentially(child, state);
}

void spawn(const Node &node, const State &state);

void run_in_runtime(const Node &node, const State &state) {
  apply(node, state);
  for (const Node &child : node.children) spawn(child, state);
  if (node.wait_for_children && !node.children.empty()) nanort::taskwait();
}

void spawn(const Node &node, const State &state) {
  nanort::task t("random");
  for (const Access &a : node.accesses) {
    std::uint32_t *first = state.data + a.span.offset;
    if (a.mode == kReduce)
      t.reduction(NANORT_REDUCE_SUM, first, a.span.cols);
    else if (a.span.rows == 1)
      t.access(first, a.span.cols * sizeof(std::uint32_t), a.mode);
    else
      t.block(first, a.span.rows, a.span.cols, a.span.ld, a.mode);
  }
  if (node.priority) t.priority(node.priority);
  if (node.undeferred) t.when(false);
  if (node.is_final) t.final();
  const Node *n = &node;
  State s = state;
  t.spawn([n, s] { run_in_runtime(*n, s); });
}

std::vector<std::uint32_t> initial_data(std::uint64_t seed) {
  std::vector<std::uint32_t> data(kElements);
  for (std::uint32_t i = 0; i < kElements; ++i)
    data[i] = static_cast<std::uint32_t>(mix(seed * 7919 + i));
  return data;
}

std::vector<std::uint32_t> read_span(const std::uint32_t *data, const Span &s, bool full) {
  std::vector<std::uint32_t> values;
  if (full) return std::vector<std::uint32_t>(data, data + kElements);
  for_each_element(s, [&](std::uint32_t e) { values.push_back(data[e]); });
  return values;
}

// Describes which tasks touched element 'e', for failure messages.
void describe_element(const Graph &g, std::uint32_t e, std::ostringstream &out) {
  int shown = 0;
  std::vector<const Node *> stack;
  for (auto it = g.tasks.rbegin(); it != g.tasks.rend(); ++it) stack.push_back(&*it);
  out << "  tasks touching element " << e << " in creation order:\n";
  while (!stack.empty() && shown < 12) {
    const Node *n = stack.back();
    stack.pop_back();
    for (const Access &a : n->accesses) {
      bool hit = false;
      for_each_element(a.span, [&](std::uint32_t x) { hit = hit || x == e; });
      if (hit) {
        out << "    task " << n->id << " " << mode_name(a.mode) << " " << a.span.str()
            << (n->children.empty() ? "" : " (has children)") << "\n";
        ++shown;
      }
    }
    for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) stack.push_back(&*it);
  }
}

void collect_in_slots(const Node &n, std::vector<std::pair<const Node *, std::size_t>> &slots) {
  for (std::size_t k = 0; k < n.accesses.size(); ++k) slots.emplace_back(&n, k);
  for (const Node &c : n.children) collect_in_slots(c, slots);
}

// Turns a hang (a lost wake-up, a task that never becomes ready) into a failure that names
// the graph: if no task body has run for 20 s, it prints what it knows and ends the process.
StressWatchdog *watchdog = nullptr;

// Runs one graph both ways; returns an empty string when they agree.
std::string run_graph(Graph &g) {
  // The runtime.
  std::vector<std::uint32_t> data = initial_data(g.seed);
  std::vector<std::uint64_t> sums(g.slots, 0);
  std::atomic<std::uint32_t> ran{0};
  State state{data.data(), sums.data(), &ran};
  if (watchdog) watchdog->graph(g.seed, g.nodes, &ran);
  std::size_t next_checkpoint = 0;
  try {
    for (std::size_t i = 0; i < g.tasks.size(); ++i) {
      spawn(g.tasks[i], state);
      while (next_checkpoint < g.checkpoints.size() && g.checkpoints[next_checkpoint].after == i) {
        Checkpoint &c = g.checkpoints[next_checkpoint++];
        if (c.full)
          nanort::taskwait();
        else
          nanort::taskwait_on(data.data() + c.span.offset, c.span.cols);
        c.seen = read_span(data.data(), c.span, c.full);
      }
    }
    nanort::taskwait();
  } catch (const std::exception &e) {
    if (watchdog) watchdog->graph(g.seed, g.nodes, nullptr);
    return std::string("the runtime reported: ") + e.what();
  }
  if (watchdog) watchdog->graph(g.seed, g.nodes, nullptr);

  // The sequential execution.
  std::vector<std::uint32_t> expected = initial_data(g.seed);
  std::vector<std::uint64_t> expected_sums(g.slots, 0);
  std::atomic<std::uint32_t> expected_ran{0};
  State oracle{expected.data(), expected_sums.data(), &expected_ran};
  std::ostringstream problems;
  next_checkpoint = 0;
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    run_sequentially(g.tasks[i], oracle);
    while (next_checkpoint < g.checkpoints.size() && g.checkpoints[next_checkpoint].after == i) {
      const Checkpoint &c = g.checkpoints[next_checkpoint++];
      if (read_span(expected.data(), c.span, c.full) != c.seen)
        problems << "after top-level task " << i << ", "
                 << (c.full ? std::string("taskwait") : "taskwait on " + c.span.str())
                 << " showed a state other than the sequential one\n";
    }
  }

  if (ran.load() != g.nodes)
    problems << ran.load() << " task bodies ran, " << g.nodes << " tasks were created\n";
  int shown = 0;
  for (std::uint32_t e = 0; e < kElements; ++e)
    if (data[e] != expected[e] && shown++ < 3) {
      problems << "element " << e << " is " << data[e] << ", sequentially " << expected[e] << "\n";
      describe_element(g, e, problems);
    }
  std::vector<std::pair<const Node *, std::size_t>> slots;
  for (const Node &n : g.tasks) collect_in_slots(n, slots);
  int bad_sums = 0;
  for (const auto &[node, k] : slots) {
    const std::size_t slot = node->first_slot + k;
    if (node->accesses[k].mode == NANORT_IN && sums[slot] != expected_sums[slot] && bad_sums++ < 3)
      problems << "task " << node->id << " read " << node->accesses[k].span.str()
               << " and saw a state other than the sequential one\n";
  }
  if (shown > 3) problems << "(" << shown << " elements differ in all)\n";
  if (bad_sums > 3) problems << "(" << bad_sums << " reads differ in all)\n";
  return problems.str();
}


void run_for_a_while(bool nested) {
  StressWatchdog dog(20);
  watchdog = &dog;
  double seconds = 6.0;
  if (const char *s = std::getenv("STRESS_SECONDS")) seconds = std::atof(s);
  std::uint64_t base = nested ? 2'000'000 : 1'000'000;
  if (const char *s = std::getenv("STRESS_SEED")) base = std::strtoull(s, nullptr, 10);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int graphs = 0;
  std::uint64_t tasks = 0;
  for (; graphs < kMaxGraphs && (graphs < kMinGraphs || elapsed() < seconds); ++graphs) {
    const std::uint64_t seed = base + static_cast<std::uint64_t>(graphs);
    Graph g = Generator(seed, nested).make();
    tasks += g.nodes;
    const std::string problems = run_graph(g);
    if (!problems.empty()) {
      ADD_FAILURE() << "graph with seed " << seed << " (" << g.nodes << " tasks, "
                    << (nested ? "nested" : "flat") << "; rerun with STRESS_SEED=" << seed
                    << ") differs from the sequential execution:\n"
                    << problems;
      return;
    }
  }
  std::printf("%d %s graphs, %llu tasks, %.1f s, seeds %llu..%llu\n", graphs,
              nested ? "nested" : "flat", static_cast<unsigned long long>(tasks), elapsed(),
              static_cast<unsigned long long>(base),
              static_cast<unsigned long long>(base + graphs - 1));
  EXPECT_GE(graphs, kMinGraphs);
  watchdog = nullptr;
}

TEST(RandomGraphs, Flat) { run_for_a_while(false); }

TEST(RandomGraphs, Nested) { run_for_a_while(true); }

// The generator itself: deterministic per seed, and it does produce every kind of access.
TEST(RandomGraphs, GeneratorCoversTheModesAndShapes) {
  Graph a = Generator(42, true).make(), b = Generator(42, true).make();
  ASSERT_EQ(a.nodes, b.nodes);
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  int modes[8] = {}, blocks = 0, parents = 0;
  std::vector<const Node *> stack;
  for (const Node &n : a.tasks) stack.push_back(&n);
  while (!stack.empty()) {
    const Node *n = stack.back();
    stack.pop_back();
    parents += !n->children.empty();
    for (const Access &x : n->accesses) {
      ++modes[x.mode];
      blocks += x.span.rows > 1;
      ASSERT_LE(x.span.offset + (x.span.rows - 1) * x.span.ld + x.span.cols, kElements);
    }
    for (const Node &c : n->children) stack.push_back(&c);
  }
  for (int m = NANORT_IN; m <= kReduce; ++m) EXPECT_GT(modes[m], 0) << mode_name(nanort_access_mode(m));
  EXPECT_GT(blocks, 0);
  EXPECT_GT(parents, 0);
}

}  // namespace
