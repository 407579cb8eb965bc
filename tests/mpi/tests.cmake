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
    add_test(NAME ${name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} $<TARGET_FILE:mpi_tasks>)
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "${NANORT_MPI_TEST_ENV};NANORT_CPU_WORKERS=${workers}"
      PASS_REGULAR_EXPRESSION "all results correct" FAIL_REGULAR_EXPRESSION "FAILED")
    nanort_test_properties(mpi ${name})
  endforeach()
endforeach()

# Annotated C with MPI, built both ways (nanocc with mpicc as host compiler; mpicc with nanocc
# as its compiler) and run on 2 ranks with one CPU worker each (needs the plugin).
if(NANORT_BUILD_PLUGIN AND MPI_C_COMPILER)
  foreach(mode nanocc-over-mpicc mpicc-over-nanocc)
    set(name mpi.annotated.${mode})
    add_test(NAME ${name}
             COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/annotated_mpi.sh ${mode}
                     ${PROJECT_BINARY_DIR}/pragma-plugin/nanocc ${MPI_C_COMPILER}
                     ${MPIEXEC_EXECUTABLE} 2 $<TARGET_FILE_DIR:nanort_mpi>
                     ${CMAKE_CURRENT_SOURCE_DIR}/mpi/annotated_allgather.c
                     ${CMAKE_CURRENT_BINARY_DIR}/mpi/${mode}/annotated_allgather)
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "${NANORT_MPI_TEST_ENV};NANORT_CPU_WORKERS=1"
      PASS_REGULAR_EXPRESSION "all results correct" FAIL_REGULAR_EXPRESSION "FAILED")
    nanort_test_properties(mpi ${name})
    set_tests_properties(${name} PROPERTIES LABELS "mpi;plugin")
  endforeach()
endif()
