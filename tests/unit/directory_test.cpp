// Directory: the directory/cache driven by hand over HostSpace devices.
//
// Each test plays the device manager and the kernels: stage() a task's data, wait for the
// copies it returns, read and write the device bytes where the placements say (HostSpace
// buffers are heap memory), finish(). Host tasks call acquire_host(), taskwait is flush().
// Every result is compared with a plain reference array updated the same way.
#include <nanort/dc/directory.hpp>
#include <nanort/dc/invariant.hpp>
#include <nanort/dc/host_space.hpp>
#include <nanort/dc/human_size.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace nanort::dc;
using namespace std::chrono_literals;
using Staging = Directory::Staging;
using StageResult = Directory::StageResult;
using Accesses = std::vector<DataAccess>;

constexpr SpaceId kDev1 = 1, kDev2 = 2;

// ---------------------------------------------------------------------------------------------
// Helpers

template <class T>
DataAccess in(const T *data, std::size_t count) {
  return {Region::contiguous(data, count * sizeof(T)), true, false};
}
template <class T>
DataAccess out(const T *data, std::size_t count) {
  return {Region::contiguous(data, count * sizeof(T)), false, true};
}
template <class T>
DataAccess inout(const T *data, std::size_t count) {
  return {Region::contiguous(data, count * sizeof(T)), true, true};
}
DataAccess inout(Region region) { return {region, true, true}; }

HostSpaceOptions device_options(std::string name, int peer_group = -1) {
  HostSpaceOptions options;
  options.name = std::move(name);
  options.peer_group = peer_group;
  return options;
}

// Where access 'index' of a staged task starts on the device.
template <class T>
T *on_device(const Staging &staging, std::size_t index) {
  const Placement &p = staging.placements.at(index);
  return reinterpret_cast<T *>(HostSpace::bytes_of(p.buffer) + p.offset);
}

// A device task: stage (which must succeed), wait for the copies, run kernel(staging) on the
// device bytes, finish. Busy is an error here: the tests that expect it stage by hand.
template <class Kernel>
void run_device_task(Directory &directory, SpaceId space, const Accesses &accesses,
                     Kernel &&kernel) {
  Staging staging;
  if (directory.stage(space, accesses, staging) != StageResult::Staged)
    throw std::runtime_error("stage() answered Busy with nothing else running");
  if (staging.placements.size() != accesses.size())
    throw std::runtime_error("stage() gave no placement for each access");
  for (const CompletionPtr &ready : staging.ready) ready->wait();
  kernel(staging);
  directory.finish(accesses, staging);
}

// run_device_task, with what it threw as text: "" when it ran.
template <class Kernel>
std::string device_task_error(Directory &directory, SpaceId space, const Accesses &accesses,
                              Kernel &&kernel) {
  try {
    run_device_task(directory, space, accesses, kernel);
    return "";
  } catch (const std::exception &error) {
    return error.what();
  }
}

// A host task: acquire_host, then the body.
template <class Body>
void run_host_task(Directory &directory, const Accesses &accesses, Body &&body) {
  directory.acquire_host(accesses);
  body();
}

::testing::AssertionResult same_values(const int *actual, const int *expected, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (actual[i] != expected[i])
      return ::testing::AssertionFailure() << "first difference at [" << i << "] of " << n << ": "
                                           << actual[i] << " instead of " << expected[i];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_values(const std::vector<int> &actual,
                                       const std::vector<int> &expected) {
  if (actual.size() != expected.size()) return ::testing::AssertionFailure() << "sizes differ";
  return same_values(actual.data(), expected.data(), actual.size());
}

std::vector<int> iota_vector(std::size_t n, int first = 0) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// A HostSpace that checks how the directory uses device buffers: a buffer is never freed
// while a copy into or out of it is still in flight. free() counts the violation, then waits
// for those copies before freeing, so that the test itself never writes freed memory.
class CheckedSpace final : public MemorySpace {
 public:
  explicit CheckedSpace(HostSpaceOptions options)
      : peer_group_(options.peer_group), inner_(std::move(options)) {}

  std::string name() const override { return inner_.name(); }
  std::size_t memory_size() const override { return inner_.memory_size(); }
  std::size_t argument_alignment() const override { return inner_.argument_alignment(); }
  bool wants_staging() const override { return inner_.wants_staging(); }

  DeviceBuffer allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void free(DeviceBuffer buffer) override {
    std::vector<CompletionPtr> copies;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto node = in_flight_.extract(buffer.handle)) copies = std::move(node.mapped());
    }
    for (const CompletionPtr &copy : copies)
      if (!copy->poll()) {
        ++violations_;
        break;
      }
    for (const CompletionPtr &copy : copies) copy->wait();
    inner_.free(buffer);
  }
  CompletionPtr write(DeviceBuffer target, std::size_t offset, const void *source,
                      std::size_t bytes, Dependencies after) override {
    return track(target, inner_.write(target, offset, source, bytes, after));
  }
  CompletionPtr read(DeviceBuffer source, std::size_t offset, void *target, std::size_t bytes,
                     Dependencies after) override {
    return track(source, inner_.read(source, offset, target, bytes, after));
  }
  CompletionPtr copy(DeviceBuffer source, std::size_t source_offset, DeviceBuffer target,
                     std::size_t target_offset, std::size_t bytes, Dependencies after) override {
    CompletionPtr done = inner_.copy(source, source_offset, target, target_offset, bytes, after);
    track(source, done);
    return track(target, done);
  }
  bool can_copy_from(const MemorySpace &other) const override {
    auto *peer = dynamic_cast<const CheckedSpace *>(&other);
    return peer && peer_group_ >= 0 && peer->peer_group_ == peer_group_;
  }
  CompletionPtr copy_from(MemorySpace &other, DeviceBuffer source, std::size_t source_offset,
                          DeviceBuffer target, std::size_t target_offset, std::size_t bytes,
                          Dependencies after) override {
    auto &peer = dynamic_cast<CheckedSpace &>(other);
    // HostSpace buffers are heap memory: this space's thread copies between the two.
    CompletionPtr done = inner_.copy(source, source_offset, target, target_offset, bytes, after);
    peer.track(source, done);
    return track(target, done);
  }
  PinnedBuffer allocate_pinned(std::size_t bytes) override { return inner_.allocate_pinned(bytes); }
  void free_pinned(PinnedBuffer buffer) override { inner_.free_pinned(buffer); }

  std::size_t violations() const { return violations_.load(); }
  std::size_t copies_made() const { return inner_.copies_made(); }
  std::size_t live_buffers() const { return inner_.live_buffers(); }

 private:
  CompletionPtr track(DeviceBuffer buffer, CompletionPtr done) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto &copies = in_flight_[buffer.handle];
    std::erase_if(copies, [](const CompletionPtr &c) { return c->poll(); });
    copies.push_back(done);
    return done;
  }

  int peer_group_;
  HostSpace inner_;
  std::mutex mutex_;
  std::map<std::uintptr_t, std::vector<CompletionPtr>> in_flight_;
  std::atomic<std::size_t> violations_{0};
};

// ---------------------------------------------------------------------------------------------
// One device

TEST(Directory, ChainOnOneDeviceCopiesInOnceAndBackAtFlush) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(1000), ref = x;
  const std::vector<int> initial = x;
  const std::size_t bytes = x.size() * sizeof(int);

  for (int step = 1; step <= 5; ++step) {
    run_device_task(directory, kDev1, {inout(x.data(), x.size())}, [&](const Staging &s) {
      int *d = on_device<int>(s, 0);
      EXPECT_TRUE(same_values(d, ref.data(), ref.size())) << "task " << step;
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = d[i] = d[i] * 3 + step;
    });
  }
  TransferCounters c = directory.counters(kDev1);
  EXPECT_EQ(c.bytes_to_device, bytes);
  EXPECT_EQ(c.bytes_to_host, 0u);
  EXPECT_EQ(c.copies, 1u);
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.hits, 4u);
  EXPECT_EQ(c.allocations, 1u);
  EXPECT_EQ(directory.used_bytes(kDev1), bytes);
  EXPECT_TRUE(same_values(x, initial)) << "host memory changed before the flush";
  EXPECT_EQ(directory.fragment_at(x.data()).valid, bit(kDev1));
  EXPECT_EQ(directory.fragment_at(&x.back()).valid, bit(kDev1));
  EXPECT_EQ(directory.fragment_at(x.data()).version, 5u);
  EXPECT_FALSE(directory.host_holds_everything());

  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
  c = directory.counters(kDev1);
  EXPECT_EQ(c.bytes_to_host, bytes);
  EXPECT_EQ(c.bytes_to_device, bytes);
  EXPECT_EQ(directory.fragment_at(x.data()).valid, kHostOnly);
  EXPECT_EQ(directory.fragment_at(&x.back()).valid, kHostOnly);
  EXPECT_TRUE(directory.host_holds_everything());

  // The allocation stays cached: a new read copies again (the host may have changed the
  // data) but allocates nothing.
  for (int &v : x) v = -v;
  ref = x;
  run_device_task(directory, kDev1, {in(x.data(), x.size())}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data(), ref.size()));
  });
  c = directory.counters(kDev1);
  EXPECT_EQ(c.bytes_to_device, 2 * bytes);
  EXPECT_EQ(c.allocations, 1u);
  EXPECT_EQ(device.live_buffers(), 1u);
}

