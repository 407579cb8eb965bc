/* SAXPY, native OpenCL version: the blocks are split evenly across the devices (the GPUs of
 * every platform, else the CPU devices); each device has its own context, in-order queue and
 * a buffer pair per block, and gets its blocks' copies in, kernels and copies out enqueued
 * without waiting, so that all devices work at once. */
#include <CL/cl.h>

#include "saxpy.h"

static void check(cl_int error, const char *call) {
  if (error != CL_SUCCESS) {
    fprintf(stderr, "error: %s: OpenCL error %d\n", call, error);
    exit(APP_FAILED);
  }
}
#define CHECK(call) check((call), #call)

enum { MAX_DEVICES = 16 };

struct device {
  cl_context context;
  cl_command_queue queue;
  cl_kernel kernel;
  long first, end; /* its blocks [first, end) */
  cl_mem *x, *y;   /* a buffer per block */
};

/* The GPUs of every platform; where there are none, the CPU devices. */
static int find_devices(cl_device_id *ids, int max) {
  cl_platform_id platforms[16];
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(16, platforms, &platform_count) != CL_SUCCESS) return 0;
  const cl_device_type types[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_CPU};
  for (int t = 0; t < 2; ++t) {
    int count = 0;
    for (cl_uint p = 0; p < platform_count && count < max; ++p) {
      cl_uint found = 0;
      if (clGetDeviceIDs(platforms[p], types[t], max - count, ids + count, &found) == CL_SUCCESS)
        count += found < (cl_uint)(max - count) ? (int)found : max - count;
    }
    if (count > 0) return count;
  }
  return 0;
}

/* The kernel of the source, built for one device; the build log when the build fails. */
static cl_kernel build_kernel(cl_context context, cl_device_id id, const char *source,
                              size_t length, const char *name) {
  cl_int e;
  cl_program program = clCreateProgramWithSource(context, 1, &source, &length, &e);
  check(e, "clCreateProgramWithSource");
  if (clBuildProgram(program, 1, &id, "", NULL, NULL) != CL_SUCCESS) {
    char log[16384] = "";
    clGetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "error: clBuildProgram failed:\n%s\n", log);
    exit(APP_FAILED);
  }
  cl_kernel kernel = clCreateKernel(program, name, &e);
  check(e, "clCreateKernel");
  CHECK(clReleaseProgram(program));
  return kernel;
}

int main(int argc, char **argv) {
  struct saxpy_config cfg = saxpy_config(argc, argv, 1);
  cl_device_id ids[MAX_DEVICES];
  int count = find_devices(ids, MAX_DEVICES);
  if (count == 0) {
    printf("SKIP: no OpenCL device\n");
    return APP_SKIP;
  }
  int devices = cfg.gpus > 0 && cfg.gpus < count ? cfg.gpus : count;
  long blocks = (cfg.n + cfg.bs - 1) / cfg.bs;
  if (devices > blocks) devices = (int)blocks;
  size_t source_length;
  char *source = app_read_kernel_file("saxpy.cl", &source_length);
  if (!source) return APP_FAILED;

  float *x = (float *)malloc(cfg.n * sizeof(float)), *y = (float *)malloc(cfg.n * sizeof(float));
  struct device dev[MAX_DEVICES];
  for (int d = 0; d < devices; ++d) {
    struct device *v = &dev[d];
    cl_int e;
    v->context = clCreateContext(NULL, 1, &ids[d], NULL, NULL, &e);
    check(e, "clCreateContext");
    v->queue = clCreateCommandQueue(v->context, ids[d], 0, &e);
    check(e, "clCreateCommandQueue");
    v->kernel = build_kernel(v->context, ids[d], source, source_length, "saxpy");
    v->first = blocks * d / devices;
    v->end = blocks * (d + 1) / devices;
    v->x = (cl_mem *)malloc((v->end - v->first) * sizeof(cl_mem));
    v->y = (cl_mem *)malloc((v->end - v->first) * sizeof(cl_mem));
    for (long b = v->first; b < v->end; ++b) {
      size_t bytes = saxpy_length(&cfg, b * cfg.bs) * sizeof(float);
      v->x[b - v->first] = clCreateBuffer(v->context, CL_MEM_READ_ONLY, bytes, NULL, &e);
      check(e, "clCreateBuffer");
      v->y[b - v->first] = clCreateBuffer(v->context, CL_MEM_READ_WRITE, bytes, NULL, &e);
      check(e, "clCreateBuffer");
    }
  }

  double *times = (double *)malloc(cfg.reps * sizeof(double));
  for (int rep = -1; rep < cfg.reps; ++rep) { /* rep -1: the warm-up */
    saxpy_init(cfg.n, x, y);
    double start = app_now();
    for (int d = 0; d < devices; ++d) {
      struct device *v = &dev[d];
      for (long b = v->first; b < v->end; ++b) {
        long i = b * cfg.bs;
        int len = (int)saxpy_length(&cfg, i);
        size_t bytes = len * sizeof(float);
        float a = SAXPY_A;
        cl_mem *bx = &v->x[b - v->first], *by = &v->y[b - v->first];
        size_t global = (len + SAXPY_LOCAL - 1) / SAXPY_LOCAL * SAXPY_LOCAL, local = SAXPY_LOCAL;
        CHECK(clEnqueueWriteBuffer(v->queue, *bx, CL_FALSE, 0, bytes, x + i, 0, NULL, NULL));
        CHECK(clEnqueueWriteBuffer(v->queue, *by, CL_FALSE, 0, bytes, y + i, 0, NULL, NULL));
        CHECK(clSetKernelArg(v->kernel, 0, sizeof len, &len));
        CHECK(clSetKernelArg(v->kernel, 1, sizeof a, &a));
        CHECK(clSetKernelArg(v->kernel, 2, sizeof *bx, bx));
        CHECK(clSetKernelArg(v->kernel, 3, sizeof *by, by));
        CHECK(clEnqueueNDRangeKernel(v->queue, v->kernel, 1, NULL, &global, &local, 0, NULL,
                                     NULL));
        CHECK(clEnqueueReadBuffer(v->queue, *by, CL_FALSE, 0, bytes, y + i, 0, NULL, NULL));
      }
      CHECK(clFlush(v->queue)); /* start this device before enqueueing for the next */
    }
    for (int d = 0; d < devices; ++d) CHECK(clFinish(dev[d].queue));
    app_record(times, rep, app_now() - start);
  }

  int ok = saxpy_check(cfg.n, y);
  app_report("saxpy", "native_opencl", devices, cfg.size, times, cfg.reps, ok);
  for (int d = 0; d < devices; ++d) {
    struct device *v = &dev[d];
    for (long b = 0; b < v->end - v->first; ++b) {
      CHECK(clReleaseMemObject(v->x[b]));
      CHECK(clReleaseMemObject(v->y[b]));
    }
    free(v->x);
    free(v->y);
    CHECK(clReleaseKernel(v->kernel));
    CHECK(clReleaseCommandQueue(v->queue));
    CHECK(clReleaseContext(v->context));
  }
  free(source);
  free(x);
  free(y);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
