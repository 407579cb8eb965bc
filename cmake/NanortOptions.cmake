# nanort_build_options: warnings and sanitizers for the project's own targets only (no global
# flag edits). Every target of the project links it privately.
add_library(nanort_build_options INTERFACE)
target_compile_features(nanort_build_options INTERFACE cxx_std_20)
target_compile_options(nanort_build_options INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic>
  $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra>)
if(NANORT_SANITIZE)
  target_compile_options(nanort_build_options INTERFACE
    -fsanitize=${NANORT_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(nanort_build_options INTERFACE -fsanitize=${NANORT_SANITIZE})
  if(NANORT_SANITIZE MATCHES "thread" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # The sleep/wake protocol (idle_waiters.hpp) orders with fences, which TSan does not
    # model; no data is published through them, so the warning says nothing about our races.
    target_compile_options(nanort_build_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-tsan>)
  endif()
endif()
