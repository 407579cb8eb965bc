// ParallelMemcpy: one large memcpy split among a few threads. Packing ordinary memory into a
// pinned staging buffer runs at one core's copy bandwidth, below what a GPU's bus moves; with
// a few cores the staging copy keeps up with the bus.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace nanort::dc {

class ParallelMemcpy {
 public:
  // 'threads' copiers in all, the caller included (1: a plain memcpy).
  explicit ParallelMemcpy(int threads);
  ~ParallelMemcpy();
  ParallelMemcpy(const ParallelMemcpy &) = delete;
  ParallelMemcpy &operator=(const ParallelMemcpy &) = delete;

  // Returns once all bytes are copied. One call at a time (the directory's packer lock).
  void copy(void *target, const void *source, std::size_t bytes);

 private:
  void help();
  void copy_parts();

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> helpers_;
  bool stopping_ = false;
  std::uint64_t job_ = 0;  // bumped for each copy
  // The current copy, in parts taken by index.
  char *target_ = nullptr;
  const char *source_ = nullptr;
  std::size_t bytes_ = 0, part_ = 0;
  const std::size_t parts_;  // one per thread
  std::atomic<std::size_t> next_{0}, finished_{0};
};

}  // namespace nanort::dc