// Blocks that change devices between flushes (a scheduler that balances) take the buffers
// their predecessors left behind there: no allocation after the first round.
TEST(Directory, BuffersLeftByAFlushAreTakenByOtherData) {
  HostSpace dev1(device_options("dev1")), dev2(device_options("dev2"));
  Directory directory({{&dev1}, {&dev2}});
  std::vector<int> a = iota_vector(1000), b = iota_vector(1000, 5);
  for (int round = 0; round < 4; ++round) {
    const bool swap = round % 2 == 1;
    run_device_task(directory, swap ? kDev2 : kDev1, {inout(a.data(), a.size())},
                    [&](const Staging &s) { on_device<int>(s, 0)[0] += 1; });
    run_device_task(directory, swap ? kDev1 : kDev2, {inout(b.data(), b.size())},
                    [&](const Staging &s) { on_device<int>(s, 0)[0] += 1; });
    directory.flush();
  }
  EXPECT_EQ(a[0], 4);
  EXPECT_EQ(b[0], 5 + 4);
  EXPECT_EQ(directory.counters(kDev1).allocations, 1u);
  EXPECT_EQ(directory.counters(kDev2).allocations, 1u);
  EXPECT_EQ(dev1.live_buffers(), 1u);
  EXPECT_EQ(dev2.live_buffers(), 1u);
}

// After a flush, tasks over overlapping parts of an array (blocks with halos) get the array's
// whole allocation back from the buffer it left: no allocation, no merge of one part's
// allocation into the next one's (which moved every byte valid so far, once per part).
TEST(Directory, PartsOfAnArrayAfterAFlushShareItsBuffer) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  constexpr std::size_t n = 4096, block = 512, halo = 16;
  std::vector<int> x = iota_vector(n);
  for (int round = 0; round < 3; ++round) {
    if (round == 0)  // the whole array once
      run_device_task(directory, kDev1, {inout(x.data(), n)},
                      [&](const Staging &s) { on_device<int>(s, 0)[0] += 1; });
    else  // blocks with halos: each reads its neighbours' edges, writes its own block
      for (std::size_t k = 0; k < n / block; ++k) {
        const std::size_t first = k ? k * block - halo : 0,
                          last = std::min(n, (k + 1) * block + halo);
        run_device_task(directory, kDev1,
                        {in(x.data() + first, last - first), inout(x.data() + k * block, block)},
                        [&](const Staging &s) { on_device<int>(s, 1)[0] += 1; });
      }
    directory.flush();
  }
  EXPECT_EQ(x[0], 3);
  EXPECT_EQ(x[block], static_cast<int>(block) + 2);
  EXPECT_EQ(directory.counters(kDev1).allocations, 1u);
  EXPECT_EQ(device.live_buffers(), 1u);
}

// Two accesses of one task that an allocation already there spans, their own ranges apart at
// a distance kernels cannot be given (OpenCL sub-buffers start at aligned offsets): each gets
// an offset that can, however the allocations are laid out.
TEST(Directory, AccessesSharingAnAllocationGetAlignedOffsets) {
  HostSpaceOptions options = device_options("dev1");
  options.argument_alignment = 128;
  HostSpace device(options);
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(4096);
  run_device_task(directory, kDev1, {inout(x.data(), 2048)},
                  [&](const Staging &s) { on_device<int>(s, 0)[0] += 1; });
  // The second access runs past the allocation, which also holds the first one.
  run_device_task(directory, kDev1, {inout(x.data() + 1028, 100), in(x.data() + 2000, 100)},
                  [&](const Staging &s) {
                    for (int i : {0, 1}) EXPECT_EQ(s.placements[i].offset % 128, 0u) << i;
                    on_device<int>(s, 0)[0] += on_device<int>(s, 1)[99];
                  });
  directory.flush();
  EXPECT_EQ(x[0], 1);
  EXPECT_EQ(x[1028], 1028 + 2099);
}

TEST(Directory, SecondReadIsAHit) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(256, 7);
  const std::size_t bytes = x.size() * sizeof(int);

  for (int task = 0; task < 2; ++task)
    run_device_task(directory, kDev1, {in(x.data(), x.size())}, [&](const Staging &s) {
      EXPECT_TRUE(same_values(on_device<int>(s, 0), x.data(), x.size())) << "task " << task;
    });
  const TransferCounters c = directory.counters(kDev1);
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.bytes_to_device, bytes);
  EXPECT_EQ(c.copies, 1u);
  EXPECT_EQ(device.copies_made(), 1u);
  // Read only: the host still holds a valid copy, nothing to write back.
  EXPECT_EQ(directory.fragment_at(x.data()).valid, kHostOnly | bit(kDev1));
  directory.flush();
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, 0u);
}

TEST(Directory, WriteOnlyTaskCopiesNothingIn) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x(300, -1), ref = iota_vector(300, 100);
  run_device_task(directory, kDev1, {out(x.data(), x.size())}, [&](const Staging &s) {
    std::copy(ref.begin(), ref.end(), on_device<int>(s, 0));
  });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, 0u);
  EXPECT_EQ(directory.counters(kDev1).misses + directory.counters(kDev1).hits, 0u);
  EXPECT_EQ(directory.fragment_at(x.data()).valid, bit(kDev1));
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
}

// ---------------------------------------------------------------------------------------------
// Two devices

TEST(Directory, DeviceToDeviceWithoutPeersGoesThroughTheHost) {
  HostSpace dev1(device_options("dev1")), dev2(device_options("dev2"));
  Directory directory({{&dev1}, {&dev2}});
  std::vector<int> x(500, 0), ref = iota_vector(500, 1000);
  const std::size_t bytes = x.size() * sizeof(int);

  run_device_task(directory, kDev1, {out(x.data(), x.size())}, [&](const Staging &s) {
    std::copy(ref.begin(), ref.end(), on_device<int>(s, 0));
  });
  run_device_task(directory, kDev2, {in(x.data(), x.size())}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data(), ref.size()));
  });
  const TransferCounters c1 = directory.counters(kDev1), c2 = directory.counters(kDev2);
  EXPECT_EQ(c1.bytes_to_host, bytes);
  EXPECT_EQ(c1.bytes_to_device, 0u);
  EXPECT_EQ(c2.bytes_to_device, bytes);
  EXPECT_EQ(c2.bytes_from_peer, 0u);
  EXPECT_EQ(c2.misses, 1u);
  // On the way the host got the values and keeps them.
  EXPECT_TRUE(same_values(x, ref));
  EXPECT_EQ(directory.fragment_at(x.data()).valid, kHostOnly | bit(kDev1) | bit(kDev2));
  directory.flush();
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, bytes) << "the host already held it";
}

TEST(Directory, DeviceToDeviceInAPeerGroupCopiesDirectly) {
  HostSpace dev1(device_options("dev1", 0)), dev2(device_options("dev2", 0));
  Directory directory({{&dev1}, {&dev2}});
  std::vector<int> x(500, 0), ref = iota_vector(500, 1000);
  const std::vector<int> initial = x;
  const std::size_t bytes = x.size() * sizeof(int);

  run_device_task(directory, kDev1, {out(x.data(), x.size())}, [&](const Staging &s) {
    std::copy(ref.begin(), ref.end(), on_device<int>(s, 0));
  });
  run_device_task(directory, kDev2, {in(x.data(), x.size())}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data(), ref.size()));
  });
  TransferCounters c1 = directory.counters(kDev1), c2 = directory.counters(kDev2);
  EXPECT_EQ(c2.bytes_from_peer, bytes);
  EXPECT_EQ(c2.bytes_to_device, 0u);
  EXPECT_EQ(c1.bytes_to_host, 0u);
  EXPECT_EQ(c2.bytes_to_host, 0u);
  EXPECT_TRUE(same_values(x, initial)) << "the copy went through host memory";
  EXPECT_EQ(directory.fragment_at(x.data()).valid, bit(kDev1) | bit(kDev2));

  // Flush from the lowest valid device, once.
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
  c1 = directory.counters(kDev1);
  c2 = directory.counters(kDev2);
  EXPECT_EQ(c1.bytes_to_host + c2.bytes_to_host, bytes);
}

