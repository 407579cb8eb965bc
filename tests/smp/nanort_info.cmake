# nanort-info's options (tests/smp/check_nanort_info.sh, one case each):
#
#   nanort_info.help            --help, -h: the usage on stdout, exit 0
#   nanort_info.version         nanort's version on stdout, exit 0
#   nanort_info.unknown_option  the usage on stderr, exit 2
#   nanort_info.env             --env: each variable's value, the runtime not started
#   nanort_info.env_malformed   a malformed value marked with the runtime's reason, exit 1; the
#                               full listing's message when the runtime does not start
#   nanort_info.env_unknown     unknown NANORT_ variables flagged, with the name meant
foreach(case help version unknown_option env env_malformed env_unknown)
  nanort_add_checked_test(NAME nanort_info.${case} EXPECT "^${case}: passed$"
    COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_nanort_info.sh $<TARGET_FILE:nanort-info>
            ${PROJECT_VERSION} ${case})
  nanort_test_properties(smp nanort_info.${case})
endforeach()
