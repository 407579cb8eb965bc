#include "parallel_memcpy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nanort::dc {

namespace {
constexpr std::size_t kSmall = std::size_t(1) << 20;  // below this one thread is as fast
}

ParallelMemcpy::ParallelMemcpy(int threads) : parts_(static_cast<std::size_t>(std::max(threads, 1))) {
  for (int i = 1; i < threads; ++i) helpers_.emplace_back([this] { help(); });
}

ParallelMemcpy::~ParallelMemcpy() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &helper : helpers_) helper.join();
}

void ParallelMemcpy::copy(void *target, const void *source, std::size_t bytes) {
  if (helpers_.empty() || bytes < kSmall) {
    std::memcpy(target, source, bytes);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    target_ = static_cast<char *>(target);
    source_ = static_cast<const char *>(source);
    bytes_ = bytes;
    part_ = (bytes + parts_ - 1) / parts_;
    part_ = (part_ + 63) & ~std::size_t(63);  // whole cache lines
    next_.store(0);
    finished_.store(0);
    ++job_;
  }
  wake_.notify_all();
  copy_parts();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return finished_.load() == parts_; });
}

void ParallelMemcpy::copy_parts() {
  for (std::size_t i = next_.fetch_add(1); i < parts_; i = next_.fetch_add(1)) {
    const std::size_t start = std::min(bytes_, i * part_);
    const std::size_t end = std::min(bytes_, start + part_);
    std::memcpy(target_ + start, source_ + start, end - start);
    if (finished_.fetch_add(1) + 1 == parts_) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_all();
    }
  }
}

void ParallelMemcpy::help() {
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || job_ != seen; });
    if (stopping_) return;
    seen = job_;
    lock.unlock();
    copy_parts();
    lock.lock();
  }
}

}  // namespace nanort::dc
