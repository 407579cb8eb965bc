// A malformed NANORT_* variable (set by ctest, see CMakeLists.txt): the runtime refuses to
// start, with a message naming the variable and its value. Usage:
//   smp_config_error [gtest flags] <fragment of the expected message>...
#include <nanort/nanort.h>
#include <nanort/nanort.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::vector<std::string> expected_fragments;

void expect_message(const std::string &message) {
  EXPECT_NE(message.find("nanort configuration"), std::string::npos) << message;
  for (const std::string &fragment : expected_fragments)
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "'" << fragment << "' missing from: " << message;
}

TEST(ConfigError, InitFailsWithAClearMessage) {
  ASSERT_FALSE(expected_fragments.empty()) << "no expected message fragments were given";
  EXPECT_EQ(nanort_init(), NANORT_ERROR_INVALID_ARGUMENT);
  expect_message(nanort_last_error());
  // Still refused on the next call, with the same message; nothing half-started.
  EXPECT_EQ(nanort_init(), NANORT_ERROR_INVALID_ARGUMENT);
  expect_message(nanort_last_error());
}

TEST(ConfigError, EveryEntryPointReportsIt) {
  const nanort_task_impl impl{NANORT_DEVICE_SMP, [](void *) {}, nullptr, nullptr, nullptr, 0};
  const nanort_task_site site{NANORT_ABI_VERSION, "t", __FILE__, __LINE__, &impl, 1, nullptr};
  EXPECT_EQ(nanort_task_create(&site, 0), nullptr);
  expect_message(nanort_last_error());
  EXPECT_EQ(nanort_taskwait(), NANORT_ERROR_INVALID_ARGUMENT);
  expect_message(nanort_last_error());
  EXPECT_EQ(nanort_device_count(NANORT_DEVICE_SMP), -1);
  try {
    nanort::task("cxx").spawn([] {});
    ADD_FAILURE() << "spawn did not throw";
  } catch (const nanort::task_error &e) {
    expect_message(e.what());
  }
  // Shutting down what never started is not a crash.
  EXPECT_EQ(nanort_shutdown(), NANORT_ERROR_INVALID_ARGUMENT);
}

}  // namespace

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);  // removes the flags it knows
  for (int i = 1; i < argc; ++i) expected_fragments.emplace_back(argv[i]);
  return RUN_ALL_TESTS();
}