// Modified data goes back and forth between two devices, read and written on each.
TEST(Directory, PingPongBetweenDevices) {
  for (int peer_group : {-1, 3}) {
    SCOPED_TRACE(peer_group < 0 ? "through the host" : "peers");
    HostSpace dev1(device_options("dev1", peer_group)), dev2(device_options("dev2", peer_group));
    Directory directory({{&dev1}, {&dev2}});
    std::vector<int> x = iota_vector(333), ref = x;
    for (int round = 0; round < 6; ++round) {
      const SpaceId space = round % 2 ? kDev2 : kDev1;
      run_device_task(directory, space, {inout(x.data(), x.size())}, [&](const Staging &s) {
        int *d = on_device<int>(s, 0);
        EXPECT_TRUE(same_values(d, ref.data(), ref.size())) << "round " << round;
        for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = d[i] = d[i] + round * 7 + 1;
      });
    }
    directory.flush();
    EXPECT_TRUE(same_values(x, ref));
  }
}

// A device reads bytes of which part is Modified on a peer and part valid on the host only.
TEST(Directory, ReadFromMixedSources) {
  HostSpace dev1(device_options("dev1", 0)), dev2(device_options("dev2", 0));
  Directory directory({{&dev1}, {&dev2}});
  std::vector<int> x = iota_vector(200), ref = x;
  run_device_task(directory, kDev1, {inout(x.data(), 100)}, [&](const Staging &s) {
    int *d = on_device<int>(s, 0);
    for (int i = 0; i < 100; ++i) ref[i] = d[i] = -d[i] - 1;
  });
  run_device_task(directory, kDev2, {in(x.data() + 50, 100)}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data() + 50, 100));
  });
  EXPECT_EQ(directory.counters(kDev2).bytes_from_peer, 50 * sizeof(int));
  EXPECT_EQ(directory.counters(kDev2).bytes_to_device, 50 * sizeof(int));
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
}

// ---------------------------------------------------------------------------------------------
// The host

TEST(Directory, AcquireHostCopiesModifiedDataBack) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(400), ref = x;
  const std::size_t bytes = x.size() * sizeof(int);
  run_device_task(directory, kDev1, {inout(x.data(), x.size())}, [&](const Staging &s) {
    int *d = on_device<int>(s, 0);
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = d[i] = d[i] * d[i];
  });
  EXPECT_FALSE(same_values(x, ref)) << "the host saw the device's writes before acquire_host";

  run_host_task(directory, {in(x.data(), x.size())},
                [&] { EXPECT_TRUE(same_values(x, ref)); });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, bytes);
  EXPECT_EQ(directory.counters(kHost).misses, 1u);
  EXPECT_EQ(directory.fragment_at(x.data()).valid, kHostOnly | bit(kDev1));

  // Both hold it now: a second host read and a device read are hits, with no copy.
  directory.acquire_host(Accesses{in(x.data(), x.size())});
  EXPECT_EQ(directory.counters(kHost).hits, 1u);
  run_device_task(directory, kDev1, {in(x.data(), x.size())}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data(), ref.size()));
  });
  EXPECT_EQ(directory.counters(kDev1).hits, 1u);
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, bytes);
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, bytes);
}

TEST(Directory, HostWriteInvalidatesTheDeviceCopy) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(400), ref = x;
  const std::size_t bytes = x.size() * sizeof(int);
  auto device_increment = [&] {
    run_device_task(directory, kDev1, {inout(x.data(), x.size())}, [&](const Staging &s) {
      int *d = on_device<int>(s, 0);
      EXPECT_TRUE(same_values(d, ref.data(), ref.size()));
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = ++d[i];
    });
  };
  device_increment();

  // A host task reading and writing: the device's values come back first.
  run_host_task(directory, {inout(x.data(), x.size())}, [&] {
    EXPECT_TRUE(same_values(x, ref));
    for (std::size_t i = 0; i < x.size(); ++i) ref[i] = x[i] *= 2;
  });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, bytes);
  EXPECT_EQ(directory.fragment_at(x.data()).valid, kHostOnly);

  // The device copy is stale: the next device task copies the host's values in again.
  device_increment();
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, 2 * bytes);

  // A host task that only writes: nothing comes back from the device.
  run_host_task(directory, {out(x.data(), x.size())}, [&] {
    for (std::size_t i = 0; i < x.size(); ++i) ref[i] = x[i] = 5 * static_cast<int>(i);
  });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, bytes);
  device_increment();
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, 3 * bytes);
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
}

TEST(Directory, HostTasksNeedNoWorkWhenTheHostHoldsEverything) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(64);
  EXPECT_TRUE(directory.host_holds_everything());
  directory.acquire_host(Accesses{inout(x.data(), x.size())});
  directory.flush();
  EXPECT_TRUE(directory.host_holds_everything());
  EXPECT_EQ(device.copies_made(), 0u);
  EXPECT_EQ(directory.fragment_at(x.data()).valid, kHostOnly);
}

// ---------------------------------------------------------------------------------------------
// Partial overlaps and blocks

TEST(Directory, PartialOverlapsMatchAReference) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(200), ref = x;
  auto check_host = [&](std::size_t from, std::size_t to, const char *when) {
    EXPECT_TRUE(same_values(x.data() + from, ref.data() + from, to - from))
        << when << ", host x[" << from << ":" << to << ")";
  };

  // Device writes x[0:100) without reading it.
  run_device_task(directory, kDev1, {out(x.data(), 100)}, [&](const Staging &s) {
    int *d = on_device<int>(s, 0);
    for (int i = 0; i < 100; ++i) ref[i] = d[i] = 1000 + i;
  });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, 0u);

  // Device reads x[50:150): [50,100) is there, [100,150) comes from the host; the two
  // allocations merge into one.
  Placement merged;
  run_device_task(directory, kDev1, {in(x.data() + 50, 100)}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data() + 50, 100));
    merged = s.placements[0];
  });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, 50 * sizeof(int));
  EXPECT_EQ(directory.fragment_at(&x[60]).valid, bit(kDev1));
  EXPECT_EQ(directory.fragment_at(&x[120]).valid, kHostOnly | bit(kDev1));

  // The merged allocation holds x[0:150): a task naming all of it hits without a copy, and
  // in the same buffer.
  run_device_task(directory, kDev1, {in(x.data(), 150)}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data(), 150));
    EXPECT_EQ(s.placements[0].buffer, merged.buffer);
    EXPECT_EQ(s.placements[0].offset + 50 * sizeof(int), merged.offset);
  });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, 50 * sizeof(int));
  EXPECT_EQ(directory.counters(kDev1).hits, 1u);

  // A host task reads and writes x[25:75).
  run_host_task(directory, {inout(x.data() + 25, 50)}, [&] {
    check_host(25, 75, "host task");
    for (int i = 25; i < 75; ++i) ref[i] = x[i] = -i;
  });
  EXPECT_EQ(directory.fragment_at(&x[30]).valid, kHostOnly);
  EXPECT_EQ(directory.fragment_at(&x[10]).valid & bit(kDev1), bit(kDev1));

  // One device task with two overlapping accesses: reads x[0:60), reads and writes
  // x[40:150). Both land in one buffer, at their own offsets.
  run_device_task(directory, kDev1, {in(x.data(), 60), inout(x.data() + 40, 110)},
                  [&](const Staging &s) {
                    EXPECT_EQ(s.placements[0].buffer, s.placements[1].buffer);
                    EXPECT_EQ(s.placements[1].offset - s.placements[0].offset, 40 * sizeof(int));
                    EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data(), 60));
                    int *d = on_device<int>(s, 1);
                    EXPECT_TRUE(same_values(d, ref.data() + 40, 110));
                    for (int i = 0; i < 110; ++i) ref[40 + i] = d[i] = d[i] * 2 + 1;
                  });

  // Flush of x[0:60) only: that part is current on the host, the rest not yet.
  directory.flush(Region::contiguous(x.data(), 60 * sizeof(int)));
  check_host(0, 60, "after flush of [0,60)");
  EXPECT_FALSE(same_values(x.data() + 60, ref.data() + 60, 90)) << "flushed past the region";
  EXPECT_EQ(directory.fragment_at(&x[59]).valid, kHostOnly);
  EXPECT_EQ(directory.fragment_at(&x[60]).valid, bit(kDev1));

  // Device reads and writes x[100:200): [150,200) is new, the allocation grows again.
  run_device_task(directory, kDev1, {inout(x.data() + 100, 100)}, [&](const Staging &s) {
    int *d = on_device<int>(s, 0);
    EXPECT_TRUE(same_values(d, ref.data() + 100, 100));
    for (int i = 0; i < 100; ++i) ref[100 + i] = d[i] += 3;
  });

  // A host read of x[55:65): the boundary of the flushed part.
  run_host_task(directory, {in(x.data() + 55, 10)}, [&] { check_host(55, 65, "host read"); });

  directory.flush();
  check_host(0, 200, "after the full flush");
  EXPECT_TRUE(directory.host_holds_everything());
  EXPECT_LE(directory.used_bytes(kDev1), 3 * 200 * sizeof(int));
}

