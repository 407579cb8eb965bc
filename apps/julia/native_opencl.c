/* native_opencl.c: the Julia set on the OpenCL 1.2 API. The GPUs of every platform (else the
 * CPU devices), each in a context of its own with one in-order queue; the slices of rows go
 * round-robin to the devices (so that the costly interior rows in the middle of the image are
 * shared out), each slice a kernel and a non-blocking read into the host image. Buffers are
 * created once, before the timed repetitions. */
#include <CL/cl.h>

#include "app.h"
#include "julia.h"

/* Every OpenCL call is checked: the call and the error code, then exit status 1. */
#define CHECK(call)                                                                      \
  do {                                                                                   \
    cl_int e_ = (call);                                                                  \
    if (e_ != CL_SUCCESS) {                                                              \
      fprintf(stderr, "error: %s: OpenCL error %d\n", #call, (int)e_);                   \
      exit(APP_FAILED);                                                                  \
    }                                                                                    \
  } while (0)

enum { MAX_DEVICES = 64 };

/* The GPUs of every platform or, where there is none, the CPU devices (PoCL). */
static int find_devices(cl_device_id *devices) {
  cl_platform_id platforms[16];
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(16, platforms, &platform_count) != CL_SUCCESS) return 0;
  if (platform_count > 16) platform_count = 16;
  const cl_device_type types[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_CPU};
  int n = 0;
  for (int t = 0; t < 2 && n == 0; ++t)
    for (cl_uint i = 0; i < platform_count && n < MAX_DEVICES; ++i) {
      cl_uint found = 0;
      if (clGetDeviceIDs(platforms[i], types[t], MAX_DEVICES - n, devices + n, &found) ==
          CL_SUCCESS)
        n += found < (cl_uint)(MAX_DEVICES - n) ? (int)found : MAX_DEVICES - n;
    }
  return n;
}

/* The kernel of julia.cl built for one device; the build log when the build fails. */
static cl_kernel build_kernel(cl_context context, cl_device_id device, const char *source) {
  cl_int err;
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  CHECK(err);
  if (clBuildProgram(program, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) {
    size_t length = 0;
    CHECK(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &length));
    char *log = malloc(length + 1);
    CHECK(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, length, log, NULL));
    log[length] = '\0';
    fprintf(stderr, "error: clBuildProgram of julia.cl failed:\n%s\n", log);
    exit(APP_FAILED);
  }
  cl_kernel kernel = clCreateKernel(program, "julia", &err);
  CHECK(err);
  CHECK(clReleaseProgram(program)); /* the kernel keeps it */
  return kernel;
}

int main(int argc, char **argv) {
  julia_problem p = julia_setup(argc, argv, 1);
  cl_device_id devices[MAX_DEVICES];
  int count = find_devices(devices);
  if (count == 0) {
    printf("SKIP: no OpenCL device\n");
    return APP_SKIP;
  }
  int n = p.gpus > 0 && p.gpus < count ? p.gpus : count;
  char *source = app_read_kernel_file("julia.cl", NULL);
  if (!source) return APP_FAILED;
  cl_int err;
  cl_context contexts[MAX_DEVICES];
  cl_command_queue queues[MAX_DEVICES];
  cl_kernel kernels[MAX_DEVICES];
  for (int d = 0; d < n; ++d) {
    contexts[d] = clCreateContext(NULL, 1, &devices[d], NULL, NULL, &err);
    CHECK(err);
    queues[d] = clCreateCommandQueue(contexts[d], devices[d], 0, &err);
    CHECK(err);
    kernels[d] = build_kernel(contexts[d], devices[d], source);
  }
  size_t pixels = (size_t)p.width * p.height;
  unsigned int *image = malloc(pixels * sizeof *image);
  /* One buffer per slice, on the device that computes it. */
  int slices = (p.height + p.slice - 1) / p.slice;
  cl_mem *buffers = malloc(slices * sizeof *buffers);
  for (int s = 0; s < slices; ++s) {
    int rows = p.height - s * p.slice < p.slice ? p.height - s * p.slice : p.slice;
    buffers[s] = clCreateBuffer(contexts[s % n], CL_MEM_WRITE_ONLY,
                                (size_t)rows * p.width * sizeof *image, NULL, &err);
    CHECK(err);
  }
  float cre = JULIA_CRE, cim = JULIA_CIM;
  double *times = malloc(p.reps * sizeof *times);
  for (int rep = -1; rep < p.reps; ++rep) { /* rep -1: the warm-up */
    memset(image, 0, pixels * sizeof *image);
    double start = app_now();
    for (int s = 0; s < slices; ++s) {
      int d = s % n;
      int row0 = s * p.slice;
      int rows = p.height - row0 < p.slice ? p.height - row0 : p.slice;
      cl_kernel k = kernels[d];
      CHECK(clSetKernelArg(k, 0, sizeof(int), &p.width));
      CHECK(clSetKernelArg(k, 1, sizeof(int), &rows));
      CHECK(clSetKernelArg(k, 2, sizeof(int), &row0));
      CHECK(clSetKernelArg(k, 3, sizeof(float), &p.x0));
      CHECK(clSetKernelArg(k, 4, sizeof(float), &p.y0));
      CHECK(clSetKernelArg(k, 5, sizeof(float), &p.step));
      CHECK(clSetKernelArg(k, 6, sizeof(float), &cre));
      CHECK(clSetKernelArg(k, 7, sizeof(float), &cim));
      CHECK(clSetKernelArg(k, 8, sizeof(int), &p.iters));
      CHECK(clSetKernelArg(k, 9, sizeof(cl_mem), &buffers[s]));
      /* The index space rounded up to whole 32 x 4 groups (OpenCL 1.2 needs that). */
      size_t local[2] = {32, 4};
      size_t global[2] = {(p.width + 31) / 32 * 32, (rows + 3) / 4 * 4};
      CHECK(clEnqueueNDRangeKernel(queues[d], k, 2, NULL, global, local, 0, NULL, NULL));
      CHECK(clEnqueueReadBuffer(queues[d], buffers[s], CL_FALSE, 0,
                                (size_t)rows * p.width * sizeof *image,
                                image + (size_t)row0 * p.width, 0, NULL, NULL));
    }
    for (int d = 0; d < n; ++d) CHECK(clFinish(queues[d]));
    app_record(times, rep, app_now() - start);
  }
  int ok = julia_check(&p, image);
  app_report("julia", "native_opencl", n, p.size, times, p.reps, ok);
  for (int s = 0; s < slices; ++s) CHECK(clReleaseMemObject(buffers[s]));
  for (int d = 0; d < n; ++d) {
    CHECK(clReleaseKernel(kernels[d]));
    CHECK(clReleaseCommandQueue(queues[d]));
    CHECK(clReleaseContext(contexts[d]));
  }
  free(buffers);
  free(image);
  free(times);
  free(source);
  return ok ? APP_OK : APP_FAILED;
}
