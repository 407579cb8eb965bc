// The runtime through the C++ header: tasks from lambdas, accesses named fluently, failures as
// exceptions. Run with NANORT_CPU_WORKERS=2 (see CMakeLists.txt).
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using nanort_test::sleep_ms;
using nanort_test::wait_for;

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(CxxApi, Reductions) {
  // OmpSs-2 reduction over an array, a reader after it.
  long hist[4] = {1, 1, 1, 1};
  for (int i = 0; i < 400; ++i)
    nanort::task("bin").reduction(NANORT_REDUCE_SUM, hist, 4).spawn([&hist, i] {
      nanort::reduction_private(hist)[i % 4] += i;
    });
  long seen[4] = {};
  nanort::task("reader").in(hist, 4).spawn([&] { std::copy(hist, hist + 4, seen); });
  double smallest = 100.0;
  for (int i = 0; i < 50; ++i)
    nanort::task().reduction(NANORT_REDUCE_MIN, &smallest).spawn([&smallest, i] {
      double *mine = nanort::reduction_private(&smallest);
      *mine = std::min(*mine, 50.0 - i * 0.5);
    });
  nanort::taskwait();
  long expected[4] = {1, 1, 1, 1};
  for (int i = 0; i < 400; ++i) expected[i % 4] += i;
  for (int b = 0; b < 4; ++b) EXPECT_EQ(seen[b], expected[b]) << b;
  EXPECT_EQ(smallest, 25.5);
  // OpenMP taskgroup task_reduction with in_reduction tasks.
  int count = 0;
  {
    nanort::taskgroup group;
    group.reduction(NANORT_REDUCE_SUM, &count);
    for (int i = 0; i < 100; ++i)
      nanort::task().in_reduction(NANORT_REDUCE_SUM, &count).spawn([&count] {
        ++*nanort::reduction_private(&count);
      });
  }
  EXPECT_EQ(count, 100);
  // A private copy asked for outside any reduction throws.
  EXPECT_THROW(nanort::reduction_private(&count), nanort::task_error);
}

TEST(CxxApi, WorkersAndDevices) {
  EXPECT_EQ(nanort::cpu_workers(), 2);
  EXPECT_EQ(nanort::device_count(NANORT_DEVICE_CUDA), 0);
}

TEST(CxxApi, InoutChainKeepsCreationOrder) {
  std::vector<int> log;
  int x = 0;
  for (int i = 0; i < 500; ++i)
    nanort::task("step").inout(&x).spawn([&x, &log, i] {
      x = x * 3 % 1000003 + i;
      log.push_back(i);
    });
  nanort::taskwait();
  int expected = 0;
  for (int i = 0; i < 500; ++i) expected = expected * 3 % 1000003 + i;
  EXPECT_EQ(x, expected);
  std::vector<int> order(500);
  std::iota(order.begin(), order.end(), 0);
  EXPECT_EQ(log, order);
}

TEST(CxxApi, ElementCountsNotBytes) {
  std::vector<double> a(1000, 1.0);
  double total = 0;
  // The writer names a[0..500) by count; a reader of a[499] must wait for it.
  nanort::task("write").out(a.data(), 500).spawn([&a] {
    sleep_ms(40);
    for (int i = 0; i < 500; ++i) a[i] = 2.0;
  });
  nanort::task("read").in(a.data() + 499).out(&total).spawn([&a, &total] { total = a[499]; });
  nanort::taskwait();
  EXPECT_EQ(total, 2.0);
}

TEST(CxxApi, BlocksOfAMatrix) {
  constexpr int n = 48, b = 16;
  std::vector<long> m(n * n, 1);
  long row_sum = 0;
  // Tiles of the first block column written slowly, then a reader of one full row.
  for (int i = 0; i < n / b; ++i)
    nanort::task("tile")
        .block(&m[i * b * n], b, b, n, NANORT_INOUT)
        .spawn([&m, i] {
          sleep_ms(10);
          for (int r = 0; r < b; ++r)
            for (int c = 0; c < b; ++c) m[(i * b + r) * n + c] += 10;
        });
  nanort::task("row").in(&m[20 * n], n).out(&row_sum).spawn([&] {
    row_sum = std::accumulate(&m[20 * n], &m[21 * n], 0L);
  });
  nanort::taskwait();
  EXPECT_EQ(row_sum, n + b * 10);
}

