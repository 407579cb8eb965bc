# OpenCL tests (included from tests/CMakeLists.txt). They run for real on whatever OpenCL
# devices the ICD loader finds; with none, they report SKIP with the reason.
#
# Most suites are parameterised by device: each case runs once per OpenCL device found (named
# .../dev0_cpu, .../dev1_gpu), in a process of its own with NANORT_OPENCL_DEVICES=<index>.

# The on-disk cache of program binaries, driven directly.
nanort_add_gtest(opencl_program_cache LABEL opencl
  SOURCES opencl/program_cache_test.cpp
  LIBS nanort_static)

# The kernel launcher's launch marks (which kernels share an event), driven directly.
nanort_add_gtest(opencl_launcher LABEL opencl
  SOURCES opencl/opencl_launcher_test.cpp
  LIBS nanort_static)

# Every OpenCL test gets two CPU workers, no CUDA device (on GPU machines the GPU is then
# reached through OpenCL alone) and a program cache of its own in the build tree (nothing is
# written to ~/.cache). Each test sees its built programs from earlier tests.
set(NANORT_OPENCL_TEST_ENV
    "NANORT_CPU_WORKERS=2"
    "NANORT_CUDA_DEVICES=none"  # OpenCL alone: device spaces and limits as the tests expect
    "NANORT_OPENCL_CACHE=${CMAKE_CURRENT_BINARY_DIR}/opencl-program-cache"
    # Results home at the flushing taskwait only, so that tests can check where data lives
    # between taskwaits; the *_eager entries run with the default (eager) instead.
    "NANORT_WRITE_BACK=taskwait")

# nanort_opencl_gtest(<target> [PREFIX <ctest prefix>] [NO_TARGET] SOURCES <files...>
#                     LIBS <libs...> [ENV <VAR=value>...])
# Like nanort_add_gtest, with any number of variables (on top of NANORT_OPENCL_TEST_ENV), and
# NO_TARGET to add other ctest entries (PREFIX) for an executable made before. Test names
# leave out the parameter's printed value.
function(nanort_opencl_gtest target)
  cmake_parse_arguments(ARG "NO_TARGET" "PREFIX" "SOURCES;LIBS;ENV" ${ARGN})
  if(NOT ARG_NO_TARGET)
    add_executable(${target} ${ARG_SOURCES})
    target_link_libraries(${target} PRIVATE ${ARG_LIBS} OpenCL::OpenCL GTest::gtest
                                            nanort_gtest_main nanort_build_options)
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/support
                                                 ${CMAKE_CURRENT_SOURCE_DIR}/opencl)
  endif()
  if(NOT ARG_PREFIX)
    set(ARG_PREFIX ${target})
  endif()
  set(properties LABELS opencl TIMEOUT ${NANORT_TEST_TIMEOUT})
  if(NANORT_TEST_ENV_MODIFICATION)
    list(APPEND properties ENVIRONMENT_MODIFICATION "${NANORT_TEST_ENV_MODIFICATION}")
  endif()
  gtest_discover_tests(${target}
    TEST_PREFIX "${ARG_PREFIX}."
    TEST_LIST ${ARG_PREFIX}_TESTS
    NO_PRETTY_VALUES
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60
    PROPERTIES ${properties})
  # The environment: gtest_discover_tests flattens a list given in PROPERTIES (only its first
  # variable would arrive), so a file that ctest reads after the discovered tests sets it on
  # the tests listed in ${ARG_PREFIX}_TESTS.
  set(environment ${NANORT_OPENCL_TEST_ENV} ${ARG_ENV})
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${ARG_PREFIX}_environment.cmake")
  file(WRITE "${script}"
    "if(${ARG_PREFIX}_TESTS)\n"
    "  set_tests_properties(\${${ARG_PREFIX}_TESTS} PROPERTIES ENVIRONMENT [==[${environment}]==])\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()

# Kernel arguments and index spaces, build and launch errors, copy clauses, partial overlaps,
# taskwait (flush, noflush, on), random mixes of device and CPU tasks: the public C ABI only.
nanort_opencl_gtest(opencl_tasks
  SOURCES opencl/opencl_tasks_test.cpp
  LIBS nanort::runtime)

# Taskiter: device and CPU tasks recorded once and replayed, against the loop run task by task.
nanort_opencl_gtest(opencl_taskiter
  SOURCES opencl/opencl_taskiter_test.cpp
  LIBS nanort_static)  # (a test reads a taskiter's command-buffer count: internal headers)

# Transfers counted by the directory (internal counters: nanort_static).
nanort_opencl_gtest(opencl_directory
  SOURCES opencl/opencl_directory_test.cpp
  LIBS nanort_static)

# Eviction: a device memory limit of 64 KiB against working sets several times larger.
nanort_opencl_gtest(opencl_eviction
  SOURCES opencl/opencl_eviction_test.cpp
  LIBS nanort_static
  ENV NANORT_DEVICE_MEMORY=64K)

# Several devices: every OpenCL device found, one task in flight each so that independent
# tasks spread. Skips with fewer than two devices...
nanort_opencl_gtest(opencl_multi_device
  SOURCES opencl/opencl_multi_device_test.cpp
  LIBS nanort_static
  ENV NANORT_OPENCL_DEVICES=all NANORT_DEVICE_IN_FLIGHT=1)
# ... so again with PoCL showing two CPU devices (a context each, the default: data between
# them goes through the host), which runs on any machine with PoCL; other platforms' devices
# join in.
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_pocl2
  ENV NANORT_OPENCL_DEVICES=all NANORT_DEVICE_IN_FLIGHT=1 "POCL_DEVICES=pthread pthread")