TEST(Directory, BlockRegionsMoveOnlyTheirRows) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  constexpr std::size_t kCols = 64, kRows = 64;
  std::vector<int> m = iota_vector(kRows * kCols), ref = m;
  const std::size_t stride = kCols * sizeof(int);
  auto at = [&](std::size_t r, std::size_t c) { return &m[r * kCols + c]; };

  // Rows [8, 24), columns [16, 48).
  const Region block = Region::block(at(8, 16), 32 * sizeof(int), 16, stride);
  ASSERT_FALSE(block.is_contiguous());
  auto double_block = [&](const Region &region, std::size_t row0, std::size_t col0,
                          std::size_t cols) {
    run_device_task(directory, kDev1, {inout(region)}, [&](const Staging &s) {
      unsigned char *base = on_device<unsigned char>(s, 0);
      for (std::size_t r = 0; r < region.rows; ++r) {
        int *row = reinterpret_cast<int *>(base + r * stride);
        const int *expect = &ref[(row0 + r) * kCols + col0];
        EXPECT_TRUE(same_values(row, expect, cols)) << "row " << row0 + r;
        for (std::size_t c = 0; c < cols; ++c) ref[(row0 + r) * kCols + col0 + c] = row[c] *= 2;
      }
    });
  };
  double_block(block, 8, 16, 32);
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, 16 * 32 * sizeof(int));
  EXPECT_EQ(directory.fragment_at(at(8, 16)).valid, bit(kDev1));
  EXPECT_EQ(directory.fragment_at(at(8, 48)).valid, kHostOnly) << "between two rows";

  // Flush of the block alone: its rows come back, and nothing between them.
  directory.flush(block);
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, 16 * 32 * sizeof(int));
  EXPECT_TRUE(same_values(m, ref)) << "the bytes between the rows must not be written back";
  EXPECT_TRUE(directory.host_holds_everything());

  // A second block beside it, columns [0, 16) of rows [4, 20): its bounding range overlaps
  // the first allocation, which merges; only its rows move.
  const Region beside = Region::block(at(4, 0), 16 * sizeof(int), 16, stride);
  double_block(beside, 4, 0, 16);
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, (16 * 32 + 16 * 16) * sizeof(int));
  // And the first block again: its rows come from the host again (flushed), values right.
  double_block(block, 8, 16, 32);
  directory.flush();
  EXPECT_TRUE(same_values(m, ref));
}

// ---------------------------------------------------------------------------------------------
// Capacity: eviction, Busy, too large

TEST(Directory, EvictionRoundRobinWritesBackAndStaysWithinCapacity) {
  CheckedSpace device(device_options("small-dev"));
  constexpr std::size_t kCapacity = 4096;
  Directory directory({{&device, kCapacity}});
  constexpr std::size_t kBlock = 256;                 // ints: 1 KiB
  constexpr std::size_t kBlocks = 40;                 // 40 KiB, 10 times the capacity
  std::vector<int> x = iota_vector(kBlock * kBlocks), ref = x;

  for (int round = 0; round < 3; ++round)
    for (std::size_t b = 0; b < kBlocks; ++b) {
      int *block = x.data() + b * kBlock;
      run_device_task(directory, kDev1, {inout(block, kBlock)}, [&](const Staging &s) {
        int *d = on_device<int>(s, 0);
        EXPECT_TRUE(same_values(d, ref.data() + b * kBlock, kBlock))
            << "round " << round << " block " << b;
        for (std::size_t i = 0; i < kBlock; ++i)
          ref[b * kBlock + i] = d[i] += round * 1000 + static_cast<int>(b);
      });
      ASSERT_LE(directory.used_bytes(kDev1), kCapacity);
    }
  // Tasks reading a block and writing its neighbour: two allocations pinned at once.
  for (std::size_t b = 0; b + 1 < kBlocks; ++b) {
    run_device_task(directory, kDev1,
                    {in(x.data() + (b + 1) * kBlock, kBlock), inout(x.data() + b * kBlock, kBlock)},
                    [&](const Staging &s) {
                      const int *next = on_device<int>(s, 0);
                      int *d = on_device<int>(s, 1);
                      EXPECT_TRUE(same_values(next, ref.data() + (b + 1) * kBlock, kBlock));
                      EXPECT_TRUE(same_values(d, ref.data() + b * kBlock, kBlock));
                      for (std::size_t i = 0; i < kBlock; ++i)
                        ref[b * kBlock + i] = d[i] -= next[i];
                    });
    ASSERT_LE(directory.used_bytes(kDev1), kCapacity);
  }
  const TransferCounters c = directory.counters(kDev1);
  EXPECT_GT(c.evictions, 0u);
  EXPECT_GT(c.bytes_to_host, 0u) << "modified blocks are written back when evicted";
  EXPECT_LE(c.peak_bytes, kCapacity);
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
  EXPECT_EQ(device.violations(), 0u) << "a device buffer was freed with a copy in flight";
}

// Evicted data written back, and data copied in, through the pinned staging buffers.
TEST(Directory, EvictionThroughStagingBuffers) {
  HostSpaceOptions options = device_options("staging-dev");
  options.wants_staging = true;
  CheckedSpace device(options);
  DirectoryOptions directory_options;
  directory_options.staging_chunk = 1000;  // not a divisor of anything below
  directory_options.staging_threshold = 0;
  Directory directory({{&device, 8192}}, directory_options);
  std::vector<int> x = iota_vector(10000), ref = x;  // 40000 bytes
  constexpr std::size_t kBlock = 700;                // 2800 bytes: 2 fit
  for (int round = 0; round < 2; ++round)
    for (std::size_t start = 0; start < x.size(); start += kBlock) {
      const std::size_t n = std::min(kBlock, x.size() - start);
      run_device_task(directory, kDev1, {inout(x.data() + start, n)}, [&](const Staging &s) {
        int *d = on_device<int>(s, 0);
        EXPECT_TRUE(same_values(d, ref.data() + start, n)) << "round " << round << " at " << start;
        for (std::size_t i = 0; i < n; ++i) ref[start + i] = d[i] = d[i] * 2 - 1;
      });
      ASSERT_LE(directory.used_bytes(kDev1), 8192u);
    }
  EXPECT_GT(directory.counters(kDev1).evictions, 0u);
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, 2 * x.size() * sizeof(int));
  EXPECT_EQ(device.violations(), 0u);
}

// The device has less memory than the directory's limit says: allocations fail below the
// limit, and the directory makes room all the same.
TEST(Directory, DeviceMemorySmallerThanTheCapacity) {
  HostSpaceOptions options = device_options("small-memory");
  options.memory_size = 4096;
  CheckedSpace device(options);
  Directory directory({{&device, std::size_t(1) << 20}});
  std::vector<int> x = iota_vector(4096), ref = x;  // 16 KiB
  for (int round = 0; round < 2; ++round)
    for (std::size_t b = 0; b < 16; ++b)
      run_device_task(directory, kDev1, {inout(x.data() + b * 256, 256)}, [&](const Staging &s) {
        int *d = on_device<int>(s, 0);
        EXPECT_TRUE(same_values(d, ref.data() + b * 256, 256));
        for (std::size_t i = 0; i < 256; ++i) ref[b * 256 + i] = d[i] += 5;
      });
  EXPECT_GT(directory.counters(kDev1).evictions, 0u);
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
  EXPECT_EQ(device.violations(), 0u);
}

TEST(Directory, BusyWhileAnotherTaskHoldsTheMemory) {
  CheckedSpace device(device_options("small-dev"));
  Directory directory({{&device, 4096}});
  std::vector<int> a = iota_vector(768), ref_a = a;  // 3 KiB
  std::vector<int> b = iota_vector(768, 5000);       // b[0:128) is 512 B, b[256:768) 2 KiB
  std::vector<int> c = iota_vector(256, 9000);       // 1 KiB

  const Accesses task_a{inout(a.data(), a.size())};
  Staging staged_a;
  ASSERT_EQ(directory.stage(kDev1, task_a, staged_a), StageResult::Staged);
  for (const CompletionPtr &ready : staged_a.ready) ready->wait();
  int *da = on_device<int>(staged_a, 0);
  for (std::size_t i = 0; i < a.size(); ++i) ref_a[i] = da[i] += 1;

  // B's first access fits beside A, its second does not while A holds its memory.
  const Accesses task_b{in(b.data(), 128), in(b.data() + 256, 512)};
  Staging staged_b;
  EXPECT_EQ(directory.stage(kDev1, task_b, staged_b), StageResult::Busy);
  EXPECT_TRUE(staged_b.pinned.empty());
  EXPECT_LE(directory.used_bytes(kDev1), 4096u);
  EXPECT_EQ(directory.stage(kDev1, task_b, staged_b), StageResult::Busy) << "A still runs";

  // B holds nothing: C fits beside A by evicting what B placed.
  run_device_task(directory, kDev1, {in(c.data(), c.size())}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), c.data(), c.size()));
  });

  directory.finish(task_a, staged_a);
  ASSERT_EQ(directory.stage(kDev1, task_b, staged_b), StageResult::Staged);
  for (const CompletionPtr &ready : staged_b.ready) ready->wait();
  EXPECT_TRUE(same_values(on_device<int>(staged_b, 0), b.data(), 128));
  EXPECT_TRUE(same_values(on_device<int>(staged_b, 1), b.data() + 256, 512));
  directory.finish(task_b, staged_b);
  EXPECT_LE(directory.used_bytes(kDev1), 4096u);

  // A's write was saved when its allocation went.
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, a.size() * sizeof(int));
  directory.flush();
  EXPECT_TRUE(same_values(a, ref_a));
  EXPECT_EQ(device.violations(), 0u);
}

