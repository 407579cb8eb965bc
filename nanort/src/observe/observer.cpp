#include "observer.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>

#include "../task.hpp"

namespace nanort::rt {

namespace {
void write_json_string(std::ostream &out, const char *text) {
  out << '"';
  for (const char *c = text; *c; ++c) {
    if (*c == '"' || *c == '\\')
      out << '\\' << *c;
    else if (static_cast<unsigned char>(*c) < 0x20)
      out << "\\u" << std::hex << std::setw(4) << std::setfill('0') << int(*c) << std::dec;
    else
      out << *c;
  }
  out << '"';
}
}  // namespace

Observer::Observer(bool stats, std::string trace_path, std::vector<std::string> lane_names,
                   int shared_lane)
    : stats_(stats), trace_path_(std::move(trace_path)), start_ns_(now_ns()),
      lanes_(lane_names.size()), shared_lane_(shared_lane) {
  for (std::size_t i = 0; i < lane_names.size(); ++i) lanes_[i].name = std::move(lane_names[i]);
}

std::uint64_t Observer::now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

void Observer::task_ran(int lane_index, const Task &task, std::uint64_t start_ns,
                        std::uint64_t end_ns, bool failed) {
  Lane &lane = lanes_[static_cast<std::size_t>(lane_index)];
  lane.tasks.fetch_add(1, std::memory_order_relaxed);
  lane.busy_ns.fetch_add(end_ns - start_ns, std::memory_order_relaxed);
  if (failed) lane.failed.fetch_add(1, std::memory_order_relaxed);
  // (Locked on every lane, not only the shared ones: a fatal error may read the lanes while
  // tasks still run; uncontended, the lock costs little next to recording.)
  std::lock_guard<std::mutex> guard(lane.mutex);
  const char *label = task.label ? task.label : "(unnamed)";
  LabelTotals &totals = lane.by_label[label];
  ++totals.tasks;
  totals.busy_ns += end_ns - start_ns;
  if (!trace_path_.empty())
    lane.events.push_back(Event{label, task.file, task.line, start_ns, end_ns});
}

void Observer::copy_started(int lane_index, const char *what, std::uint64_t bytes) {
  if (trace_path_.empty()) return;
  Lane &lane = lanes_[static_cast<std::size_t>(lane_index)];
  const std::uint64_t now = now_ns();
  std::lock_guard<std::mutex> guard(lane.mutex);
  lane.events.push_back(Event{what, nullptr, 0, now, now, bytes});
}

void Observer::finish(std::ostream &out, std::uint64_t dependence_edges,
                      const std::string &memory_table) {
  const std::uint64_t wall_ns = now_ns() - start_ns_;
  if (stats_) {
    char line[256];
    std::snprintf(line, sizeof line, "nanort statistics: %.3f s of wall time\n", wall_ns * 1e-9);
    out << line;
    std::snprintf(line, sizeof line, "  %-28s %12s %12s %8s %8s\n", "lane", "tasks", "busy ms",
                  "busy %", "failed");
    out << line;
    std::uint64_t total = 0;
    for (Lane &lane : lanes_) {
      const std::uint64_t tasks = lane.tasks.load(), busy = lane.busy_ns.load();
      total += tasks;
      std::snprintf(line, sizeof line, "  %-28s %12llu %12.3f %7.1f%% %8llu\n",
                    lane.name.c_str(), static_cast<unsigned long long>(tasks), busy * 1e-6,
                    wall_ns ? 100.0 * static_cast<double>(busy) / static_cast<double>(wall_ns)
                            : 0.0,
                    static_cast<unsigned long long>(lane.failed.load()));
      out << line;
    }
    // Per label, merged over lanes (equal labels may be distinct strings in memory).
    std::map<std::string, LabelTotals> by_label;
    for (Lane &lane : lanes_) {
      std::lock_guard<std::mutex> guard(lane.mutex);
      for (const auto &[label, totals] : lane.by_label) {
        LabelTotals &merged = by_label[label];
        merged.tasks += totals.tasks;
        merged.busy_ns += totals.busy_ns;
      }
    }
    if (!by_label.empty()) {
      std::snprintf(line, sizeof line, "  %-28s %12s %12s %12s\n", "task label", "tasks",
                    "busy ms", "mean us");
      out << line;
      for (const auto &[label, totals] : by_label) {
        std::snprintf(line, sizeof line, "  %-28.28s %12llu %12.3f %12.3f\n", label.c_str(),
                      static_cast<unsigned long long>(totals.tasks), totals.busy_ns * 1e-6,
                      totals.tasks ? totals.busy_ns * 1e-3 / totals.tasks : 0.0);
        out << line;
      }
    }
    std::snprintf(line, sizeof line, "  tasks created %llu, run %llu",
                  static_cast<unsigned long long>(created_.load()),
                  static_cast<unsigned long long>(total));
    out << line;
    if (const std::uint64_t skipped = not_run_.load())
      out << ", not run after a failure " << skipped;
    std::snprintf(line, sizeof line, "; dependence edges %llu\n",
                  static_cast<unsigned long long>(dependence_edges));
    out << line;
    if (!memory_table.empty()) out << "  data moved by the directory:\n" << memory_table;
  }
  if (!trace_path_.empty()) write_trace(out);
}

void Observer::write_trace(std::ostream &err) {
  std::ofstream file(trace_path_);
  if (!file) {
    err << "nanort: cannot write the trace to '" << trace_path_ << "'\n";
    return;
  }
  file << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  file << R"({"ph":"M","pid":1,"name":"process_name","args":{"name":"nanort"}})";
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    file << ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" << i
         << ",\"name\":\"thread_name\",\"args\":{\"name\":";
    write_json_string(file, lanes_[i].name.c_str());
    file << "}}";
    file << ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":" << i
         << ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" << i << "}}";
  }
  file << std::fixed << std::setprecision(3);
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    std::lock_guard<std::mutex> guard(lanes_[i].mutex);
    for (const Event &e : lanes_[i].events) {
      if (e.bytes) {  // a copy
        file << ",\n{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":" << i
             << ",\"cat\":\"copy\",\"name\":";
        write_json_string(file, e.label);
        file << ",\"ts\":" << (e.start_ns - start_ns_) * 1e-3 << ",\"args\":{\"bytes\":" << e.bytes
             << "}}";
        continue;
      }
      file << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << i << ",\"cat\":\"task\",\"name\":";
      write_json_string(file, e.label);
      file << ",\"ts\":" << (e.start_ns - start_ns_) * 1e-3
           << ",\"dur\":" << (e.end_ns - e.start_ns) * 1e-3 << ",\"args\":{\"source\":";
      std::string where = std::string(e.file ? e.file : "?") + ":" + std::to_string(e.line);
      write_json_string(file, where.c_str());
      file << "}}";
    }
  }
  file << "\n]}\n";
  if (!file) err << "nanort: writing the trace to '" << trace_path_ << "' failed\n";
}

}  // namespace nanort::rt
