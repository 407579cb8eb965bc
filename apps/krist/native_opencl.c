/* native_opencl.c: Krist on the OpenCL 1.2 API. The GPUs of every platform (else the CPU
 * devices), each in a context of its own with one in-order queue; every device gets all the
 * atoms once per repetition, then the blocks of reflections go round-robin to the devices,
 * each block a non-blocking write of its Miller indices, a kernel and a non-blocking read of
 * its results. Buffers are created once, before the timed repetitions. */
#include <CL/cl.h>

#include "app.h"
#include "krist.h"

/* Every OpenCL call is checked: the call and the error code, then exit status 1. */
#define CHECK(call)                                                                      \
  do {                                                                                   \
    cl_int e_ = (call);                                                                  \
    if (e_ != CL_SUCCESS) {                                                              \
      fprintf(stderr, "error: %s: OpenCL error %d\n", #call, (int)e_);                   \
      exit(APP_FAILED);                                                                  \
    }                                                                                    \
  } while (0)

enum { MAX_DEVICES = 64, LOCAL = 128 };

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

/* The kernel of krist.cl built for one device; the build log when the build fails. */
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
    fprintf(stderr, "error: clBuildProgram of krist.cl failed:\n%s\n", log);
    exit(APP_FAILED);
  }
  cl_kernel kernel = clCreateKernel(program, "krist", &err);
  CHECK(err);
  CHECK(clReleaseProgram(program)); /* the kernel keeps it */
  return kernel;
}

int main(int argc, char **argv) {
  krist_problem p = krist_setup(argc, argv, 1);
  cl_device_id devices[MAX_DEVICES];
  int count = find_devices(devices);
  if (count == 0) {
    printf("SKIP: no OpenCL device\n");
    return APP_SKIP;
  }
  int n = p.gpus > 0 && p.gpus < count ? p.gpus : count;
  char *source = app_read_kernel_file("krist.cl", NULL);
  if (!source) return APP_FAILED;
  size_t atom_bytes = (size_t)p.atoms * 4 * sizeof(float);
  float *atoms = malloc(atom_bytes), *f = malloc((size_t)p.reflections * 2 * sizeof(float));
  int *hkl = malloc((size_t)p.reflections * 3 * sizeof(int));
  krist_init(&p, atoms, hkl);
  cl_int err;
  cl_context contexts[MAX_DEVICES];
  cl_command_queue queues[MAX_DEVICES];
  cl_kernel kernels[MAX_DEVICES];
  cl_mem device_atoms[MAX_DEVICES];
  for (int d = 0; d < n; ++d) {
    contexts[d] = clCreateContext(NULL, 1, &devices[d], NULL, NULL, &err);
    CHECK(err);
    queues[d] = clCreateCommandQueue(contexts[d], devices[d], 0, &err);
    CHECK(err);
    kernels[d] = build_kernel(contexts[d], devices[d], source);
    device_atoms[d] = clCreateBuffer(contexts[d], CL_MEM_READ_ONLY, atom_bytes, NULL, &err);
    CHECK(err);
  }
  /* Each block's Miller indices and results, on the device that computes it. */
  int blocks = (p.reflections + p.bs - 1) / p.bs;
  cl_mem *device_hkl = malloc(blocks * sizeof *device_hkl);
  cl_mem *device_f = malloc(blocks * sizeof *device_f);
  for (int b = 0; b < blocks; ++b) {
    int nrefl = p.reflections - b * p.bs < p.bs ? p.reflections - b * p.bs : p.bs;
    device_hkl[b] = clCreateBuffer(contexts[b % n], CL_MEM_READ_ONLY,
                                   (size_t)nrefl * 3 * sizeof(int), NULL, &err);
    CHECK(err);
    device_f[b] = clCreateBuffer(contexts[b % n], CL_MEM_WRITE_ONLY,
                                 (size_t)nrefl * 2 * sizeof(float), NULL, &err);
    CHECK(err);
  }
  double *times = malloc(p.reps * sizeof *times);
  for (int rep = -1; rep < p.reps; ++rep) { /* rep -1: the warm-up */
    memset(f, 0, (size_t)p.reflections * 2 * sizeof(float));
    double start = app_now();
    for (int d = 0; d < n; ++d)
      CHECK(clEnqueueWriteBuffer(queues[d], device_atoms[d], CL_FALSE, 0, atom_bytes, atoms, 0,
                                 NULL, NULL));
    for (int b = 0; b < blocks; ++b) {
      int d = b % n;
      size_t first = (size_t)b * p.bs;
      int nrefl = p.reflections - (int)first < p.bs ? p.reflections - (int)first : p.bs;
      cl_kernel k = kernels[d];
      CHECK(clEnqueueWriteBuffer(queues[d], device_hkl[b], CL_FALSE, 0,
                                 (size_t)nrefl * 3 * sizeof(int), hkl + 3 * first, 0, NULL,
                                 NULL));
      CHECK(clSetKernelArg(k, 0, sizeof(int), &p.atoms));
      CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &device_atoms[d]));
      CHECK(clSetKernelArg(k, 2, sizeof(int), &nrefl));
      CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), &device_hkl[b]));
      CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &device_f[b]));
      size_t local = LOCAL, global = (nrefl + LOCAL - 1) / LOCAL * LOCAL; /* whole groups */
      CHECK(clEnqueueNDRangeKernel(queues[d], k, 1, NULL, &global, &local, 0, NULL, NULL));
      CHECK(clEnqueueReadBuffer(queues[d], device_f[b], CL_FALSE, 0,
                                (size_t)nrefl * 2 * sizeof(float), f + 2 * first, 0, NULL,
                                NULL));
    }
    for (int d = 0; d < n; ++d) CHECK(clFinish(queues[d]));
    app_record(times, rep, app_now() - start);
  }
  int ok = krist_check(&p, atoms, hkl, f);
  app_report("krist", "native_opencl", n, p.size, times, p.reps, ok);
  for (int b = 0; b < blocks; ++b) {
    CHECK(clReleaseMemObject(device_hkl[b]));
    CHECK(clReleaseMemObject(device_f[b]));
  }
  for (int d = 0; d < n; ++d) {
    CHECK(clReleaseMemObject(device_atoms[d]));
    CHECK(clReleaseKernel(kernels[d]));
    CHECK(clReleaseCommandQueue(queues[d]));
    CHECK(clReleaseContext(contexts[d]));
  }
  free(device_hkl);
  free(device_f);
  free(atoms);
  free(hkl);
  free(f);
  free(times);
  free(source);
  return ok ? APP_OK : APP_FAILED;
}
