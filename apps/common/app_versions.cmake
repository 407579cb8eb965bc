# app_versions(<app>
#              [CUDA_KERNELS <file.cu>]     kernels shared verbatim by the CUDA versions
#              [OPENCL_KERNELS <file.cl>]   kernels shared verbatim by the OpenCL versions
#              [NATIVE_CUDA <file.cu>]      host code on the CUDA runtime API (nvcc)
#              [NATIVE_CUDA_GRAPH <file.cu>] the same, its time loop a CUDA Graph (nvcc)
#              [NATIVE_OPENCL <file.c>]     host code on the OpenCL API
#              [ANNOTATED_CUDA <file.c>]    pragmas, CUDA kernels (needs the plugin)
#              [ANNOTATED_OPENCL <file.c>]  pragmas, OpenCL kernels (needs the plugin)
#              [ANNOTATED_MIXED <file.c>]   pragmas, both kinds of kernels (needs the plugin)
#              [STARPU_OPENCL <file.c>]     the peer: StarPU with OpenCL codelets (libstarpu-dev)
#              [TEST_ARGS <arg>...])        the small sizes that ctest runs (PoCL in CI)
#
# Builds each version this machine can build as <app>_<version> (native_cuda,
# native_cuda_graph, native_opencl, annotated_cuda, annotated_opencl, annotated_mixed,
# starpu_opencl) and registers its test apps.<app>.<version>
# (labels apps and cuda or opencl; exit 77 is a skip: no device of the kind). CUDA versions
# need nvcc and are left out of sanitizer builds (nvcc does not take the sanitizer flags); the
# annotated versions need the pragma plugin. Every version includes apps/common/app.h.
function(app_versions app)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" ""
    "CUDA_KERNELS;OPENCL_KERNELS;NATIVE_CUDA;NATIVE_CUDA_GRAPH;NATIVE_OPENCL;ANNOTATED_CUDA;ANNOTATED_OPENCL;ANNOTATED_MIXED;STARPU_OPENCL;TEST_ARGS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "app_versions(${app}): unexpected arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(common "${PROJECT_SOURCE_DIR}/apps/common")
  set(made "")

  foreach(f IN LISTS arg_CUDA_KERNELS arg_OPENCL_KERNELS arg_NATIVE_CUDA arg_NATIVE_CUDA_GRAPH
                 arg_NATIVE_OPENCL arg_ANNOTATED_CUDA arg_ANNOTATED_OPENCL arg_ANNOTATED_MIXED
                 arg_STARPU_OPENCL)
    get_filename_component(path "${f}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "app_versions(${app}): ${f} does not exist")
    endif()
  endforeach()

  foreach(kind CUDA CUDA_GRAPH)
    if(NOT arg_NATIVE_${kind} OR NOT NANORT_APPS_CUDA)
      continue()
    endif()
    string(TOLOWER native_${kind} version)
    set(t ${app}_${version})
    add_executable(${t} ${arg_NATIVE_${kind}})
    set_target_properties(${t} PROPERTIES CUDA_ARCHITECTURES "${NANORT_APPS_CUDA_ARCHITECTURES}")
    target_include_directories(${t} PRIVATE "${common}")
    target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-O3>)
    target_link_libraries(${t} PRIVATE CUDA::cudart_static)
    list(APPEND made ${version})
  endforeach()
  # Versions that build their kernels from the .cl file at run time: OpenCL programs do.
  set(runtime_cl "")
  if(arg_NATIVE_OPENCL)
    set(t ${app}_native_opencl)
    add_executable(${t} ${arg_NATIVE_OPENCL})
    target_link_libraries(${t} PRIVATE OpenCL::OpenCL m nanort_build_options)
    list(APPEND runtime_cl ${t})
    list(APPEND made native_opencl)
  endif()
  if(arg_STARPU_OPENCL AND NANORT_APPS_STARPU)
    set(t ${app}_starpu_opencl)
    add_executable(${t} ${arg_STARPU_OPENCL})
    target_link_libraries(${t} PRIVATE PkgConfig::nanort_apps_starpu OpenCL::OpenCL m
                                       nanort_build_options)
    list(APPEND runtime_cl ${t})
    list(APPEND made starpu_opencl)
  endif()
  foreach(t IN LISTS runtime_cl)
    target_include_directories(${t} PRIVATE "${common}")
    target_compile_definitions(${t} PRIVATE CL_TARGET_OPENCL_VERSION=120)
    # The kernels next to the executable, where the program reads them at run time.
    get_filename_component(cl "${arg_OPENCL_KERNELS}" ABSOLUTE)
    get_filename_component(cl_name "${cl}" NAME)
    add_custom_command(TARGET ${t} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different "${cl}" "$<TARGET_FILE_DIR:${t}>/${cl_name}"
      VERBATIM)
  endforeach()
  if(NANORT_BUILD_PLUGIN)
    foreach(kind CUDA OPENCL MIXED)
      if(NOT arg_ANNOTATED_${kind})
        continue()
      endif()
      string(TOLOWER ${kind} version)
      set(version annotated_${version})
      set(kernels "")
      if(kind STREQUAL "CUDA" OR kind STREQUAL "MIXED")
        if(NOT NANORT_APPS_CUDA)
          continue()
        endif()
        list(APPEND kernels CUDA ${arg_CUDA_KERNELS}
                    CUDA_ARCHITECTURES ${NANORT_APPS_CUDA_ARCHITECTURES} NVCC_OPTIONS -O3)
      endif()
      if(kind STREQUAL "OPENCL" OR kind STREQUAL "MIXED")
        list(APPEND kernels OPENCL ${arg_OPENCL_KERNELS})
      endif()
      set(t ${app}_${version})
      add_executable(${t} ${arg_ANNOTATED_${kind}})
      target_include_directories(${t} PRIVATE "${common}")
      target_link_libraries(${t} PRIVATE m nanort_build_options)
      nanort_annotate(${t} ${kernels})
      list(APPEND made ${version})
    endforeach()
  endif()

  foreach(version IN LISTS made)
    set(name apps.${app}.${version})
    add_test(NAME ${name} COMMAND ${app}_${version} ${arg_TEST_ARGS})
    if(version MATCHES "cuda")
      set(labels "apps;cuda")
    elseif(version MATCHES "mixed")
      set(labels "apps;cuda;opencl")
    else()
      set(labels "apps;opencl")
    endif()
    # Two CPU workers and a program cache of the test's own (nothing is written to $HOME).
    set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT 300
      ENVIRONMENT "NANORT_CPU_WORKERS=2;NANORT_OPENCL_CACHE=${CMAKE_CURRENT_BINARY_DIR}/opencl-program-cache;NANORT_PERF_MODEL=off")
    if(version STREQUAL "starpu_opencl")
      # PoCL's CPU device counts (StarPU takes GPUs alone otherwise); StarPU's performance
      # models in the build tree, not in $HOME.
      set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
        "STARPU_OPENCL_ON_CPUS=1;STARPU_SILENT=1;STARPU_HOME=${CMAKE_CURRENT_BINARY_DIR}/starpu-home")
    endif()
    if(COMMAND nanort_test_environment)
      nanort_test_environment(${name})
    endif()
  endforeach()
endfunction()
