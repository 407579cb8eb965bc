// oneTBB: tbb::task_group where tasks have no dependences between them (independent,
// distinct-inout: TBB tracks no data, so those two are the same program), and a
// tbb::flow::graph of continue_nodes for the dependent patterns, with exactly the edges that
// the data dependences of the other systems imply.
//
// A flow graph must be complete before it runs (a node added after its predecessor fired
// would never fire), so the timed part is: build the graph, run it, destroy it.
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <tbb/version.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench {
namespace {

constexpr const char *kName = "tbb";

using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
using tbb::flow::continue_msg;

// An arena with the threads asked for, the calling thread in one of its slots.
std::unique_ptr<tbb::global_control> parallelism;
std::unique_ptr<tbb::task_arena> arena;

template <class T>
double run_task_group(const Params &params, Pattern pattern) {
  const long n = params.tasks;
  std::vector<T> counters(static_cast<std::size_t>(n), 0);
  T *data = counters.data();
  const auto start = Clock::now();
  arena->execute([&] {
    tbb::task_group group;
    for (long i = 0; i < n; ++i) group.run([data, i] { ++data[i]; });
    group.wait();
  });
  const double seconds = seconds_since(start);
  check_all_ones(data, n, kName, pattern);
  return seconds;
}

double run_chain(const Params &params) {
  Slot counter;
  long *value = &counter.value;
  const auto start = Clock::now();
  arena->execute([&] {
    tbb::flow::graph graph;
    std::deque<Node> nodes;  // a deque: nodes never move once built
    for (long i = 0; i < params.tasks; ++i) {
      nodes.emplace_back(graph, [value](const continue_msg &) { ++*value; });
      if (i > 0) tbb::flow::make_edge(nodes[i - 1], nodes[i]);
    }
    if (!nodes.empty()) nodes.front().try_put(continue_msg());
    graph.wait_for_all();
  });
  const double seconds = seconds_since(start);
  check(counter.value == params.tasks, kName, Pattern::chain, "the counter", counter.value,
        params.tasks);
  return seconds;
}

double run_fan(const Params &params) {
  const int width = params.fan_width;
  const long rounds = fan_rounds(params);
  Slot src_slot, acc_slot;
  long *src = &src_slot.value;
  long *acc = &acc_slot.value;
  std::vector<Slot> dst_storage(static_cast<std::size_t>(width));
  Slot *dst = dst_storage.data();
  const auto start = Clock::now();
  arena->execute([&] {
    tbb::flow::graph graph;
    std::deque<Node> nodes;
    Node *previous_join = nullptr;
    std::vector<Node *> readers, previous_readers;
    for (long r = 0; r < rounds; ++r) {
      Node &writer = nodes.emplace_back(graph, [src](const continue_msg &) { ++*src; });
      // The writer overwrites what the last round's readers read: it waits for all of them.
      for (Node *reader : previous_readers) tbb::flow::make_edge(*reader, writer);
      readers.clear();
      for (int k = 0; k < width; ++k) {
        Node &reader = nodes.emplace_back(
            graph, [src, dst, k](const continue_msg &) { dst[k].value = *src; });
        tbb::flow::make_edge(writer, reader);
        // The reader overwrites dst[k], which the last round's join read.
        if (previous_join) tbb::flow::make_edge(*previous_join, reader);
        readers.push_back(&reader);
      }
      Node &join = nodes.emplace_back(graph, [dst, acc, width](const continue_msg &) {
        long sum = 0;
        for (int k = 0; k < width; ++k) sum += dst[k].value;
        *acc += sum;
      });
      for (Node *reader : readers) tbb::flow::make_edge(*reader, join);
      previous_join = &join;
      std::swap(readers, previous_readers);
    }
    if (!nodes.empty()) nodes.front().try_put(continue_msg());
    graph.wait_for_all();
  });
  const double seconds = seconds_since(start);
  check(*acc == fan_expected_sum(params), kName, Pattern::fan, "the joined sum", *acc,
        fan_expected_sum(params));
  return seconds;
}

std::string description;

int start(const Params &params) {
  // TBB caps its threads at the number of CPUs unless told otherwise.
  if (static_cast<std::size_t>(params.threads) >
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism))
    parallelism = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(params.threads));
  arena = std::make_unique<tbb::task_arena>(params.threads, /*reserved_for_masters=*/1);
  arena->initialize();
  description = "oneTBB " + std::string(TBB_runtime_version()) + ": task_arena of " +
                std::to_string(arena->max_concurrency()) +
                " threads (the submitting thread included); task_group for independent and "
                "distinct-inout, flow::graph of continue_nodes for chain and fan";
  return arena->max_concurrency();
}

double run(Pattern pattern, const Params &params) {
  switch (pattern) {
    case Pattern::independent: return run_task_group<unsigned char>(params, pattern);
    case Pattern::chain: return run_chain(params);
    case Pattern::fan: return run_fan(params);
    case Pattern::distinct: return run_task_group<long>(params, pattern);
  }
  return 0;
}

void stop() {
  arena.reset();
  parallelism.reset();
}

const char *describe() { return description.c_str(); }

}  // namespace

System tbb_system() { return {kName, true, &start, &run, &stop, &describe}; }

}  // namespace bench