TEST(Directory, DataTooLargeNamesTheSpace) {
  CheckedSpace device(device_options("tiny-device"));
  Directory directory({{&device, 4096}});
  std::vector<char> big(8192), a(3000), b(3000);

  auto expect_too_large = [&](const Accesses &accesses, const std::string &expected) {
    SCOPED_TRACE(expected);
    Staging staging;
    try {
      directory.stage(kDev1, accesses, staging);
      ADD_FAILURE() << "stage() did not throw";
    } catch (const DataTooLargeError &error) {
      EXPECT_EQ(error.what(), "a task " + expected);
      EXPECT_EQ(error.predicate(), expected);
    }
    EXPECT_TRUE(staging.pinned.empty());
  };
  expect_too_large({in(big.data(), big.size())},
                   "needs 8 KiB at once on tiny-device, more than the device's memory limit of "
                   "4 KiB");
  // Each fits alone, not both together: what the task needs in all, not the piece that did not
  // fit beside the other (once "2 KiB in one piece does not fit", against a 4 KiB limit).
  expect_too_large({in(a.data(), a.size()), in(b.data(), b.size())},
                   "needs 5.86 KiB at once on tiny-device, more than the device's memory limit "
                   "of 4 KiB");
  // Overlapping accesses count once.
  expect_too_large({in(big.data(), 3000), inout(big.data() + 1000, 3097)},
                   "needs 4097 bytes at once on tiny-device, more than the device's memory "
                   "limit of 4096 bytes");

  // Nothing stays pinned: each fits alone afterwards.
  run_device_task(directory, kDev1, {in(a.data(), a.size())}, [](const Staging &) {});
  run_device_task(directory, kDev1, {in(b.data(), b.size())}, [](const Staging &) {});
  EXPECT_LE(directory.used_bytes(kDev1), 4096u);

  // The host space has no capacity: staging there is an internal error (a manager stages only
  // into its own device).
  Staging staging;
  EXPECT_THROW(directory.stage(kHost, Accesses{in(a.data(), 1)}, staging), nanort::InternalError);
  EXPECT_THROW(directory.stage(2, Accesses{in(a.data(), 1)}, staging), nanort::InternalError);
}

// ---------------------------------------------------------------------------------------------
// Staging through pinned buffers

TEST(Directory, StagedCopiesInChunks) {
  HostSpaceOptions options = device_options("staging-dev");
  options.wants_staging = true;
  HostSpace device(options);
  DirectoryOptions directory_options;
  directory_options.staging_chunk = 4096;
  directory_options.staging_threshold = 0;
  Directory directory({{&device}}, directory_options);

  // 20012 bytes: 4 full chunks and a partial one. Two arrays in one task share the two
  // staging buffers.
  std::vector<int> x = iota_vector(5003), y = iota_vector(1500, -7000), ref_x = x;
  const std::size_t x_bytes = x.size() * sizeof(int), y_bytes = y.size() * sizeof(int);
  run_device_task(directory, kDev1, {inout(x.data(), x.size()), in(y.data(), y.size())},
                  [&](const Staging &s) {
                    int *d = on_device<int>(s, 0);
                    EXPECT_TRUE(same_values(d, ref_x.data(), ref_x.size()));
                    EXPECT_TRUE(same_values(on_device<int>(s, 1), y.data(), y.size()));
                    for (std::size_t i = 0; i < x.size(); ++i) ref_x[i] = d[i] = 3 * d[i] - 1;
                  });
  EXPECT_EQ(directory.counters(kDev1).bytes_to_device, x_bytes + y_bytes);
  EXPECT_EQ(device.copies_made(), 5u + 2u) << "one copy per chunk";

  const std::size_t before_flush = device.copies_made();
  directory.flush();
  EXPECT_TRUE(same_values(x, ref_x));
  EXPECT_EQ(directory.counters(kDev1).bytes_to_host, x_bytes);
  EXPECT_EQ(device.copies_made() - before_flush, 5u);

  // A part of x inside the cached allocation, not at a chunk boundary: offsets right.
  for (int &v : x) v ^= 0x5555;
  ref_x = x;
  run_device_task(directory, kDev1, {inout(x.data() + 1001, 3333)}, [&](const Staging &s) {
    int *d = on_device<int>(s, 0);
    EXPECT_TRUE(same_values(d, ref_x.data() + 1001, 3333));
    for (int i = 0; i < 3333; ++i) ref_x[1001 + i] = d[i] += 11;
  });
  directory.flush();
  EXPECT_TRUE(same_values(x, ref_x));
}

// A memory space that locks host memory by itself, as the CUDA backend does: a copy of at
// least 'large' bytes it has not locked asks to be locked first, and lock_for_copy() waits
// for 'go' (a registration that takes long), then the range counts as locked.
class LockingSpace final : public MemorySpace {
 public:
  LockingSpace(HostSpaceOptions options, std::size_t large, std::shared_future<void> go)
      : inner_(std::move(options)), large_(large), go_(std::move(go)) {}
  std::string name() const override { return inner_.name(); }
  std::size_t memory_size() const override { return inner_.memory_size(); }
  bool wants_staging() const override { return true; }
  bool is_page_locked(const void *address, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto start = reinterpret_cast<std::uintptr_t>(address);
    return std::any_of(locked_.begin(), locked_.end(), [&](const auto &range) {
      return range.first <= start && start + bytes <= range.second;
    });
  }
  bool locks_before_copy(const void *, std::size_t bytes) override { return bytes >= large_; }
  bool lock_for_copy(const void *address, std::size_t bytes) override {
    entered_.set_value();
    go_.wait();
    std::lock_guard<std::mutex> lock(mutex_);
    const auto start = reinterpret_cast<std::uintptr_t>(address);
    locked_.emplace_back(start, start + bytes);
    return true;
  }
  DeviceBuffer allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void free(DeviceBuffer buffer) override { inner_.free(buffer); }
  CompletionPtr write(DeviceBuffer target, std::size_t offset, const void *source,
                      std::size_t bytes, Dependencies after) override {
    if (fail_writes) throw std::runtime_error("copy refused by the test");
    return inner_.write(target, offset, source, bytes, after);
  }
  CompletionPtr read(DeviceBuffer source, std::size_t offset, void *target, std::size_t bytes,
                     Dependencies after) override {
    return inner_.read(source, offset, target, bytes, after);
  }
  CompletionPtr copy(DeviceBuffer source, std::size_t source_offset, DeviceBuffer target,
                     std::size_t target_offset, std::size_t bytes, Dependencies after) override {
    return inner_.copy(source, source_offset, target, target_offset, bytes, after);
  }
  PinnedBuffer allocate_pinned(std::size_t bytes) override { return inner_.allocate_pinned(bytes); }
  void free_pinned(PinnedBuffer buffer) override { inner_.free_pinned(buffer); }
  std::size_t copies_made() const { return inner_.copies_made(); }
  std::future<void> entered() { return entered_.get_future(); }
  bool fail_writes = false;

 private:
  HostSpace inner_;
  const std::size_t large_;
  std::shared_future<void> go_;
  std::promise<void> entered_;
  std::mutex mutex_;
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> locked_;
};

