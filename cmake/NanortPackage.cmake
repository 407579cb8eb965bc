# The installed package: find_package(nanort) gives nanort::runtime (the library and the C/C++
# headers), nanort::omp (the OpenMP routines and their omp.h), nanort::directory_cache,
# nanort::mpi (with MPI) and, when the pragma plugin is built, the function nanort_annotate
# (cmake/NanortAnnotate.cmake).
include(CMakePackageConfigHelpers)
install(TARGETS nanort_runtime nanort_omp nanort_directory_cache nanort_cuda_objects
        EXPORT nanortTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS nanort-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The trace summary (docs/configuration.md, "Trace"), as a command of its own.
install(PROGRAMS nanort/tools/trace_summary.py DESTINATION ${CMAKE_INSTALL_BINDIR}
        RENAME nanort-trace-summary)
install(DIRECTORY include/nanort DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY directory-cache/include/nanort DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT nanortTargets NAMESPACE nanort:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nanort)
# nanort::mpi (nanort-mpi/), when MPI was found: a set of its own, loaded when the consumer
# finds MPI too.
if(TARGET nanort_mpi)
  install(TARGETS nanort_mpi EXPORT nanortMpiTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT nanortMpiTargets NAMESPACE nanort:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nanort)
endif()
# The plugin and the clang 19 that lowers for other compilers (absolute: the package needs the
# same clang 19 installed where it is used).
set(NANORT_PACKAGE_PLUGIN ${CMAKE_INSTALL_LIBDIR}/nanort-plugin.so)
if(NANORT_BUILD_PLUGIN)
  set(NANORT_PACKAGE_HAS_PLUGIN TRUE)
  set(NANORT_PACKAGE_CLANG_C ${NANORT_CLANG_C})
  set(NANORT_PACKAGE_CLANG_CXX ${NANORT_CLANG_CXX})
else()
  set(NANORT_PACKAGE_HAS_PLUGIN FALSE)
  set(NANORT_PACKAGE_CLANG_C "")
  set(NANORT_PACKAGE_CLANG_CXX "")
endif()
configure_package_config_file(cmake/nanortConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/nanortConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nanort
  PATH_VARS NANORT_PACKAGE_PLUGIN)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/nanortConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nanortConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/nanortConfigVersion.cmake
              cmake/NanortAnnotate.cmake cmake/NanortEmbedOpenCL.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nanort)
