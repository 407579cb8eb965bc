# The installed package: find_package(nanort) gives nanort::runtime (the library and the C/C++
# headers) and nanort::directory_cache.
include(CMakePackageConfigHelpers)
install(TARGETS nanort_runtime nanort_directory_cache
        EXPORT nanortTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS nanort-info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/nanort DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY directory-cache/include/nanort DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT nanortTargets NAMESPACE nanort:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nanort)
configure_package_config_file(cmake/nanortConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/nanortConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nanort)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/nanortConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/nanortConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/nanortConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nanort)