TEST(CxxApi, ConcurrentAndCommutative) {
  long counter = 0, plain = 0;
  std::atomic<int> in_flight{0}, max_in_flight{0};
  for (int i = 0; i < 100; ++i) {
    nanort::task("concurrent").concurrent(&counter).spawn([&counter] {
      std::atomic_ref<long>(counter).fetch_add(2);
    });
    nanort::task("commutative").commutative(&plain).spawn([&] {
      const int now = ++in_flight;
      int max = max_in_flight.load();
      while (now > max && !max_in_flight.compare_exchange_weak(max, now)) {
      }
      long v = plain;
      std::this_thread::yield();
      plain = v + 1;
      --in_flight;
    });
  }
  long seen_counter = -1, seen_plain = -1;
  nanort::task("read").in(&counter).in(&plain).spawn([&] {
    seen_counter = counter;
    seen_plain = plain;
  });
  nanort::taskwait();
  EXPECT_EQ(seen_counter, 200);
  EXPECT_EQ(seen_plain, 100);
  EXPECT_EQ(max_in_flight.load(), 1);
}

// ---------------------------------------------------------------------------------------------
// Captures

TEST(CxxApi, CapturesAreMovedInAndDestroyedWhenTheTaskIsDone) {
  auto shared = std::make_shared<int>(5);
  std::vector<int> values{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  long seen_sum = 0;
  long seen_use_count = 0;
  std::atomic<bool> go{false};  // the body waits until the checks below are done
  nanort::task("captures").out(&seen_sum).spawn([shared, values, &seen_sum, &seen_use_count, &go] {
    while (!go.load()) std::this_thread::yield();
    seen_sum = std::accumulate(values.begin(), values.end(), 0L) + *shared;
    seen_use_count = shared.use_count();
  });
  EXPECT_GE(shared.use_count(), 2) << "the lambda's copy lives in the task";
  values.assign(10, 0);  // the task has its own copy
  go.store(true);
  nanort::taskwait();
  EXPECT_EQ(seen_sum, 55 + 5);
  EXPECT_GE(seen_use_count, 2);
  EXPECT_EQ(shared.use_count(), 1) << "the captured shared_ptr was not destroyed";
}

TEST(CxxApi, DestructorRunsAfterTheBody) {
  struct Witness {
    std::atomic<int> *events;
    bool armed = true;
    Witness(std::atomic<int> *e) : events(e) {}
    Witness(Witness &&other) noexcept : events(other.events) { other.armed = false; }
    ~Witness() {
      if (armed) events->fetch_add(10);
    }
  };
  std::atomic<int> events{0};
  int order_at_body = -1;
  Witness witness(&events);
  nanort::task("witness").spawn([w = std::move(witness), &events, &order_at_body] {
    order_at_body = events.load();
    events.fetch_add(1);
  });
  nanort::taskwait();
  EXPECT_EQ(order_at_body, 0);
  EXPECT_EQ(events.load(), 11);
}

TEST(CxxApi, MoveOnlyCaptures) {
  auto box = std::make_unique<std::string>("move me");
  std::string seen;
  nanort::task("move only").out(&seen).spawn([b = std::move(box), &seen] { seen = *b; });
  nanort::taskwait();
  EXPECT_EQ(seen, "move me");
}

TEST(CxxApi, LargeCaptures) {
  std::array<std::uint64_t, 128> big{};  // 1 KiB, past the inline argument block
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = i * i + 7;
  std::vector<std::uint64_t> sums(50, 0);
  auto shared = std::make_shared<int>(1);
  for (int t = 0; t < 50; ++t) {
    big[0] = static_cast<std::uint64_t>(t);
    nanort::task("big").out(&sums[t]).spawn([big, shared, &sums, t] {
      sums[t] = std::accumulate(big.begin(), big.end(), std::uint64_t{0}) + *shared;
    });
  }
  nanort::taskwait();
  std::uint64_t rest = 0;
  for (std::size_t i = 1; i < big.size(); ++i) rest += i * i + 7;
  for (int t = 0; t < 50; ++t) EXPECT_EQ(sums[t], rest + t + 1) << t;
  EXPECT_EQ(shared.use_count(), 1);
}

TEST(CxxApi, RefusedTaskDestroysItsLambdaAndNeverRuns) {
  auto shared = std::make_shared<int>(1);
  std::atomic<bool> ran{false};
  int m[64] = {};
  try {
    nanort::task("bad block")
        .block(m, 4, 8, 2, NANORT_IN)  // rows of 8 ints only 2 apart
        .spawn([shared, &ran] { ran = true; });
    ADD_FAILURE() << "spawn accepted a 2-D access with a stride shorter than its rows";
  } catch (const nanort::task_error &e) {
    EXPECT_EQ(e.status(), NANORT_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(e.what(), "bad block")) << e.what();
    EXPECT_TRUE(contains(e.what(), "stride")) << e.what();
  }
  try {
    nanort::task("bad mode").access(m, 4, static_cast<nanort_access_mode>(7)).spawn([shared, &ran] {
      ran = true;
    });
    ADD_FAILURE() << "spawn accepted access mode 7";
  } catch (const nanort::task_error &e) {
    EXPECT_EQ(e.status(), NANORT_ERROR_INVALID_ARGUMENT);
  }
  nanort::taskwait();
  EXPECT_FALSE(ran.load());
  EXPECT_EQ(shared.use_count(), 1) << "the refused task's lambda was not destroyed";
}

// ---------------------------------------------------------------------------------------------
// Failures

TEST(CxxApi, ThrowingTaskIsReportedAtTaskwaitWithLabelAndLocation) {
  const int line = __LINE__ + 1;
  nanort::task("exploding").spawn([] { throw std::runtime_error("kaboom"); });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "taskwait did not report the failed task";
  } catch (const std::runtime_error &e) {  // the task's own exception
    EXPECT_STREQ(e.what(), "kaboom");
    const std::string message = nanort_last_error();
    EXPECT_EQ(message, "task 'exploding' (" + std::string(__FILE__) + ":" + std::to_string(line) +
                           ") threw: kaboom");
  }
  EXPECT_NO_THROW(nanort::taskwait()) << "the failure was reported twice";
}

