// Observer: statistics (NANORT_STATS) and the Chrome/Perfetto trace (NANORT_TRACE).
//
// One lane per pool thread, one shared by the threads that run tasks while they wait, and one
// per device (its tasks, and the copies into and out of its memory as instant events).
// Recording costs nothing unless statistics or the trace are on.
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
  // Lanes from 'shared_lane' + 1 on are device lanes.
  Observer(bool stats, std::string trace_path, std::vector<std::string> lane_names,
           int shared_lane);

  bool recording() const { return stats_ || !trace_path_.empty(); }
  static std::uint64_t now_ns();

  void task_ran(int lane, const Task &task, std::uint64_t start_ns, std::uint64_t end_ns,
                bool failed);
  // A copy of 'bytes' was started (the directory holds its lock: keep this short).
  void copy_started(int lane, const char *what, std::uint64_t bytes);
  void task_created() {
    if (recording()) created_.fetch_add(1, std::memory_order_relaxed);
  }
  // A task ended without running, after a predecessor failed.
  void task_not_run() {
    if (recording()) not_run_.fetch_add(1, std::memory_order_relaxed);
  }

  // At shutdown: the summary to 'out' (if stats are on) and the trace file (if named).
  // 'memory_table' (the directory's counters) is printed with the summary. Also at a fatal
  // error while tasks still run: every lane is read under its lock.
  void finish(std::ostream &out, std::uint64_t dependence_edges,
              const std::string &memory_table);

 private:
  struct Event {
    const char *label;
    const char *file;
    int line;
    std::uint64_t start_ns, end_ns;
    std::uint64_t bytes = 0;  // a copy: an instant event
  };
  struct LabelTotals {
    std::uint64_t tasks = 0, busy_ns = 0;
  };
  struct alignas(64) Lane {
    std::string name;
    std::atomic<std::uint64_t> tasks{0}, busy_ns{0}, failed{0};
    std::mutex mutex;  // guards events and by_label (uncontended but for the shared lanes)
    std::vector<Event> events;
    std::unordered_map<const char *, LabelTotals> by_label;  // label strings are static
  };

  void write_trace(std::ostream &err);

  bool stats_;
  std::string trace_path_;
  std::uint64_t start_ns_;
  std::vector<Lane> lanes_;
  int shared_lane_;
  std::atomic<std::uint64_t> created_{0}, not_run_{0};
};

}  // namespace nanort::rt
