# The nanocc / nanocxx wrappers' own options (tests/plugin/check_wrappers.sh, one case each):
#
#   plugin.wrappers.help                 --help, -help, -h: their options on stdout, exit 0,
#                                        the host compiler in use named last
#   plugin.wrappers.version              nanort's version, then the host compiler's
#   plugin.wrappers.show_clang           --show / -show / --showme: every command, the kernels'
#                                        embedding included, as a script that builds the program
#   plugin.wrappers.show_host_compiler   the same with gcc as host compiler; -c, -k
#   plugin.wrappers.show_cuda            .cu files through nvcc into an embedded fatbin
#   plugin.wrappers.show_fatbin_objects  a .fatbin given as it is; objects made by nvcc -c
#   plugin.wrappers.showme               --showme:compile, --showme:link
#   plugin.wrappers.missing_inputs       "nanocc: cannot read 'x'" for each kind of input file
#   plugin.wrappers.mcc_flags            OmpSs's mcc options: --ompss, --no-openmp, --cuda,
#                                        --no-copy-deps (and what it lowers), --W<steps>,, the
#                                        other spellings, the ignored ones with their reasons
#
# The cases that run what --show printed, and the programs it built, do so outside sanitizer
# builds only (there the programs need the sanitizer flags that the plugin.run tests add).
if(NANORT_SANITIZE)
  set(wrappers_run 0)
else()
  set(wrappers_run 1)
endif()
if(NANORT_NVCC)
  set(wrappers_nvcc ${NANORT_NVCC})
else()
  set(wrappers_nvcc nvcc)
endif()
set(wrappers_env
  WRAPPERS=${plugin_wrappers} VERSION=${PROJECT_VERSION}
  CLANG_C=${NANORT_CLANG_C} CLANG_CXX=${NANORT_CLANG_CXX} HOST_CC=${CMAKE_C_COMPILER}
  PLUGIN=${plugin_so} INCLUDE=${PROJECT_SOURCE_DIR}/include
  LIBDIR=$<TARGET_FILE_DIR:nanort_runtime> NVCC=${wrappers_nvcc} PROGRAMS=${plugin_dir}/programs
  SCRATCH=${plugin_bin}/wrappers RUN=${wrappers_run})
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  list(APPEND wrappers_env HOST_CC_OTHER=${CMAKE_C_COMPILER})
else()
  list(APPEND wrappers_env HOST_CC_OTHER=)
endif()
set(wrapper_cases help version show_clang showme missing_inputs show_fatbin_objects mcc_flags)
# The other host compiler must not be clang 19, which lowers in the compile.
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  list(APPEND wrapper_cases show_host_compiler)
endif()
if(NANORT_NVCC)
  list(APPEND wrapper_cases show_cuda)
endif()
foreach(case ${wrapper_cases})
  nanort_add_checked_test(NAME plugin.wrappers.${case} EXPECT "^${case}: passed$"
    COMMAND ${CMAKE_COMMAND} -E env ${wrappers_env}
            bash ${plugin_dir}/check_wrappers.sh ${case})
  nanort_test_properties(plugin plugin.wrappers.${case})
endforeach()
# The programs built from what --show printed use OpenCL (and CUDA) kernels.
set_tests_properties(plugin.wrappers.show_clang PROPERTIES LABELS "plugin;opencl")
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set_tests_properties(plugin.wrappers.show_host_compiler PROPERTIES LABELS "plugin;opencl")
endif()
if(NANORT_NVCC)
  set_tests_properties(plugin.wrappers.show_cuda PROPERTIES LABELS "plugin;cuda;opencl")
endif()
