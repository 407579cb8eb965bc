# The test checker's own tests (label checker): tests/support/check_run.py fails a test whose
# program printed its success line but then crashed at exit, leaked, had a sanitizer report or
# (tests/mpi) lost a rank. Each runs the checker on a planted failure (checker/planted.c) and
# requires the checker to fail, saying why.
add_executable(checker_planted checker/planted.c)
target_link_libraries(checker_planted PRIVATE nanort::runtime nanort_build_options)
set_target_properties(checker_planted PROPERTIES C_STANDARD 11 LINKER_LANGUAGE CXX)

set(inner ${NANORT_CHECK_RUN} --expect "all results correct" --)
nanort_add_checked_test(NAME checker.passes_a_good_program
  EXPECT "check_run.py: passed"
  COMMAND ${inner} $<TARGET_FILE:checker_planted> ok)
nanort_add_checked_test(NAME checker.catches_a_crash_at_exit
  STATUS 1 NO_REJECT ALLOW_SANITIZER_REPORTS
  EXPECT "all results correct.*FAILED \\(check_run.py\\): (killed by signal SIG[A-Z]+|exit status [1-9])"
  COMMAND ${inner} $<TARGET_FILE:checker_planted> crash-at-exit)
nanort_add_checked_test(NAME checker.catches_a_sanitizer_report_with_exit_status_0
  STATUS 1 NO_REJECT ALLOW_SANITIZER_REPORTS
  EXPECT "FAILED \\(check_run.py\\): output matches .*AddressSanitizer"
  COMMAND ${inner} $<TARGET_FILE:checker_planted> sanitizer-only)
nanort_add_checked_test(NAME checker.catches_a_missing_success_line
  STATUS 1 NO_REJECT EXPECT "FAILED \\(check_run.py\\): output does not match: never printed"
  COMMAND ${NANORT_CHECK_RUN} --expect "never printed" --
          $<TARGET_FILE:checker_planted> ok)
# A GoogleTest program asked for a case it does not have (a list made where other devices were
# present) fails instead of passing having run nothing (support/gtest_main.cpp).
nanort_add_checked_test(NAME checker.a_gtest_filter_that_selects_nothing_fails
  STATUS 1 NO_REJECT EXPECT "FAILED: no test case matches --gtest_filter=NoSuch.Case"
  COMMAND $<TARGET_FILE:unit_placement> --gtest_filter=NoSuch.Case)
set(checker_tests checker.a_gtest_filter_that_selects_nothing_fails checker.passes_a_good_program checker.catches_a_crash_at_exit
    checker.catches_a_sanitizer_report_with_exit_status_0 checker.catches_a_missing_success_line)
# A leak only shows under LeakSanitizer (the ASan build): there the checker must fail the leaking
# program whose output and exit were otherwise those of a passing test.
if(NANORT_SANITIZE MATCHES "address")
  nanort_add_checked_test(NAME checker.catches_a_leak_under_asan
    STATUS 1 NO_REJECT ALLOW_SANITIZER_REPORTS
    EXPECT "all results correct.*ERROR: LeakSanitizer: detected memory leaks.*FAILED \\(check_run.py\\)"
    COMMAND ${inner} $<TARGET_FILE:checker_planted> leak)
  list(APPEND checker_tests checker.catches_a_leak_under_asan)
endif()
nanort_test_properties(checker ${checker_tests})
