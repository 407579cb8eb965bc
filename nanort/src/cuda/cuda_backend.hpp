// The CUDA backend as the runtime's start sees it (device/backend.hpp): the GPUs the driver
// lists, NANORT_CUDA_DEVICES, this rank's share. Built with or without cuda.h: without it, the
// backend finds nothing and says why.
#pragma once

#include <memory>
#include <vector>

#include "../device/backend.hpp"

namespace nanort::rt {

// Fatbin images of objects made by nvcc -c, registered at start-up (before the runtime starts,
// so kept apart from it); read by the CUDA backend for NANORT_MODULE_CUDA_LINKED modules.
void register_linked_cuda_image(const void *image);
std::vector<const void *> linked_cuda_images();

namespace cuda {
std::unique_ptr<Backend> make_backend();
}  // namespace cuda

}  // namespace nanort::rt
