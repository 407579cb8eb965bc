// TaskCosts: how long each task of a repeated loop took on a device, so that a device sharing
// its kind's queue with others takes its next task shortly before it needs it, not earlier.
//
// Why: a device takes a second task while its first runs (NANORT_DEVICE_LOOKAHEAD), so that
// the second's inputs move and its kernel is queued behind the first, whose last, slow blocks
// it fills. But a task taken is committed: with tasks of unequal cost (Julia's slices, a few
// times apart), a device that takes its next one as a long task starts has chosen it for a
// time far ahead, and the split between the devices comes out by chance (Julia on two H200s:
// 1.006 to 1.063 of the native time between processes, depending on which device took the
// first, nearly empty, slices). Taking the next task only when the running ones are expected
// to end soon makes the choice at nearly the time a free device would (greedy list
// scheduling: the devices end within about a short task of each other) and keeps the overlap
// (1.010 to 1.015). A device that takes a task with inputs to copy, or one not seen before,
// takes its next ones as early as before until it holds none: moving data while the device
// computes is worth more.
// The expected time of a task is what the same task took the last times: the same pragma on
// the same data (the first byte of the first data it writes), which a program repeating its
// steps over the same arrays gives every step.
#pragma once

#include <nanort/nanort.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "../spin_lock.hpp"

namespace nanort::rt {

struct Task;

class TaskCosts {
 public:
  // Bounded: past kMaxEntries tasks remembered, the memory starts again (a program that makes
  // new data every step would otherwise grow it without end).
  static constexpr std::size_t kMaxEntries = 1u << 16;
  // How long before the expected end of what a device holds it takes its next task:
  // kAheadShare of the running task's expected time, at least kMinAheadNs. Enough for the next
  // kernel to be queued behind the last, slow blocks of the running one, and for a time
  // off by some percent; 0.3 and 0.6 measured alike (Julia, two H200s), balance alike in a
  // simulation from 1 ms up to 0.8.
  static constexpr double kAheadShare = 0.6;
  static constexpr std::uint64_t kMinAheadNs = 1'000'000;
  // Only for tasks that read less than this: one with inputs to copy in is taken as early as
  // it can be, so that they move while the device computes.
  static constexpr std::uint64_t kPacedReadBytes = 64u << 10;

  // 'task' ran on a device of 'kind' for 'nanoseconds' (a running mean over its runs).
  void record(const Task &task, nanort_device_kind kind, std::uint64_t nanoseconds);
  // The expected time of 'task' on a device of 'kind'; 0 when it has not run there.
  std::uint64_t expected_ns(const Task &task, nanort_device_kind kind) const;
  std::size_t size() const;

  // Where a device stands with the tasks it took from its kind's shared queue: when they are
  // expected to end (0: not paced: its next task is taken as soon as it has room), and how
  // long before that it takes the next.
  struct Pace {
    std::uint64_t busy_until_ns = 0;
    std::uint64_t ahead_ns = 0;
  };
  // Whether a device at 'pace' takes its next task at 'now_ns'.
  static bool take_next_now(std::uint64_t now_ns, const Pace &pace) {
    return pace.busy_until_ns == 0 || now_ns + pace.ahead_ns >= pace.busy_until_ns;
  }
  // The pace after a device that held 'held' tasks at 'pace' took, at 'now_ns', one expected
  // to take 'expected_ns' (0: unknown) that reads 'read_bytes'. Not paced once it takes one
  // unknown or reading kPacedReadBytes or more, until it has held none again.
  static Pace after_taking(const Pace &pace, std::size_t held, std::uint64_t now_ns,
                           std::uint64_t expected_ns, std::uint64_t read_bytes) {
    if (expected_ns == 0 || read_bytes >= kPacedReadBytes || (held > 0 && pace.busy_until_ns == 0))
      return {};
    return {(held > 0 ? std::max(now_ns, pace.busy_until_ns) : now_ns) + expected_ns,
            ahead_of(expected_ns)};
  }
  // How long before it is needed a device takes the task after one expected to take
  // 'expected_ns' (see kAheadShare).
  static std::uint64_t ahead_of(std::uint64_t expected_ns) {
    return std::max(kMinAheadNs,
                    static_cast<std::uint64_t>(kAheadShare * static_cast<double>(expected_ns)));
  }

 private:
  struct Key {
    const void *site;
    std::uintptr_t data;
    int kind;
    bool operator==(const Key &) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key &key) const;
  };
  static bool key_of(const Task &task, nanort_device_kind kind, Key &key);

  mutable SpinLock lock_;
  std::unordered_map<Key, std::uint64_t, KeyHash> mean_ns_;
};

}  // namespace nanort::rt