// The exception keeps its own type and contents: the program catches what the task threw.
struct OutOfSamples : std::exception {
  explicit OutOfSamples(int n) : count(n) {}
  const char *what() const noexcept override { return "out of samples"; }
  int count;
};

TEST(CxxApi, TaskwaitRethrowsTheTasksOwnExceptionType) {
  nanort::task("sampler").spawn([] { throw OutOfSamples(17); });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "taskwait did not throw";
  } catch (const OutOfSamples &e) {
    EXPECT_EQ(e.count, 17);
  }
  // A thrown value of any type too.
  nanort::task("int thrower").spawn([] { throw 42; });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "taskwait did not throw";
  } catch (int value) {
    EXPECT_EQ(value, 42);
    EXPECT_TRUE(contains(nanort_last_error(), "'int thrower'")) << nanort_last_error();
    EXPECT_TRUE(contains(nanort_last_error(), "threw an exception of unknown type"));
  }
}

// Several failures: one's exception is thrown (the first collected), the message names all.
TEST(CxxApi, SeveralFailuresAreAllNamed) {
  nanort::task("first").spawn([] { throw std::range_error("first failure"); });
  nanort::task("second").spawn([] { throw std::domain_error("second failure"); });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "taskwait did not throw";
  } catch (const std::exception &e) {
    const std::string what = e.what();
    EXPECT_TRUE(what == "first failure" || what == "second failure") << what;
    const std::string message = nanort_last_error();
    EXPECT_TRUE(contains(message, "task 'first'") && contains(message, "task 'second'"))
        << message;
  }
}

