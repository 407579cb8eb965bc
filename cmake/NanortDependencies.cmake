# Imported targets for every dependency, all from Debian packages.
find_package(Threads REQUIRED)
find_package(TBB REQUIRED COMPONENTS tbb)          # libtbb-dev: TBB::tbb
find_package(PkgConfig REQUIRED)
pkg_check_modules(hwloc REQUIRED IMPORTED_TARGET hwloc)  # libhwloc-dev: PkgConfig::hwloc
find_package(OpenCL REQUIRED)                       # ocl-icd-opencl-dev: OpenCL::OpenCL (the ICD loader)