// A copy that waits for its host bytes to be locked waits outside the directory's lock: the
// other device's manager stages meanwhile. Then it goes direct, in one copy.
TEST(Directory, ACopyWaitingForItsLockingHoldsUpNoOtherDevice) {
  std::promise<void> go;
  std::shared_future<void> go_shared = go.get_future().share();
  HostSpaceOptions options = device_options("locking-dev");
  options.wants_staging = true;
  LockingSpace dev1(options, 16384, go_shared);
  HostSpaceOptions options2 = device_options("staging-dev");
  options2.wants_staging = true;
  HostSpace dev2(options2);
  DirectoryOptions directory_options;
  directory_options.staging_chunk = 4096;
  directory_options.staging_threshold = 0;
  Directory directory({{&dev1}, {&dev2}}, directory_options);

  std::vector<int> x = iota_vector(8192), y = iota_vector(8192, 5);  // 32 KiB each
  std::future<void> entered = dev1.entered();
  auto first = std::async(std::launch::async, [&] {
    run_device_task(directory, kDev1, {in(x.data(), x.size())}, [&](const Staging &s) {
      EXPECT_TRUE(same_values(on_device<int>(s, 0), x.data(), x.size()));
    });
  });
  if (entered.wait_for(30s) != std::future_status::ready) {  // the copy waits for its locking
    go.set_value();
    first.get();
    FAIL() << "the copy did not ask for its bytes to be locked";
  }
  auto second = std::async(std::launch::async, [&] {
    run_device_task(directory, kDev2, {in(y.data(), y.size())}, [&](const Staging &s) {
      EXPECT_TRUE(same_values(on_device<int>(s, 0), y.data(), y.size()));
    });
  });
  const bool second_ran = second.wait_for(30s) == std::future_status::ready;
  go.set_value();
  first.get();
  second.get();
  EXPECT_TRUE(second_ran) << "the other device waited for the locking";
  EXPECT_EQ(dev1.copies_made(), 1u) << "locked: one direct copy, not chunks through staging";
  EXPECT_EQ(dev2.copies_made(), 8u) << "staged in chunks";
}

// A copy made after the lock that fails fails the task's staging, as one made under the lock
// does (else the task would run on bytes that never arrived).
TEST(Directory, ACopyMadeAfterTheLockThatFailsFailsTheStaging) {
  std::promise<void> go;
  go.set_value();
  HostSpaceOptions options = device_options("locking-dev");
  options.wants_staging = true;
  LockingSpace dev1(options, 16384, go.get_future().share());
  dev1.fail_writes = true;
  DirectoryOptions directory_options;
  directory_options.staging_threshold = 0;
  Directory directory({{&dev1}}, directory_options);
  std::vector<int> x = iota_vector(8192);
  Staging staging;
  EXPECT_THROW(directory.stage(kDev1, Accesses{in(x.data(), x.size())}, staging),
               std::runtime_error);
}

TEST(Directory, SmallCopiesBypassStaging) {
  HostSpaceOptions options = device_options("staging-dev");
  options.wants_staging = true;
  HostSpace device(options);
  DirectoryOptions directory_options;
  directory_options.staging_chunk = 4096;
  directory_options.staging_threshold = 64 * 1024;
  Directory directory({{&device}}, directory_options);
  std::vector<int> x = iota_vector(5003), ref = x;
  run_device_task(directory, kDev1, {inout(x.data(), x.size())}, [&](const Staging &s) {
    int *d = on_device<int>(s, 0);
    EXPECT_TRUE(same_values(d, ref.data(), ref.size()));
    for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = ++d[i];
  });
  directory.flush();
  EXPECT_EQ(device.copies_made(), 2u) << "one copy each way, below the threshold";
  EXPECT_TRUE(same_values(x, ref));
}

// ---------------------------------------------------------------------------------------------
// Asynchrony

// The device's copies are held until the test has looked: the copy is in flight for certain.
TEST(Directory, CopiesAreAsynchronousAndSharedWhileInFlight) {
  HostSpace device(device_options("held-dev"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(1024);
  const Accesses reader{in(x.data(), x.size())};

  device.hold_copies();
  Staging first;
  ASSERT_EQ(directory.stage(kDev1, reader, first), StageResult::Staged);
  ASSERT_EQ(first.ready.size(), 1u);
  EXPECT_FALSE(first.ready[0]->poll()) << "stage() waited for its copy";
  EXPECT_EQ(device.copies_made(), 1u);

  // A second reader on the same device while the copy is in flight waits for that copy.
  Staging second;
  ASSERT_EQ(directory.stage(kDev1, reader, second), StageResult::Staged);
  ASSERT_EQ(second.ready.size(), 1u);
  EXPECT_EQ(second.ready[0], first.ready[0]) << "not the same pending completion";
  EXPECT_EQ(device.copies_made(), 1u) << "a second copy was made";
  EXPECT_EQ(directory.counters(kDev1).copies, 1u);

  device.release_copies();
  for (const CompletionPtr &ready : second.ready) ready->wait();
  EXPECT_TRUE(first.ready[0]->poll());
  EXPECT_TRUE(same_values(on_device<int>(first, 0), x.data(), x.size()));
  EXPECT_TRUE(same_values(on_device<int>(second, 0), x.data(), x.size()));
  directory.finish(reader, first);
  directory.finish(reader, second);

  // Once done, a third reader has nothing to wait for.
  Staging third;
  ASSERT_EQ(directory.stage(kDev1, reader, third), StageResult::Staged);
  for (const CompletionPtr &ready : third.ready) EXPECT_TRUE(ready->poll());
  directory.finish(reader, third);
  EXPECT_EQ(device.copies_made(), 1u);
}

// A kernel "in flight" that the test ends by hand.
class KernelInFlight final : public Completion {
 public:
  bool poll() override { return done; }
  void wait() override {
    if (!done) throw std::logic_error("waited for a kernel the test has not ended");
  }
  bool done = false;
};

// commit_launched: the writes of a task still running are recorded at its launch, so that the
// next task on the same device finds the data there (waiting for that kernel, no copy), and a
// copy to the host waits for the kernel too.
TEST(Directory, CommitAtLaunchLetsTheNextTaskFollowOnTheDevice) {
  HostSpace device(device_options("dev1"));
  Directory directory({{&device}});
  std::vector<int> x = iota_vector(512);
  const Accesses writer{inout(x.data(), x.size())};

  Staging first;
  ASSERT_EQ(directory.stage(kDev1, writer, first), StageResult::Staged);
  for (const CompletionPtr &ready : first.ready) ready->wait();
  int *d = on_device<int>(first, 0);
  for (std::size_t i = 0; i < x.size(); ++i) d[i] += 1000;  // the kernel, done early
  auto kernel = std::make_shared<KernelInFlight>();
  directory.commit_launched(writer, first, kernel);
  EXPECT_EQ(directory.fragment_at(x.data()).valid, bit(kDev1)) << "the device alone, at launch";
  EXPECT_EQ(directory.fragment_at(x.data()).version, 1u);

  Staging second;
  ASSERT_EQ(directory.stage(kDev1, writer, second), StageResult::Staged);
  ASSERT_EQ(second.ready.size(), 1u) << "the follower waits for the kernel in flight";
  EXPECT_EQ(second.ready[0], kernel);
  EXPECT_EQ(directory.counters(kDev1).copies, 1u) << "the follower copied nothing";
  EXPECT_EQ(on_device<int>(second, 0), d) << "the same device bytes";

  kernel->done = true;
  directory.finish(writer, first);
  EXPECT_EQ(directory.fragment_at(x.data()).version, 1u) << "finish() recorded the writes again";
  directory.finish(writer, second);  // not committed: recorded at its end
  EXPECT_EQ(directory.fragment_at(x.data()).version, 2u);
  directory.flush();
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], static_cast<int>(i) + 1000) << i;
}

// locate(): bytes a task reads that are valid in each space, and bytes it writes that one
// device alone holds.
TEST(Directory, LocateSaysWhereATasksDataLives) {
  HostSpace one(device_options("dev1")), two(device_options("dev2"));
  Directory directory({{&one}, {&two}});
  std::vector<int> x = iota_vector(1000), y = iota_vector(500);
  run_device_task(directory, kDev1, {inout(x.data(), 600)}, [](const Staging &) {});  // dev1 alone
  run_device_task(directory, kDev2, {in(y.data(), y.size())}, [](const Staging &) {});  // shared
  std::vector<LocatedBytes> located;
  directory.locate({{in(x.data(), x.size()), inout(y.data(), y.size())}}, located);
  ASSERT_EQ(located.size(), 3u);
  EXPECT_EQ(located[kHost].valid, (400 + 500) * sizeof(int)) << "untracked bytes are the host's";
  EXPECT_EQ(located[kDev1].valid, 600 * sizeof(int));
  EXPECT_EQ(located[kDev2].valid, 500 * sizeof(int));
  EXPECT_EQ(located[kDev1].owned, 0u) << "x is only read";
  EXPECT_EQ(located[kDev2].owned, 0u) << "y is on the host too";
  directory.locate({{out(x.data(), 100)}}, located);
  EXPECT_EQ(located[kDev1].owned, 100 * sizeof(int));
  EXPECT_EQ(located[kDev1].valid, 0u) << "a write-only access reads nothing";
}

