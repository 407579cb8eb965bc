# MPI tests (included from tests/CMakeLists.txt when nanort-mpi is built): programs run by
# mpiexec on 2 and 4 ranks of this machine, as root where need be and oversubscribed (CI
# machines have few cores). Label mpi. Not in sanitizer builds: the MPI library's own
# allocations and shared-memory transport are not instrumented (what the runtime does for
# them, nanort_block_until, is covered there by smp_block).
if(NOT TARGET nanort_mpi OR NANORT_SANITIZE)
  return()
endif()
add_executable(mpi_tasks mpi/mpi_tasks_test.cpp)
target_link_libraries(mpi_tasks PRIVATE nanort::mpi nanort_build_options)
# The C API from C++ (MPI's C++ bindings are deprecated and live in another library).
target_compile_definitions(mpi_tasks PRIVATE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
# Open MPI in containers: no single-copy (ptrace) transfers, runs as root allowed.
set(NANORT_MPI_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    "OMPI_MCA_rmaps_base_oversubscribe=1" "OMPI_MCA_btl_vader_single_copy_mechanism=none"
    "NANORT_SPIN_US=0")
foreach(ranks 2 4)
  foreach(workers 1 2)
    set(name mpi.tasks.ranks${ranks}.workers${workers})
    # mpiexec fails when any rank does; rank 0 prints the success line.
    nanort_add_checked_test(NAME ${name} EXPECT "all results correct"
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} $<TARGET_FILE:mpi_tasks>)
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "${NANORT_MPI_TEST_ENV};NANORT_CPU_WORKERS=${workers}")
    nanort_test_properties(mpi ${name})
  endforeach()
endforeach()

# The checker fails a run where one rank exits 1 after rank 0 printed its success line.
find_package(MPI COMPONENTS C REQUIRED)  # its imported targets are local to nanort-mpi/
add_executable(mpi_planted_rank_failure mpi/planted_rank_failure.c)
target_link_libraries(mpi_planted_rank_failure PRIVATE MPI::MPI_C)
nanort_add_checked_test(NAME checker.catches_a_rank_that_exits_1
  STATUS 1 NO_REJECT
  EXPECT "all results correct.*FAILED \\(check_run.py\\): exit status [1-9]"
  COMMAND ${NANORT_CHECK_RUN} --expect "all results correct" --
          ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:mpi_planted_rank_failure>)
set_tests_properties(checker.catches_a_rank_that_exits_1 PROPERTIES
  ENVIRONMENT "${NANORT_MPI_TEST_ENV}")
nanort_test_properties(mpi checker.catches_a_rank_that_exits_1)
set_tests_properties(checker.catches_a_rank_that_exits_1 PROPERTIES LABELS "mpi;checker")

# Annotated C with MPI, built both ways (nanocc with mpicc as host compiler; mpicc with nanocc
# as its compiler) and run on 2 ranks with one CPU worker each (needs the plugin).
if(NANORT_BUILD_PLUGIN AND MPI_C_COMPILER)
  foreach(mode nanocc-over-mpicc mpicc-over-nanocc)
    set(name mpi.annotated.${mode})
    nanort_add_checked_test(NAME ${name} EXPECT "all results correct"
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/annotated_mpi.sh ${mode}
              ${PROJECT_BINARY_DIR}/pragma-plugin/nanocc ${MPI_C_COMPILER}
              ${MPIEXEC_EXECUTABLE} 2 $<TARGET_FILE_DIR:nanort_mpi>
              ${CMAKE_CURRENT_SOURCE_DIR}/mpi/annotated_allgather.c
              ${CMAKE_CURRENT_BINARY_DIR}/mpi/${mode}/annotated_allgather)
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "${NANORT_MPI_TEST_ENV};NANORT_CPU_WORKERS=1")
    nanort_test_properties(mpi ${name})
    set_tests_properties(${name} PROPERTIES LABELS "mpi;plugin")
  endforeach()
endif()
