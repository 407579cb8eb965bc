# OpenCL tests (included from tests/CMakeLists.txt). They run for real on whatever OpenCL
# devices the ICD loader finds; with none, they report SKIP with the reason.

# The on-disk cache of program binaries, driven directly.
nanort_add_gtest(opencl_program_cache LABEL opencl
  SOURCES opencl/program_cache_test.cpp
  LIBS nanort_static)
