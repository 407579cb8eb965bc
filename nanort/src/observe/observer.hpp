// Observer: statistics (NANORT_STATS) and the Chrome/Perfetto trace (NANORT_TRACE).
//
// One lane per pool thread, plus one shared by the threads that run tasks while they wait;
// device lanes join with the device backends. Recording costs nothing unless statistics or
// the trace are on.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace nanort::rt {

struct Task;

class Observer {
 public:
  Observer(bool stats, std::string trace_path, std::vector<std::string> lane_names);

  bool recording() const { return stats_ || !trace_path_.empty(); }
  static std::uint64_t now_ns();

  void task_ran(int lane, const Task &task, std::uint64_t start_ns, std::uint64_t end_ns,
                bool failed);
  void task_created() {
    if (recording()) created_.fetch_add(1, std::memory_order_relaxed);
  }

  // At shutdown: the summary to 'out' (if stats are on) and the trace file (if named).
  void finish(std::ostream &out, std::uint64_t dependence_edges);

 private:
  struct Event {
    const char *label;
    const char *file;
    int line;
    std::uint64_t start_ns, end_ns;
  };
  struct LabelTotals {
    std::uint64_t tasks = 0, busy_ns = 0;
  };
  struct alignas(64) Lane {
    std::string name;
    std::atomic<std::uint64_t> tasks{0}, busy_ns{0}, failed{0};
    std::mutex mutex;  // taken only for the shared external lane
    std::vector<Event> events;
    std::unordered_map<const char *, LabelTotals> by_label;  // label strings are static
  };

  void write_trace(std::ostream &err);

  bool stats_;
  std::string trace_path_;
  std::uint64_t start_ns_;
  std::vector<Lane> lanes_;
  std::atomic<std::uint64_t> created_{0};
};

}  // namespace nanort::rt
