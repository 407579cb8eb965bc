// The nanort_cuda_objects library: stand-ins for the entry points that objects made by plain
// `nvcc -c` call into CUDA's runtime library, so that a program links such objects without
// that library and their kernels run as nanort tasks.
//
// Each object's start-up code registers its fatbin image (__cudaRegisterFatBinary): the image
// goes to the runtime (nanort_cuda_register_image), which loads it on each GPU when a task
// names one of its kernels (NANORT_MODULE_CUDA_LINKED). Kernels are launched by the runtime;
// a <<<...>>> launch in the program's own code reaches the stand-ins below, which stop the
// program with a message. A program that also links CUDA's runtime library (cuBLAS users)
// gets those entry points from it instead and must not link this library.
#include <nanort/nanort.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace {

// What __cudaRegisterFatBinary receives: a wrapper around the object's fatbin image.
struct FatbinWrapper {
  int magic;    // 0x466243b1
  int version;  // 1
  const void *image;
  const void *unused;
};
constexpr int kWrapperMagic = 0x466243b1;

struct Dim3 {
  unsigned x, y, z;
};

[[noreturn]] void refuse(const char *entry) {
  std::fprintf(stderr,
               "nanort: %s: a kernel was launched with <<<...>>> in a program linked with "
               "nanort_cuda_objects; call the kernel as a task (its declaration with "
               "#pragma omp target device(cuda)), or link CUDA's runtime library instead\n",
               entry);
  std::exit(EXIT_FAILURE);
}

void *handle = nullptr;  // the objects only hand it back

}  // namespace

extern "C" {

NANORT_API void **__cudaRegisterFatBinary(void *fat_cubin) {
  const auto *wrapper = static_cast<const FatbinWrapper *>(fat_cubin);
  if (wrapper && wrapper->magic == kWrapperMagic && wrapper->image)
    nanort_cuda_register_image(wrapper->image);
  return &handle;
}

NANORT_API void __cudaRegisterFatBinaryEnd(void ** /*handle*/) {}
NANORT_API void __cudaUnregisterFatBinary(void ** /*handle*/) {}

// Kernels are found in the images by name; the host stubs' addresses are not needed.
NANORT_API void __cudaRegisterFunction(void ** /*handle*/, const char * /*host_function*/,
                                       char * /*device_function*/, const char * /*device_name*/,
                                       int /*thread_limit*/, void * /*tid*/, void * /*bid*/,
                                       void * /*block*/, void * /*grid*/, int * /*warp_size*/) {}
NANORT_API void __cudaRegisterVar(void ** /*handle*/, char * /*host_variable*/,
                                  char * /*device_address*/, const char * /*device_name*/,
                                  int /*ext*/, std::size_t /*size*/, int /*constant*/,
                                  int /*global*/) {}
NANORT_API char __cudaInitModule(void ** /*handle*/) { return 0; }

NANORT_API unsigned __cudaPushCallConfiguration(Dim3, Dim3, std::size_t, void *) {
  refuse("__cudaPushCallConfiguration");
}
NANORT_API int __cudaPopCallConfiguration(Dim3 *, Dim3 *, std::size_t *, void *) {
  refuse("__cudaPopCallConfiguration");
}
NANORT_API int __cudaLaunchKernel(const void *, Dim3, Dim3, void **, std::size_t, void *) {
  refuse("__cudaLaunchKernel");
}
NANORT_API int __cudaGetKernel(void **, const void *) { refuse("__cudaGetKernel"); }

}  // extern "C"
