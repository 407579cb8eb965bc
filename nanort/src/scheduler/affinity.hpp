// Affinity scores: what the user knows about where a kind of task runs well, as numbers per
// place (lower is better, as in ParallelME). A score is a relative cost: 'gemm_tile' with
// cuda=1 and smp=8 says that a CPU worker takes about eight times as long as a GPU.
//
// Set with NANORT_AFFINITY ("gemm_tile:cuda=1,smp=8;blur:opencl0=1") or
// nanort_set_affinity(task, place, score). A task kind is the task's label (a function task's
// name); a place is a device kind (smp, cuda, opencl) or one device (cuda1, opencl0: a device's
// own score wins over its kind's).
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace nanort::rt {

class AffinityTable {
 public:
  // Adds the scores of a NANORT_AFFINITY text; a malformed text changes nothing and returns
  // what is wrong with it.
  std::optional<std::string> parse(std::string_view text);
  // Sets one score; false (and nothing set) when the score is not a positive finite number or
  // a name is empty.
  bool set(std::string_view task, std::string_view place, double score);
  bool empty() const { return empty_.load(std::memory_order_acquire); }
  // The task kind has scores at all.
  bool has(const char *task) const;
  // The score of 'device' (e.g. "cuda1"), else of its kind ("cuda"); 0 when neither has one.
  double score(const char *task, std::string_view kind, std::string_view device) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>> scores_;
  std::atomic<bool> empty_{true};
};

}  // namespace nanort::rt
