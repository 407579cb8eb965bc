// RecentMarks: when the OpenCL launcher's kernels may go on sharing one completion event (a
// launch mark).
//
// A mark's kernels are seen done together, when its last one is, and a task's results start
// home (eager write-back) and its successors on other devices go only then. Sharing costs
// nothing where the kernels are short and the host is what limits the launches (there an
// event and a clFlush per kernel cost more than the launch). It costs where the kernels are
// long and the device is behind: each block of a large array is seen done only when the last
// of its mark is, and comes home late. So the launcher ends a kernel's mark with it when the
// device is behind: a mark ended at least kBacklog ago is not done yet. (A kernel that waits
// for copies or other devices gets a mark of its own anyway: its start, and so its end, are
// set by them.) The CUDA launcher keeps its marks of 8: the same rules there changed neither
// SAXPY nor Julia, nor the launch overhead, on two H200s (docs/results.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>

namespace nanort::rt {

// What a mark's owner can say of it: its kernels ran, run still, or it cannot tell now (its
// end is not enqueued yet, or was just enqueued: the launcher is behind, not the device).
enum class MarkState { running, done, unknown };

template <class Mark>
class RecentMarks {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::microseconds kBacklog{20};

  // 'mark' ended (its event asked for) at 'at'.
  void ended(std::shared_ptr<Mark> mark, Clock::time_point at) {
    entries_.push_back({std::move(mark), at, false});
    let_go(at);
  }
  // Whether the newest mark ended kBacklog ago or more is still running; 'state(mark)' asks
  // (once done, not again; unknown: not behind, asked again next time). Marks ended later than
  // that are kept until they are that old.
  template <class State>
  bool device_behind(Clock::time_point now, State &&state) {
    let_go(now);
    if (entries_.empty() || now - entries_.front().at < kBacklog) return false;
    Entry &oldest = entries_.front();
    if (oldest.done) return false;
    const MarkState seen = state(*oldest.mark);
    oldest.done = seen == MarkState::done;
    return seen == MarkState::running;
  }
  void clear() { entries_.clear(); }
  std::size_t size() const { return entries_.size(); }

 private:
  // Only the newest mark at least kBacklog old is asked about: the ones before it go (also
  // where no launch asks, as when every kernel waits for copies: none is held long).
  void let_go(Clock::time_point now) {
    while (entries_.size() >= 2 && now - entries_[1].at >= kBacklog) entries_.pop_front();
  }

  struct Entry {
    std::shared_ptr<Mark> mark;
    Clock::time_point at;
    bool done;
  };
  std::deque<Entry> entries_;
};

}  // namespace nanort::rt
