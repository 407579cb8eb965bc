/* Blocked matmul, native OpenCL version: the tile rows of C are split evenly across the devices
 * (the GPUs of every platform, else the CPU devices); each device holds its tile rows of A and
 * C and all of B, a buffer per tile. Three in-order queues per device: copies in, tile kernels,
 * copies out, ordered by events, so that each C tile's inputs move while the previous tile
 * computes and each finished C tile moves home while the next computes. B arrives column by
 * column during the first tile row. */
#include <CL/cl.h>

#include "matmul.h"

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
  cl_command_queue in, run, out; /* copies in, kernels, copies out */
  cl_kernel kernel;
  long first, end;   /* its tile rows of C [first, end) */
  cl_mem *a, *b, *c; /* a buffer per tile: A and C its tile rows, B all of it */
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

/* count buffers of one tile each. */
static cl_mem *create_tiles(cl_context context, long count, size_t tile, cl_mem_flags flags) {
  cl_mem *buffers = (cl_mem *)malloc(count * sizeof(cl_mem));
  for (long t = 0; t < count; ++t) {
    cl_int e;
    buffers[t] = clCreateBuffer(context, flags, tile, NULL, &e);
    check(e, "clCreateBuffer");
  }
  return buffers;
}

static void release_tiles(cl_mem *buffers, long count) {
  for (long t = 0; t < count; ++t) CHECK(clReleaseMemObject(buffers[t]));
  free(buffers);
}

int main(int argc, char **argv) {
  struct matmul_config cfg = matmul_config(argc, argv, 1);
  cl_device_id ids[MAX_DEVICES];
  int count = find_devices(ids, MAX_DEVICES);
  if (count == 0) {
    printf("SKIP: no OpenCL device\n");
    return APP_SKIP;
  }
  int devices = cfg.gpus > 0 && cfg.gpus < count ? cfg.gpus : count;
  if (devices > cfg.nt) devices = (int)cfg.nt;
  size_t source_length;
  char *source = app_read_kernel_file("matmul.cl", &source_length);
  if (!source) return APP_FAILED;
  size_t tile = cfg.nb * cfg.nb * sizeof(float), matrix = cfg.nt * cfg.nt * tile;

  float *a = (float *)malloc(matrix), *b = (float *)malloc(matrix), *c = (float *)malloc(matrix);
  matmul_init(&cfg, a, b);
  struct device dev[MAX_DEVICES];
  for (int d = 0; d < devices; ++d) {
    struct device *v = &dev[d];
    cl_int e;
    v->context = clCreateContext(NULL, 1, &ids[d], NULL, NULL, &e);
    check(e, "clCreateContext");
    cl_command_queue *queues[3] = {&v->in, &v->run, &v->out};
    for (int q = 0; q < 3; ++q) {
      *queues[q] = clCreateCommandQueue(v->context, ids[d], 0, &e);
      check(e, "clCreateCommandQueue");
    }
    v->kernel = build_kernel(v->context, ids[d], source, source_length, "matmul_tile");
    v->first = cfg.nt * d / devices;
    v->end = cfg.nt * (d + 1) / devices;
    long rows = (v->end - v->first) * cfg.nt;
    v->a = create_tiles(v->context, rows, tile, CL_MEM_READ_ONLY);
    v->b = create_tiles(v->context, cfg.nt * cfg.nt, tile, CL_MEM_READ_ONLY);
    v->c = create_tiles(v->context, rows, tile, CL_MEM_READ_WRITE);
  }
  int nb = (int)cfg.nb;
  size_t local[2] = {MATMUL_THREADS, MATMUL_THREADS};
  size_t global[2] = {cfg.nb / MATMUL_PER_THREAD, cfg.nb / MATMUL_PER_THREAD};

  double *times = (double *)malloc(cfg.reps * sizeof(double));
  for (int rep = -1; rep < cfg.reps; ++rep) { /* rep -1: the warm-up */
    matmul_clear(&cfg, c);
    double start = app_now();
    for (int d = 0; d < devices; ++d) {
      struct device *v = &dev[d];
      for (long i = v->first; i < v->end; ++i)
        for (long j = 0; j < cfg.nt; ++j) {
          /* The device's tiles of A and C: tile rows first to end. */
          cl_mem *da = &v->a[(i - v->first) * cfg.nt], *dc = &v->c[(i - v->first) * cfg.nt + j];
          /* What C[i][j]'s products need that is not there yet: the C tile, A's tile row i
           * (with the row's first tile), B's tile column j (during the first tile row). */
          CHECK(clEnqueueWriteBuffer(v->in, *dc, CL_FALSE, 0, tile, matmul_tile_at(&cfg, c, i, j),
                                     0, NULL, NULL));
          for (long k = 0; k < cfg.nt; ++k) {
            if (j == 0)
              CHECK(clEnqueueWriteBuffer(v->in, da[k], CL_FALSE, 0, tile,
                                         matmul_tile_at(&cfg, a, i, k), 0, NULL, NULL));
            if (i == v->first)
              CHECK(clEnqueueWriteBuffer(v->in, v->b[k * cfg.nt + j], CL_FALSE, 0, tile,
                                         matmul_tile_at(&cfg, b, k, j), 0, NULL, NULL));
          }
          cl_event copied, computed;
          CHECK(clEnqueueMarkerWithWaitList(v->in, 0, NULL, &copied));
          CHECK(clFlush(v->in)); /* another queue waits for it */
          for (long k = 0; k < cfg.nt; ++k) {
            CHECK(clSetKernelArg(v->kernel, 0, sizeof nb, &nb));
            CHECK(clSetKernelArg(v->kernel, 1, sizeof(cl_mem), &da[k]));
            CHECK(clSetKernelArg(v->kernel, 2, sizeof(cl_mem), &v->b[k * cfg.nt + j]));
            CHECK(clSetKernelArg(v->kernel, 3, sizeof(cl_mem), dc));
            CHECK(clEnqueueNDRangeKernel(v->run, v->kernel, 2, NULL, global, local, k == 0,
                                         k == 0 ? &copied : NULL, NULL));
          }
          CHECK(clEnqueueMarkerWithWaitList(v->run, 0, NULL, &computed));
          CHECK(clFlush(v->run));
          CHECK(clEnqueueReadBuffer(v->out, *dc, CL_FALSE, 0, tile, matmul_tile_at(&cfg, c, i, j),
                                    1, &computed, NULL));
          CHECK(clReleaseEvent(copied));
          CHECK(clReleaseEvent(computed));
        }
      CHECK(clFlush(v->out)); /* start this device before enqueueing for the next */
    }
    /* The last copies out wait for every kernel, which waited for the copies in. */
    for (int d = 0; d < devices; ++d) CHECK(clFinish(dev[d].out));
    app_record(times, rep, app_now() - start);
  }

  int ok = matmul_check(&cfg, a, b, c);
  app_report("matmul", "native_opencl", devices, cfg.size, times, cfg.reps, ok);
  for (int d = 0; d < devices; ++d) {
    struct device *v = &dev[d];
    long rows = (v->end - v->first) * cfg.nt;
    release_tiles(v->a, rows);
    release_tiles(v->b, cfg.nt * cfg.nt);
    release_tiles(v->c, rows);
    CHECK(clReleaseKernel(v->kernel));
    CHECK(clReleaseCommandQueue(v->in));
    CHECK(clReleaseCommandQueue(v->run));
    CHECK(clReleaseCommandQueue(v->out));
    CHECK(clReleaseContext(v->context));
  }
  free(source);
  free(a);
  free(b);
  free(c);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
