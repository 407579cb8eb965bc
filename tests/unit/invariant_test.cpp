// Internal invariants (nanort/dc/invariant.hpp): a failed check is an InternalError naming the
// file and line of the check, and the C interface reports it as NANORT_ERROR_INTERNAL with that
// message, not as an invalid argument.
#include <nanort/dc/invariant.hpp>
#include <nanort/nanort.h>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

std::string report_text(int line, const std::string &what) {
  return "internal error in nanort at tests/unit/invariant_test.cpp:" + std::to_string(line) +
         ": " + what + " (a bug in nanort: please report it, with the program that shows it)";
}

TEST(Invariant, HoldingCheckThrowsNothing) {
  EXPECT_NO_THROW(NANORT_INVARIANT(1 + 1 == 2, "arithmetic"));
}

TEST(Invariant, BrokenCheckNamesFileAndLine) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    NANORT_INVARIANT(1 + 1 == 3, std::string("arithmetic: ") + "1 + 1 is not 3");
    FAIL() << "no error";
  } catch (const nanort::InternalError &e) {
    EXPECT_EQ(e.what(), report_text(line, "arithmetic: 1 + 1 is not 3"));
  }
}

TEST(Invariant, NotALogicError) {
  // (The C interface reports a std::logic_error as the caller's mistake.)
  try {
    NANORT_UNREACHABLE_STATE("a state no path reaches");
  } catch (const std::logic_error &) {
    FAIL() << "an internal error caught as a logic error";
  } catch (const nanort::InternalError &) {
  }
}

TEST(Invariant, PathFromTheProjectRoot) {
  using nanort::detail::project_path;
  EXPECT_STREQ(project_path("/home/a/src/nanort/nanort/src/cuda/cuda_device.cpp"),
               "nanort/src/cuda/cuda_device.cpp");
  EXPECT_STREQ(project_path("../../directory-cache/src/coherence.cpp"),
               "directory-cache/src/coherence.cpp");
  EXPECT_STREQ(project_path("/x/directory-cache/include/nanort/dc/memory_space.hpp"),
               "directory-cache/include/nanort/dc/memory_space.hpp");
  EXPECT_STREQ(project_path("/home/a/src/nanort/tests/unit/t.cpp"), "tests/unit/t.cpp");
  EXPECT_STREQ(project_path("nanort/src/runtime.cpp"), "nanort/src/runtime.cpp");
  EXPECT_STREQ(project_path("file.cpp"), "file.cpp");
}

int call_line = 0;
void break_invariant(void *) {
  call_line = __LINE__ + 1;
  NANORT_INVARIANT(false, "a check inside a call of the C interface");
}

TEST(Invariant, CInterfaceReportsInternal) {
  ASSERT_EQ(nanort_block_call(break_invariant, nullptr), NANORT_ERROR_INTERNAL);
  EXPECT_EQ(nanort_last_error(),
            report_text(call_line, "a check inside a call of the C interface"));
  EXPECT_EQ(nanort_shutdown(), NANORT_SUCCESS);
}

}  // namespace
