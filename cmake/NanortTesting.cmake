# nanort_add_checked_test: a ctest test judged on its exit status and its output together.
#
#   nanort_add_checked_test(NAME <name> [STATUS <n>|nonzero] [EXPECT <regex>...]
#                           [CONTAINS <text>...] [REJECT <regex>...] [COUNT <regex>=<n>...]
#                           [NO_REJECT] [ALLOW_SANITIZER_REPORTS] [WORKING_DIRECTORY <dir>]
#                           COMMAND <command> [<argument>...])
#
# The command runs under tests/support/check_run.py, which requires the exit status (0 unless
# STATUS says otherwise), every EXPECT expression and CONTAINS text in the output, no REJECT
# expression and no sanitizer report in it. REJECT defaults to "FAILED" (what the test programs
# print when a result is wrong); NO_REJECT drops that default. ALLOW_SANITIZER_REPORTS is for
# the checker's own tests only. A command that exits with 77 is a skip (SKIP_RETURN_CODE is
# set). Never use PASS_REGULAR_EXPRESSION: with it ctest ignores the exit status.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(NANORT_CHECK_RUN ${CMAKE_CURRENT_LIST_DIR}/../tests/support/check_run.py)

function(nanort_add_checked_test)
  cmake_parse_arguments(ARG "NO_REJECT;ALLOW_SANITIZER_REPORTS" "NAME;STATUS;WORKING_DIRECTORY"
                        "EXPECT;CONTAINS;REJECT;COUNT;COMMAND" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_COMMAND)
    message(FATAL_ERROR "nanort_add_checked_test needs NAME and COMMAND")
  endif()
  if(NOT DEFINED ARG_REJECT AND NOT ARG_NO_REJECT)
    set(ARG_REJECT "FAILED")
  endif()
  set(checks)
  if(ARG_ALLOW_SANITIZER_REPORTS)
    list(APPEND checks --allow-sanitizer-reports)
  endif()
  if(DEFINED ARG_STATUS)
    list(APPEND checks --status ${ARG_STATUS})
  endif()
  foreach(kind EXPECT CONTAINS REJECT COUNT)
    string(TOLOWER ${kind} option)
    foreach(item IN LISTS ARG_${kind})
      list(APPEND checks --${option} ${item})
    endforeach()
  endforeach()
  list(GET ARG_COMMAND 0 program)
  if(TARGET ${program})  # as add_test does for a target named first
    list(POP_FRONT ARG_COMMAND)
    list(PREPEND ARG_COMMAND $<TARGET_FILE:${program}>)
  endif()
  if(ARG_WORKING_DIRECTORY)
    set(directory WORKING_DIRECTORY ${ARG_WORKING_DIRECTORY})
  endif()
  # (Run through its '#!/usr/bin/env python3' line: the build tree's tests also run on machines
  # where the interpreter CMake found lives elsewhere, scripts/device-check.sh.)
  add_test(NAME ${ARG_NAME}
           COMMAND ${NANORT_CHECK_RUN} ${checks} -- ${ARG_COMMAND}
           ${directory})
  set_tests_properties(${ARG_NAME} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()