# ... and with one context per platform (NANORT_OPENCL_CONTEXTS=platform): direct
# device-to-device copies.
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_contexts
  ENV NANORT_OPENCL_DEVICES=all NANORT_DEVICE_IN_FLIGHT=1 "POCL_DEVICES=pthread pthread"
      NANORT_OPENCL_CONTEXTS=platform)
# ... and with the locality and dmda policies placing the tasks (dmda's model in the build
# folder, learnt afresh by each run; locality with one context, so that it places tasks
# among devices that copy directly).
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_locality
  ENV NANORT_OPENCL_DEVICES=all NANORT_DEVICE_IN_FLIGHT=1 "POCL_DEVICES=pthread pthread"
      NANORT_SCHEDULER=locality NANORT_OPENCL_CONTEXTS=platform)
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_dmda
  ENV NANORT_OPENCL_DEVICES=all NANORT_DEVICE_IN_FLIGHT=1 "POCL_DEVICES=pthread pthread"
      NANORT_SCHEDULER=dmda NANORT_PERF_MODEL=off)

# ... and with results going home as their last task ends (NANORT_WRITE_BACK=eager, the
# default): the suites' results must not change (one context: direct copies as well).
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_eager
  ENV NANORT_OPENCL_DEVICES=all NANORT_DEVICE_IN_FLIGHT=1 "POCL_DEVICES=pthread pthread"
      NANORT_WRITE_BACK=eager NANORT_OPENCL_CONTEXTS=platform)
nanort_opencl_gtest(opencl_tasks NO_TARGET PREFIX opencl_tasks_eager ENV NANORT_WRITE_BACK=eager)
# ... and with kernels enqueued by a launcher thread per device (NANORT_OPENCL_LAUNCH=thread):
# the same results, failures and errors.
nanort_opencl_gtest(opencl_tasks NO_TARGET PREFIX opencl_tasks_launch_thread
  ENV NANORT_OPENCL_LAUNCH=thread)
nanort_opencl_gtest(opencl_taskiter NO_TARGET PREFIX opencl_taskiter_launch_thread
  ENV NANORT_OPENCL_LAUNCH=thread)
# ... and with a recorded iteration whose tasks all ran on one device that has
# cl_khr_command_buffer replayed as a command buffer (NANORT_TASKITER_GRAPH=all): the same
# results, with the manager's and a launcher thread's enqueues.
nanort_opencl_gtest(opencl_taskiter NO_TARGET PREFIX opencl_taskiter_command_buffers
  ENV NANORT_TASKITER_GRAPH=all)
nanort_opencl_gtest(opencl_taskiter NO_TARGET PREFIX opencl_taskiter_command_buffers_thread
  ENV NANORT_TASKITER_GRAPH=all NANORT_OPENCL_LAUNCH=thread)