TEST(CxxApi, UnlabelledTaskIsNamedByItsLocation) {
  const int line = __LINE__ + 1;
  nanort::task().spawn([] { throw std::logic_error("no label"); });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "taskwait did not report the failed task";
  } catch (const std::logic_error &e) {
    EXPECT_STREQ(e.what(), "no label");
    EXPECT_TRUE(contains(nanort_last_error(), "cxx_api_test.cpp:" + std::to_string(line)))
        << nanort_last_error();
  }
}

TEST(CxxApi, FailureInAChildPropagatesThroughATaskwaitInItsParent) {
  std::atomic<bool> parent_saw{false};
  nanort::task("parent").spawn([&parent_saw] {
    nanort::task("child").spawn([] { throw std::runtime_error("deep failure"); });
    try {
      nanort::taskwait();
    } catch (const std::runtime_error &) {
      parent_saw = true;
      throw;  // the parent fails too, with the child's exception
    }
  });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "the failure did not reach the root";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "deep failure");
    EXPECT_TRUE(contains(nanort_last_error(), "'parent'")) << nanort_last_error();
  }
  EXPECT_TRUE(parent_saw.load());
  EXPECT_NO_THROW(nanort::taskwait());
}

TEST(CxxApi, TaskwaitOnReportsTheFailureToo) {
  int x = 0;
  nanort::task("failing writer").out(&x).spawn([] { throw std::runtime_error("bad write"); });
  EXPECT_THROW(nanort::taskwait_on(&x), std::runtime_error);
  EXPECT_NO_THROW(nanort::taskwait());
}

// The tasks ordered after a failed one are not run, and are named; unrelated ones run.
TEST(CxxApi, SuccessorsOfAFailedTaskAreNotRun) {
  int x = 0, y = 0;
  std::atomic<int> ran{0};
  const int line = __LINE__ + 1;
  nanort::task("writer").out(&x).spawn([] { throw std::runtime_error("no data"); });
  nanort::task("reader").in(&x).out(&y).spawn([&ran] { ++ran; });
  nanort::task("reader of reader").in(&y).spawn([&ran] { ++ran; });
  int z = 0;
  nanort::task("unrelated").out(&z).spawn([&z] { z = 5; });
  EXPECT_THROW(nanort::taskwait(), std::runtime_error);
  const std::string message = nanort_last_error();
  const std::string here = std::string(__FILE__) + ":";
  EXPECT_TRUE(contains(message, "task 'reader' (" + here + std::to_string(line + 1) +
                                    ") was not run: it depends on task 'writer' (" + here +
                                    std::to_string(line) + "), which failed"))
      << message;
  EXPECT_TRUE(contains(message, "task 'reader of reader' (" + here + std::to_string(line + 2) +
                                    ") was not run: it depends on task 'reader' (" + here +
                                    std::to_string(line + 1) + "), which was not run"))
      << message;
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(z, 5);
  // After the taskwait the program goes on: the same data is used again as usual.
  nanort::task("again").out(&x).spawn([&x] { x = 7; });
  nanort::taskwait();
  EXPECT_EQ(x, 7);
}

