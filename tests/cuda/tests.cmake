# CUDA tests (included from tests/CMakeLists.txt when the runtime has its CUDA backend and nvcc
# is found). The kernels are built here into a fatbin and embedded; the tests run on NVIDIA
# GPUs and report SKIP with the reason where there is none (CI compiles them).
find_program(NANORT_NVCC nvcc HINTS ENV CUDA_HOME PATH_SUFFIXES bin PATHS /usr/local/cuda/bin)
if(NOT NANORT_NVCC)
  message(STATUS "nanort: nvcc not found: no CUDA tests")
  return()
endif()

# SASS for Ampere and Hopper, PTX for newer GPUs.
set(NANORT_TEST_CUDA_GENCODE
    -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
    -gencode arch=compute_90,code=compute_90)
set(fatbin ${CMAKE_CURRENT_BINARY_DIR}/cuda_test_kernels.fatbin)
set(embedded ${CMAKE_CURRENT_BINARY_DIR}/cuda_test_kernels.c)
add_custom_command(OUTPUT ${fatbin}
  COMMAND ${NANORT_NVCC} -fatbin ${NANORT_TEST_CUDA_GENCODE} -o ${fatbin}
          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels.cu
  DEPENDS cuda/kernels.cu
  COMMENT "nvcc: the CUDA tests' kernels")
add_custom_command(OUTPUT ${embedded}
  COMMAND ${CMAKE_COMMAND} -DINPUT=${fatbin} -DOUTPUT=${embedded} -DNAME=test_kernels
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cuda/embed_fatbin.cmake
  DEPENDS ${fatbin} cuda/embed_fatbin.cmake)

# Results home at the flushing taskwait only: the tests count what moves between taskwaits.
nanort_add_gtest(cuda_tasks LABEL cuda
  SOURCES cuda/cuda_tasks_test.cpp ${embedded}
  LIBS nanort_static OpenCL::OpenCL
  ENV "NANORT_CPU_WORKERS=2;NANORT_WRITE_BACK=taskwait")

# The taskiter tests again with each replay's kernels launched one by one (no CUDA Graph).
add_test(NAME cuda_tasks.TaskiterWithoutGraphs
         COMMAND cuda_tasks --gtest_filter=Cuda.Taskiter*)
set_tests_properties(cuda_tasks.TaskiterWithoutGraphs PROPERTIES LABELS cuda
  TIMEOUT ${NANORT_TEST_TIMEOUT}
  ENVIRONMENT "NANORT_CPU_WORKERS=2;NANORT_WRITE_BACK=taskwait;NANORT_TASKITER_GRAPH=off")
if(NANORT_TEST_ENV_MODIFICATION)  # (the sanitizers' settings, as nanort_add_gtest gives them)
  set_tests_properties(cuda_tasks.TaskiterWithoutGraphs PROPERTIES
                       ENVIRONMENT_MODIFICATION "${NANORT_TEST_ENV_MODIFICATION}")
endif()

# Every test again with each GPU's kernels launched by its manager thread (the default is a
# launcher thread per GPU): the same results, failures and errors.
nanort_add_gtest(cuda_tasks NO_TARGET PREFIX cuda_tasks_launch_manager LABEL cuda
  ENV NANORT_CPU_WORKERS=2 NANORT_WRITE_BACK=taskwait NANORT_CUDA_LAUNCH=manager)

# Kernels from an object made by plain nvcc -c, linked with nanort_cuda_objects.
set(linked_object ${CMAKE_CURRENT_BINARY_DIR}/cuda_linked_kernels.o)
add_custom_command(OUTPUT ${linked_object}
  COMMAND ${NANORT_NVCC} -c ${NANORT_TEST_CUDA_GENCODE} -o ${linked_object}
          ${CMAKE_CURRENT_SOURCE_DIR}/cuda/linked_kernels.cu
  DEPENDS cuda/linked_kernels.cu
  COMMENT "nvcc -c: an object with kernels")
nanort_add_gtest(cuda_linked LABEL cuda
  SOURCES cuda/cuda_linked_test.cpp ${linked_object}
  LIBS nanort::cuda_objects nanort::runtime
  ENV NANORT_CPU_WORKERS=2)
set_source_files_properties(${linked_object} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
