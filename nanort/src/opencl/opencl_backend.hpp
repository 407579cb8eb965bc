// The OpenCL backend as the runtime's start sees it (device/backend.hpp): the devices of every
// platform, NANORT_OPENCL_DEVICES, this rank's share of the GPUs, and the program cache its
// devices build with (kept as long as the backend, which outlives them).
#pragma once

#include <memory>

#include "../device/backend.hpp"

namespace nanort::rt::opencl {
std::unique_ptr<Backend> make_backend();
}  // namespace nanort::rt::opencl