// A taskwait on that reports a failure leaves the data it named usable again; other data the
// failed task wrote stays so until the taskwait.
TEST(CxxApi, AfterTaskwaitOnReportsAFailureTheDataItNamedIsUsableAgain) {
  int x = 0, y = 0;
  nanort::task("writer").out(&x).out(&y).spawn([] { throw std::runtime_error("no data"); });
  EXPECT_THROW(nanort::taskwait_on(&x), std::runtime_error);
  nanort::task("again").out(&x).spawn([&x] { x = 3; });
  EXPECT_NO_THROW(nanort::taskwait_on(&x));
  EXPECT_EQ(x, 3);
  std::atomic<bool> ran{false};
  nanort::task("y reader").in(&y).spawn([&ran] { ran = true; });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "the reader of y was run, or not reported";
  } catch (const nanort::task_error &e) {
    EXPECT_TRUE(contains(e.what(), "task 'y reader'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "it depends on task 'writer'")) << e.what();
  }
  EXPECT_FALSE(ran.load());
}

// Whenever the successor is submitted: also after the failed task has ended.
TEST(CxxApi, ATaskSubmittedAfterTheFailedOneEndedIsNotRunEither) {
  int x = 0;
  nanort::task("writer").out(&x).spawn([] { throw std::runtime_error("no data"); });
  // An undeferred reader returns only once the writer has ended (it is not run either).
  std::atomic<int> ran{0};
  nanort::task("probe").in(&x).when(false).spawn([&ran] { ++ran; });
  nanort::task("late reader").in(&x).spawn([&ran] { ++ran; });
  EXPECT_THROW(nanort::taskwait(), std::runtime_error);
  EXPECT_EQ(ran.load(), 0);
  const std::string message = nanort_last_error();
  EXPECT_TRUE(contains(message, "task 'probe'")) << message;
  EXPECT_TRUE(contains(message, "task 'late reader'")) << message;
  EXPECT_TRUE(contains(message, "it depends on task 'writer'")) << message;
}

// ---------------------------------------------------------------------------------------------
// Nesting, if(0), final, priority

TEST(CxxApi, TaskwaitOnInsideATaskWaitsForItsOwnChild) {
  std::atomic<bool> sibling_done{false};
  bool saw_value = false, sibling_still_running = false;
  int result = 0;
  nanort::task("parent").out(&result).spawn([&] {
    int local = 0;
    std::atomic<bool> go{false}, sibling_started{false};
    nanort::task("slow sibling").spawn([&] {
      sibling_started = true;
      nanort_test::wait_for([&] { return go.load(); }, std::chrono::seconds(20));
      sibling_done = true;
    });
    // Another thread runs it (this one is busy here), so that taskwait on cannot pick it up.
    EXPECT_TRUE(nanort_test::wait_for([&] { return sibling_started.load(); }));
    nanort::task("writer").out(&local).spawn([&local] {
      sleep_ms(20);
      local = 5;
    });
    nanort::taskwait_on(&local);
    saw_value = local == 5;
    sibling_still_running = !sibling_done.load();
    go = true;
    nanort::taskwait();
    result = local;
  });
  nanort::taskwait();
  EXPECT_TRUE(saw_value);
  EXPECT_TRUE(sibling_still_running);
  EXPECT_TRUE(sibling_done.load());
  EXPECT_EQ(result, 5);
}

TEST(CxxApi, NestedTasksFormAParallelSum) {
  std::vector<int> data(1 << 14);
  std::iota(data.begin(), data.end(), 1);
  struct Sum {
    static long range(const int *first, std::size_t count) {
      if (count <= 256) return std::accumulate(first, first + count, 0L);
      long left = 0, right = 0;
      const std::size_t half = count / 2;
      nanort::task("left").in(first, half).out(&left).spawn(
          [&left, first, half] { left = range(first, half); });
      nanort::task("right").in(first + half, count - half).out(&right).spawn(
          [&right, first, half, count] { right = range(first + half, count - half); });
      nanort::taskwait();
      return left + right;
    }
  };
  long total = 0;
  nanort::task("root").out(&total).spawn([&] { total = Sum::range(data.data(), data.size()); });
  nanort::taskwait();
  const long n = static_cast<long>(data.size());
  EXPECT_EQ(total, n * (n + 1) / 2);
}

TEST(CxxApi, ChildrenOfOneParentAreOrderedByTheirOwnDependences) {
  std::vector<int> log;
  std::mutex mutex;
  int x = 0;
  nanort::task("parent").spawn([&] {
    for (int i = 0; i < 50; ++i)
      nanort::task("child").inout(&x).spawn([&, i] {
        std::lock_guard<std::mutex> guard(mutex);
        log.push_back(i);
      });
    nanort::taskwait();
    std::lock_guard<std::mutex> guard(mutex);
    log.push_back(1000);
  });
  nanort::taskwait();
  ASSERT_EQ(log.size(), 51u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(log[i], i);
  EXPECT_EQ(log.back(), 1000);
}

TEST(CxxApi, SiblingsOfDifferentParentsDoNotOrderEachOther) {
  int shared = 0;
  std::atomic<bool> a_started{false}, b_ran{false}, a_saw_b{false};
  nanort::task("parent a").spawn([&] {
    nanort::task("child a").inout(&shared).spawn([&] {
      a_started = true;
      a_saw_b = wait_for([&] { return b_ran.load(); }, std::chrono::seconds(10));
    });
    nanort::taskwait();
  });
  nanort::task("parent b").spawn([&] {
    EXPECT_TRUE(wait_for([&] { return a_started.load(); }, std::chrono::seconds(10)));
    nanort::task("child b").inout(&shared).spawn([&] { b_ran = true; });
    nanort::taskwait();
  });
  nanort::taskwait();
  EXPECT_TRUE(a_saw_b.load()) << "a child of another parent was ordered after this one";
}

TEST(CxxApi, WhenFalseRunsInTheCreatingThreadAfterItsDependences) {
  int x = 0;
  nanort::task("slow writer").out(&x).spawn([&x] {
    sleep_ms(50);
    x = 42;
  });
  std::thread::id ran_on;
  int seen = -1;
  nanort::task("undeferred").in(&x).when(false).spawn([&] {
    ran_on = std::this_thread::get_id();
    seen = x;
  });
  EXPECT_EQ(seen, 42);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  nanort::taskwait();
}

TEST(CxxApi, FinalTaskRunsItsDescendantsInline) {
  std::vector<std::string> log;
  std::thread::id final_thread;
  bool all_same_thread = true;
  nanort::task("final").final().spawn([&] {
    final_thread = std::this_thread::get_id();
    for (int i = 0; i < 3; ++i) {
      nanort::task("child").spawn([&, i] {
        all_same_thread = all_same_thread && std::this_thread::get_id() == final_thread;
        log.push_back("child " + std::to_string(i));
        nanort::task("grandchild").spawn([&, i] {
          all_same_thread = all_same_thread && std::this_thread::get_id() == final_thread;
          log.push_back("grandchild " + std::to_string(i));
        });
        log.push_back("after grandchild " + std::to_string(i));
      });
      log.push_back("after child " + std::to_string(i));
    }
  });
  nanort::taskwait();
  std::vector<std::string> expected;
  for (int i = 0; i < 3; ++i) {
    const std::string n = std::to_string(i);
    expected.insert(expected.end(),
                    {"child " + n, "grandchild " + n, "after grandchild " + n, "after child " + n});
  }
  EXPECT_EQ(log, expected);
  EXPECT_TRUE(all_same_thread);
}

TEST(CxxApi, FinalChildrenThatThrowAreReported) {
  nanort::task("final").final().spawn([] {
    nanort::task("included thrower").spawn([] { throw std::runtime_error("inline failure"); });
  });
  try {
    nanort::taskwait();
    ADD_FAILURE() << "the failure of an included task was lost";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "inline failure");
    EXPECT_TRUE(contains(nanort_last_error(), "included thrower")) << nanort_last_error();
  }
}

TEST(CxxApi, PriorityIsAccepted) {
  int x = 0;
  nanort::task("high").priority(100).inout(&x).spawn([&x] { x = x * 2 + 1; });
  nanort::task("low").priority(-100).inout(&x).spawn([&x] { x = x * 2 + 2; });
  nanort::taskwait();
  EXPECT_EQ(x, 4);  // dependences still win over priorities
}

TEST(CxxApi, TaskwaitOnOneArrayWhileAnotherIsBusy) {
  std::vector<int> a(100, 0), b(100, 0);
  std::atomic<bool> started{false}, go{false}, done{false};
  nanort::task("busy").inout(a.data(), a.size()).spawn([&] {
    started = true;
    wait_for([&] { return go.load(); }, std::chrono::seconds(20));
    done = true;
  });
  ASSERT_TRUE(wait_for([&] { return started.load(); }));
  nanort::task("fill b").out(b.data(), b.size()).spawn([&b] {
    sleep_ms(20);
    std::fill(b.begin(), b.end(), 7);
  });
  nanort::taskwait_on(b.data() + 50, 10);  // a piece of b is enough to wait for its writer
  EXPECT_EQ(b[55], 7);
  EXPECT_EQ(std::accumulate(b.begin(), b.end(), 0), 700);
  EXPECT_FALSE(done.load());
  go = true;
  nanort::taskwait();
  EXPECT_TRUE(done.load());
}

}  // namespace