# ... and with every replayed task launched by itself (NANORT_TASKITER_GRAPH=cuda: OpenCL
# replays task by task; the default enqueues a replay's recorded kernels again).
nanort_opencl_gtest(opencl_taskiter NO_TARGET PREFIX opencl_taskiter_task_by_task
  ENV NANORT_TASKITER_GRAPH=cuda)
nanort_opencl_gtest(opencl_taskiter NO_TARGET PREFIX opencl_taskiter_task_by_task_thread
  ENV NANORT_TASKITER_GRAPH=cuda NANORT_OPENCL_LAUNCH=thread)
# The chain's replays are one launch, a task labelled 'taskiter graph' in the statistics: by
# default (NANORT_TASKITER_GRAPH=enqueue) its recorded kernels enqueued again, on every OpenCL
# device; with all, a command buffer on PoCL, which has the extension.
foreach(replay "EnqueuedKernels;NANORT_STATS=1"
               "ACommandBufferOnPocl;NANORT_OPENCL_DEVICES=platform:portable;NANORT_TASKITER_GRAPH=all;NANORT_STATS=1")
  list(POP_FRONT replay as)
  set(test opencl_taskiter.ChainReplaysAs${as})
  nanort_add_checked_test(NAME ${test}
    EXPECT "taskiter graph +1 "
    COMMAND opencl_taskiter --gtest_filter=*ChainsOfDeviceTasksKeepTheirOrder*)
  set_tests_properties(${test} PROPERTIES
    LABELS opencl TIMEOUT ${NANORT_TEST_TIMEOUT}
    ENVIRONMENT "${NANORT_OPENCL_TEST_ENV};${replay}")
  if(NANORT_TEST_ENV_MODIFICATION)
    set_tests_properties(${test} PROPERTIES
                         ENVIRONMENT_MODIFICATION "${NANORT_TEST_ENV_MODIFICATION}")
  endif()
endforeach()
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_launch_thread
  ENV NANORT_OPENCL_DEVICES=all "POCL_DEVICES=pthread pthread" NANORT_OPENCL_CONTEXTS=platform
      NANORT_OPENCL_LAUNCH=thread)
# ... and, in one context, with the default tasks in flight (each step's tasks staged behind
# the kernels of both devices); with one task of the shared queue per device at a time
# (NANORT_DEVICE_LOOKAHEAD=1); and with tasks launched early behind their own device's
# kernels only (NANORT_EARLY_LAUNCH=device).
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_in_flight
  ENV NANORT_OPENCL_DEVICES=all "POCL_DEVICES=pthread pthread" NANORT_OPENCL_CONTEXTS=platform)
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_lookahead1
  ENV NANORT_OPENCL_DEVICES=all "POCL_DEVICES=pthread pthread" NANORT_DEVICE_LOOKAHEAD=1)
nanort_opencl_gtest(opencl_multi_device NO_TARGET PREFIX opencl_multi_device_early_device
  ENV NANORT_OPENCL_DEVICES=all NANORT_DEVICE_IN_FLIGHT=1 "POCL_DEVICES=pthread pthread"
      NANORT_OPENCL_CONTEXTS=platform NANORT_EARLY_LAUNCH=device)

# NANORT_OPENCL_DEVICES=none: OpenCL-only tasks fail at submit, naming the task.
nanort_opencl_gtest(opencl_no_device
  SOURCES opencl/opencl_no_device_test.cpp
  LIBS nanort::runtime
  ENV NANORT_OPENCL_DEVICES=none)

# The program cache across runs: opencl_cache_run run twice as separate processes with a
# fresh NANORT_OPENCL_CACHE folder (also on kernel files that include headers, changed between
# the runs).
add_executable(opencl_cache_run opencl/opencl_cache_run.cpp)
target_link_libraries(opencl_cache_run PRIVATE nanort::runtime nanort_build_options)
nanort_opencl_gtest(opencl_program_cache_reuse
  SOURCES opencl/opencl_program_cache_reuse_test.cpp
  LIBS nanort::runtime)
target_compile_definitions(opencl_program_cache_reuse PRIVATE
  OPENCL_CACHE_RUN="$<TARGET_FILE:opencl_cache_run>")
add_dependencies(opencl_program_cache_reuse opencl_cache_run)
