// main() of the project's GoogleTest programs: GoogleTest's own, but a filter that selects no
// test fails instead of passing. ctest runs each case by name (gtest_discover_tests); a list
// made where other devices were present (a case per OpenCL device) names cases that do not
// exist here, and those must not pass without running.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  const std::string filter = GTEST_FLAG_GET(filter);
  if (status == 0 && testing::UnitTest::GetInstance()->test_to_run_count() == 0 &&
      filter != "*" && !filter.empty()) {
    std::printf("FAILED: no test case matches --gtest_filter=%s in this program (made for "
                "other devices, or renamed?)\n",
                filter.c_str());
    return 1;
  }
  return status;
}