TEST(Directory, SlowCopiesBetweenDevicesAndBack) {
  HostSpaceOptions options1 = device_options("slow1"), options2 = device_options("slow2");
  options1.copy_delay = options2.copy_delay = 5ms;
  HostSpace dev1(options1), dev2(options2);
  Directory directory({{&dev1}, {&dev2}});
  std::vector<int> x = iota_vector(2000), ref = x;
  for (int round = 0; round < 4; ++round) {
    const SpaceId space = round % 2 ? kDev2 : kDev1;
    run_device_task(directory, space, {inout(x.data(), x.size())}, [&](const Staging &s) {
      int *d = on_device<int>(s, 0);
      EXPECT_TRUE(same_values(d, ref.data(), ref.size())) << "round " << round;
      for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = d[i] ^= round + 1;
    });
  }
  // acquire_host and flush return with the copies done.
  directory.acquire_host(Accesses{in(x.data(), 1000)});
  EXPECT_TRUE(same_values(x.data(), ref.data(), 1000));
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
}

// ---------------------------------------------------------------------------------------------
// Threads

// Threads stage and finish tasks on disjoint arrays on two devices at once, with host tasks
// in between; 'capacity' small enough forces eviction and Busy answers under contention.
void run_concurrently(std::size_t capacity, int rounds) {
  CheckedSpace dev1(device_options("dev1")), dev2(device_options("dev2"));
  Directory directory({{&dev1, capacity}, {&dev2, capacity}});
  constexpr int kThreads = 4;
  constexpr std::size_t kArrays = 2;  // per thread
  constexpr std::size_t kSize = 256;  // ints
  std::vector<std::vector<int>> data, ref;
  for (int i = 0; i < kThreads * int(kArrays); ++i) {
    data.push_back(iota_vector(kSize, i * 100000));
    ref.push_back(data.back());
  }
  std::vector<int> host_only = iota_vector(4096);
  std::atomic<int> failures{0}, busy{0};

  auto worker = [&](int t) {
    const SpaceId space = t % 2 ? kDev2 : kDev1;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    for (int r = 0; r < rounds; ++r) {
      const std::size_t which = t * kArrays + r % kArrays;
      std::vector<int> &x = data[which], &expect = ref[which];
      if (r % 7 == 6) {  // a host task on this thread's own data
        directory.acquire_host(Accesses{inout(x.data(), x.size())});
        if (!same_values(x, expect)) ++failures;
        for (std::size_t i = 0; i < x.size(); ++i) expect[i] = x[i] += 2;
        continue;
      }
      if (r % 5 == 0) directory.acquire_host(Accesses{in(host_only.data(), host_only.size())});
      const Accesses accesses{inout(x.data(), x.size())};
      Staging staging;
      while (directory.stage(space, accesses, staging) == StageResult::Busy) {
        ++busy;
        if (std::chrono::steady_clock::now() > deadline) {
          ++failures;
          return;
        }
        std::this_thread::yield();
      }
      for (const CompletionPtr &ready : staging.ready) ready->wait();
      int *d = on_device<int>(staging, 0);
      if (!same_values(d, expect.data(), expect.size())) ++failures;
      for (std::size_t i = 0; i < expect.size(); ++i) expect[i] = d[i] = d[i] + t + 1;
      directory.finish(accesses, staging);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread &thread : threads) thread.join();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(directory.used_bytes(kDev1), capacity);
  EXPECT_LE(directory.used_bytes(kDev2), capacity);
  directory.flush();
  for (std::size_t i = 0; i < data.size(); ++i)
    EXPECT_TRUE(same_values(data[i], ref[i])) << "array " << i;
  EXPECT_EQ(dev1.violations() + dev2.violations(), 0u);
  if (capacity < 4 * kSize * sizeof(int)) {
    EXPECT_GT(directory.counters(kDev1).evictions, 0u);
    EXPECT_GT(directory.counters(kDev2).evictions, 0u);
  }
  std::printf("capacity %zu: %d Busy answers, evictions %llu + %llu\n", capacity, busy.load(),
              static_cast<unsigned long long>(directory.counters(kDev1).evictions),
              static_cast<unsigned long long>(directory.counters(kDev2).evictions));
}

TEST(Directory, ConcurrentThreadsOnTwoDevices) { run_concurrently(std::size_t(1) << 20, 300); }

// Two threads, one per device, in steps: each reads its own block and the other device's block
// of the step before and writes its block of this step (as NBody's blocks on two GPUs of two
// OpenCL contexts). The devices copy only through the host, in staging buffers: each thread's
// copy out of the other device and into its own is made after stage() released the lock,
// while the other thread does the same with the same two devices' buffers.
TEST(Directory, StepsExchangeBlocksThroughTheHostFromTwoThreads) {
  HostSpaceOptions options1 = device_options("staged1"), options2 = device_options("staged2");
  options1.wants_staging = options2.wants_staging = true;
  options1.copy_delay = options2.copy_delay = 100us;
  CheckedSpace dev1(options1), dev2(options2);
  DirectoryOptions directory_options;
  directory_options.staging_chunk = 4096;  // blocks of 5 chunks each way
  directory_options.staging_threshold = 0;
  Directory directory({{&dev1}, {&dev2}}, directory_options);
  constexpr std::size_t kBlock = 5000;
  constexpr int kSteps = 40;
  auto step_value = [](int own, int other, int step) {
    return static_cast<int>(static_cast<unsigned>(own) * 31u + static_cast<unsigned>(other) +
                            static_cast<unsigned>(step));
  };
  // x[b][d]: device d's block in buffer b; step s writes buffer s % 2.
  std::vector<int> x[2][2];
  for (int d = 0; d < 2; ++d) {
    x[0][d] = iota_vector(kBlock, d * 1000000);
    x[1][d].assign(kBlock, -1);
  }
  std::vector<int> ref[2] = {x[0][0], x[0][1]};
  std::mutex step_mutex;  // a barrier between steps: a step reads what the one before wrote
  std::condition_variable step_done;
  int arrived = 0, generation = 0;
  auto worker = [&](int d) {
    const SpaceId space = d ? kDev2 : kDev1;
    for (int s = 1; s <= kSteps; ++s) {
      const int cur = s % 2, prev = 1 - cur;
      const Accesses accesses{in(x[prev][d].data(), kBlock), in(x[prev][1 - d].data(), kBlock),
                              out(x[cur][d].data(), kBlock)};
      Staging staging;
      while (directory.stage(space, accesses, staging) == StageResult::Busy)
        std::this_thread::yield();
      for (const CompletionPtr &ready : staging.ready) ready->wait();
      const int *own = on_device<int>(staging, 0), *other = on_device<int>(staging, 1);
      int *y = on_device<int>(staging, 2);
      for (std::size_t i = 0; i < kBlock; ++i) y[i] = step_value(own[i], other[i], s);
      directory.finish(accesses, staging);
      std::unique_lock<std::mutex> guard(step_mutex);
      const int mine = generation;
      if (++arrived == 2) {
        arrived = 0;
        ++generation;
        step_done.notify_all();
      } else {
        step_done.wait(guard, [&] { return generation != mine; });
      }
    }
  };
  std::thread first(worker, 0), second(worker, 1);
  first.join();
  second.join();
  for (int s = 1; s <= kSteps; ++s) {
    std::vector<int> next[2] = {ref[0], ref[1]};
    for (int d = 0; d < 2; ++d)
      for (std::size_t i = 0; i < kBlock; ++i) next[d][i] = step_value(ref[d][i], ref[1 - d][i], s);
    ref[0] = next[0];
    ref[1] = next[1];
  }
  directory.flush();
  for (int d = 0; d < 2; ++d) EXPECT_TRUE(same_values(x[kSteps % 2][d], ref[d])) << "device " << d;
  EXPECT_EQ(dev1.violations() + dev2.violations(), 0u);
  for (SpaceId space : {kDev1, kDev2}) {
    EXPECT_GE(directory.counters(space).bytes_to_host, kSteps / 2 * kBlock * sizeof(int))
        << "the blocks crossed through the host";
    EXPECT_EQ(directory.counters(space).bytes_from_peer, 0u);
  }
}

// Room for one array and a half per device: two threads per device evict each other's data
// and get Busy while the other's task holds its memory.
TEST(Directory, ConcurrentThreadsWithEvictionAndBusy) { run_concurrently(1536, 300); }

// Sizes in messages: never "0 MiB" for a nonzero size, exact sizes exactly, three significant
// digits otherwise.
TEST(HumanSize, ReadsAsPeopleReadSizes) {
  EXPECT_EQ(human_size(0), "0 bytes");
  EXPECT_EQ(human_size(1), "1 byte");
  EXPECT_EQ(human_size(1023), "1023 bytes");
  EXPECT_EQ(human_size(1024), "1 KiB");
  EXPECT_EQ(human_size(1536), "1.5 KiB");
  EXPECT_EQ(human_size(6000), "5.86 KiB");
  EXPECT_EQ(human_size(20 << 10), "20 KiB");
  EXPECT_EQ(human_size(132 << 10), "132 KiB");
  EXPECT_EQ(human_size((260 << 10) + 300), "260 KiB");
  EXPECT_EQ(human_size(std::size_t(1) << 20), "1 MiB");
  EXPECT_EQ(human_size(std::size_t(3) << 19), "1.5 MiB");
  EXPECT_EQ(human_size(std::uint64_t(6417.2 * (1 << 20))), "6.27 GiB");
  EXPECT_EQ(human_size(std::uint64_t(80) << 30), "80 GiB");
  EXPECT_EQ(human_size(static_cast<std::uint64_t>(-20)), "16 EiB");
}

// What set the limit is named after it (the runtime says NANORT_DEVICE_MEMORY, or the default).
TEST(Directory, DataTooLargeNamesWhatSetTheLimit) {
  CheckedSpace device(device_options("gpu-like"));
  Directory directory({{&device, 200 << 10, "NANORT_DEVICE_MEMORY"}});
  std::vector<char> x(128 << 10), y(132 << 10);
  EXPECT_EQ(device_task_error(directory, kDev1, {in(x.data(), x.size()), inout(y.data(), y.size())},
                              [](const Staging &) {}),
            "a task needs 260 KiB at once on gpu-like, more than the device's memory limit of "
            "200 KiB (NANORT_DEVICE_MEMORY)");
}

// Within the limit, but the device itself has less memory free (other programs, a limit above
// its size): the message says so, with the numbers of the task.
TEST(Directory, DeviceRefusingMemoryWithinTheLimitIsSaidSo) {
  HostSpaceOptions options = device_options("short-device");
  options.memory_size = 4096;  // allocations past 4 KiB fail
  CheckedSpace device(options);
  Directory directory({{&device, 8192, "NANORT_DEVICE_MEMORY"}});
  std::vector<char> a(3000), b(3000), c(5000);
  EXPECT_EQ(device_task_error(directory, kDev1, {in(a.data(), a.size()), in(b.data(), b.size())},
                              [](const Staging &) {}),
            "a task needs 5.86 KiB at once on short-device, within the device's memory limit of "
            "8 KiB (NANORT_DEVICE_MEMORY), but the device refused 2.93 KiB more with 2.93 KiB of "
            "it placed and nothing else held there: it has less free memory than the limit "
            "(other programs use it, or the limit is above its size)");
  EXPECT_EQ(device_task_error(directory, kDev1, {in(c.data(), c.size())}, [](const Staging &) {}),
            "a task needs 4.88 KiB at once on short-device, within the device's memory limit of "
            "8 KiB (NANORT_DEVICE_MEMORY), but the device refused a piece of 4.88 KiB and nothing "
            "else held there: it has less free memory than the limit (other programs use it, or "
            "the limit is above its size)");
  EXPECT_EQ(directory.used_bytes(kDev1), 0u);
  // What fits runs.
  EXPECT_EQ(device_task_error(directory, kDev1, {in(a.data(), a.size())}, [](const Staging &) {}),
            "");
}

// ---------------------------------------------------------------------------------------------
// Regressions.

// A task's range overlaps a cached allocation: merging them into one larger allocation needs
// the old and the new at once. When that does not fit, the old allocation is written back and
// dropped; a task whose own data fits must never get DataTooLargeError.
TEST(DirectoryRegression, OverlappingAccessThatFitsAloneIsNotTooLarge) {
  CheckedSpace device(device_options("small-dev"));
  Directory directory({{&device, 4096}});
  std::vector<int> x = iota_vector(2048), ref = x;  // 8 KiB
  run_device_task(directory, kDev1, {inout(x.data(), 768)}, [&](const Staging &s) {  // 3 KiB
    int *d = on_device<int>(s, 0);
    for (int i = 0; i < 768; ++i) ref[i] = d[i] += 1;
  });
  // x[512:1024) is 2 KiB.
  const std::string error =
      device_task_error(directory, kDev1, {in(x.data() + 512, 512)}, [&](const Staging &s) {
        EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data() + 512, 512));
      });
  EXPECT_EQ(error, "") << "staging x[512:1024) (2 KiB) on a 4 KiB device holding x[0:768)";
  EXPECT_LE(directory.used_bytes(kDev1), 4096u);
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
}

