#include <nanort/dc/host_space.hpp>

#include <cstdlib>
#include <cstring>
#include <map>

namespace nanort::dc {

namespace {

// Done when the space's thread ran the copy.
class HostCompletion final : public Completion {
 public:
  bool poll() override { return done_.load(std::memory_order_acquire); }
  void wait() override {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return done_.load(std::memory_order_acquire); });
  }
  void set() {
    std::lock_guard<std::mutex> lock(mutex_);
    done_.store(true, std::memory_order_release);
    cv_.notify_all();
  }

 private:
  std::atomic<bool> done_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
};

// Sizes of live buffers, to count bytes at free().
std::mutex sizes_mutex;
std::map<std::uintptr_t, std::size_t> &buffer_sizes() {
  static std::map<std::uintptr_t, std::size_t> sizes;
  return sizes;
}

}  // namespace

HostSpace::HostSpace(HostSpaceOptions options)
    : options_(std::move(options)), worker_([this] { run(); }) {}

HostSpace::~HostSpace() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

DeviceBuffer HostSpace::allocate(std::size_t bytes) {
  if (allocated_.load() + bytes > options_.memory_size) return {};
  void *memory = std::malloc(bytes ? bytes : 1);
  if (!memory) return {};
  std::memset(memory, 0xA5, bytes);  // stale bytes look like garbage, not like zeros
  allocated_ += bytes;
  ++live_;
  std::lock_guard<std::mutex> lock(sizes_mutex);
  buffer_sizes()[reinterpret_cast<std::uintptr_t>(memory)] = bytes;
  return DeviceBuffer{reinterpret_cast<std::uintptr_t>(memory)};
}

void HostSpace::free(DeviceBuffer buffer) {
  {
    std::lock_guard<std::mutex> lock(sizes_mutex);
    auto it = buffer_sizes().find(buffer.handle);
    if (it != buffer_sizes().end()) {
      allocated_ -= it->second;
      buffer_sizes().erase(it);
    }
  }
  --live_;
  std::free(bytes_of(buffer));
}

CompletionPtr HostSpace::enqueue(std::function<void()> work, Dependencies after) {
  auto done = std::make_shared<HostCompletion>();
  std::vector<CompletionPtr> waits(after.begin(), after.end());
  const auto delay = options_.copy_delay;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back([work = std::move(work), waits = std::move(waits), done, delay] {
      for (const CompletionPtr &wait : waits) wait->wait();
      if (delay.count()) std::this_thread::sleep_for(delay);
      work();
      done->set();
    });
  }
  ++copies_;
  wake_.notify_one();
  return done;
}

void HostSpace::hold_copies() {
  std::lock_guard<std::mutex> lock(mutex_);
  held_ = true;
}

void HostSpace::release_copies() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ = false;
  }
  wake_.notify_all();
}

void HostSpace::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // (Stopping runs what is left, held or not.)
    wake_.wait(lock, [this] { return stopping_ || (!queue_.empty() && !held_); });
    if (queue_.empty()) return;  // stopping, nothing left
    auto work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work();
    lock.lock();
  }
}

CompletionPtr HostSpace::write(DeviceBuffer target, std::size_t offset, const void *source,
                               std::size_t bytes, Dependencies after) {
  return enqueue([=] { std::memcpy(bytes_of(target) + offset, source, bytes); }, after);
}

CompletionPtr HostSpace::read(DeviceBuffer source, std::size_t offset, void *target,
                              std::size_t bytes, Dependencies after) {
  return enqueue([=] { std::memcpy(target, bytes_of(source) + offset, bytes); }, after);
}

CompletionPtr HostSpace::copy(DeviceBuffer source, std::size_t source_offset,
                              DeviceBuffer target, std::size_t target_offset, std::size_t bytes,
                              Dependencies after) {
  return enqueue(
      [=] {
        std::memmove(bytes_of(target) + target_offset, bytes_of(source) + source_offset, bytes);
      },
      after);
}

bool HostSpace::can_copy_from(const MemorySpace &other) const {
  auto *peer = dynamic_cast<const HostSpace *>(&other);
  return peer && options_.peer_group >= 0 && peer->options_.peer_group == options_.peer_group;
}

CompletionPtr HostSpace::copy_from(MemorySpace &other, DeviceBuffer source,
                                   std::size_t source_offset, DeviceBuffer target,
                                   std::size_t target_offset, std::size_t bytes,
                                   Dependencies after) {
  if (!can_copy_from(other)) return MemorySpace::copy_from(other, source, source_offset, target,
                                                           target_offset, bytes, after);
  return copy(source, source_offset, target, target_offset, bytes, after);
}

PinnedBuffer HostSpace::allocate_pinned(std::size_t bytes) {
  void *memory = std::malloc(bytes);
  return memory ? PinnedBuffer{memory, reinterpret_cast<std::uintptr_t>(memory), bytes}
                : PinnedBuffer{};
}

void HostSpace::free_pinned(PinnedBuffer buffer) { std::free(buffer.host); }

}  // namespace nanort::dc