// An allocation cached from an earlier task, larger than this task's range in it, must not
// make a task whose own data fits "too large": it is evicted and the task's ranges placed alone.
TEST(DirectoryRegression, CachedAllocationLargerThanTheTaskDoesNotMakeItTooLarge) {
  CheckedSpace device(device_options("small-dev"));
  Directory directory({{&device, 4096}});
  std::vector<int> x = iota_vector(2048), ref = x;                                   // 8 KiB
  run_device_task(directory, kDev1, {inout(x.data(), 750)}, [&](const Staging &s) {  // 3000 bytes
    int *d = on_device<int>(s, 0);
    for (int i = 0; i < 750; ++i) ref[i] = d[i] += 1;
  });
  // x[0:25) lies in the 3000 bytes cached; x[1250:1750) (2000 bytes) does not fit beside them.
  const std::string error = device_task_error(
      directory, kDev1, {in(x.data(), 25), inout(x.data() + 1250, 500)}, [&](const Staging &s) {
        EXPECT_TRUE(same_values(on_device<int>(s, 0), ref.data(), 25));
        int *d = on_device<int>(s, 1);
        EXPECT_TRUE(same_values(d, ref.data() + 1250, 500));
        for (int i = 0; i < 500; ++i) ref[1250 + i] = d[i] += 2;
      });
  EXPECT_EQ(error, "") << "2100 bytes on a 4 KiB device holding 3000 bytes of an earlier task";
  EXPECT_LE(directory.used_bytes(kDev1), 4096u);
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
  EXPECT_EQ(device.violations(), 0u);
}

// The same: windows sliding over an array larger than the capacity, each window overlapping
// the last, must not grow one allocation past the capacity.
TEST(DirectoryRegression, SlidingWindowOverDataLargerThanTheCapacity) {
  CheckedSpace device(device_options("small-dev"));
  Directory directory({{&device, 4096}});
  std::vector<int> x = iota_vector(4096), ref = x;  // 16 KiB
  constexpr std::size_t kWindow = 256, kStep = 128;  // 1 KiB windows, half overlapping
  for (std::size_t start = 0; start + kWindow <= x.size(); start += kStep) {
    const std::string error =
        device_task_error(directory, kDev1, {inout(x.data() + start, kWindow)},
                          [&](const Staging &s) {
                            int *d = on_device<int>(s, 0);
                            EXPECT_TRUE(same_values(d, ref.data() + start, kWindow));
                            for (std::size_t i = 0; i < kWindow; ++i) ref[start + i] = d[i] += 1;
                          });
    ASSERT_EQ(error, "") << "the window at x[" << start << ":" << start + kWindow << ")";
    ASSERT_LE(directory.used_bytes(kDev1), 4096u);
  }
  directory.flush();
  EXPECT_TRUE(same_values(x, ref));
}

// Copies into a device allocation count among its users: an allocation whose task was
// abandoned while its copy was in flight may be evicted, but its buffer is freed only after
// the copy wrote into it (else a use after free on a real device, and in HostSpace).
TEST(DirectoryRegression, BufferIsNotFreedWhileACopyIntoItIsInFlight) {
  HostSpaceOptions options = device_options("slow-dev");
  options.copy_delay = 100ms;
  CheckedSpace device(options);
  Directory directory({{&device, 4096}});
  std::vector<int> a = iota_vector(768), b = iota_vector(512, 77);  // 3 KiB, 2 KiB

  const Accesses task_a{in(a.data(), a.size())};
  Staging staged_a;
  ASSERT_EQ(directory.stage(kDev1, task_a, staged_a), StageResult::Staged);
  ASSERT_FALSE(staged_a.ready.empty());
  directory.abandon(staged_a);  // the task never runs; its copy is still in flight

  // B does not fit beside A: A's allocation is evicted and its 3 KiB buffer released.
  run_device_task(directory, kDev1, {in(b.data(), b.size())}, [&](const Staging &s) {
    EXPECT_TRUE(same_values(on_device<int>(s, 0), b.data(), b.size()));
  });
  EXPECT_EQ(device.violations(), 0u)
      << "a device buffer was freed while a copy into it was still in flight";
}

// The same at destruction: ~Directory waits for copies into buffers before freeing them.
TEST(DirectoryRegression, DestructorWaitsForCopiesIntoBuffers) {
  HostSpaceOptions options = device_options("slow-dev");
  options.copy_delay = 100ms;
  CheckedSpace device(options);
  std::vector<int> a = iota_vector(768);
  {
    Directory directory({{&device}});
    const Accesses task_a{in(a.data(), a.size())};
    Staging staged_a;
    ASSERT_EQ(directory.stage(kDev1, task_a, staged_a), StageResult::Staged);
    directory.abandon(staged_a);
  }
  EXPECT_EQ(device.live_buffers(), 0u);
  EXPECT_EQ(device.violations(), 0u)
      << "a device buffer was freed while a copy into it was still in flight";
}

}  // namespace
