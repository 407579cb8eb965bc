/* NBody, native OpenCL version: the bodies are split evenly (in blocks of bs) across the devices;
 * each device holds all positions of two steps and the velocities of its own bodies, and runs
 * one kernel per step over its bodies. After each step the devices exchange their new positions
 * through host memory: each reads its part back, then writes the others' parts (devices of
 * different platforms share no context, so the host is where they meet). Every device has a
 * context and an in-order queue of its own; copies are non-blocking. */
#include <CL/cl.h>

#include "nbody.h"

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cl_int e_ = (call);                                                                    \
    if (e_ != CL_SUCCESS) {                                                                \
      fprintf(stderr, "error: %s: OpenCL error %d\n", #call, e_);                          \
      exit(APP_FAILED);                                                                    \
    }                                                                                      \
  } while (0)

/* For the calls that return an object and give the error through their last argument. */
#define CHECK_ERR(what)                                                                    \
  do {                                                                                     \
    if (err != CL_SUCCESS) {                                                               \
      fprintf(stderr, "error: %s: OpenCL error %d\n", what, err);                          \
      exit(APP_FAILED);                                                                    \
    }                                                                                      \
  } while (0)

enum { MAX_DEVICES = 16 };

struct device {
  cl_device_id id;
  cl_context context;
  cl_command_queue queue;
  cl_kernel kernel;
  long first, end; /* its bodies [first, end) */
  cl_mem pos[2];   /* all positions, step s in pos[s % 2] */
  cl_mem own[2];   /* sub-buffers: its part of pos[0] and pos[1] */
  cl_mem vel[2];   /* the velocities of its bodies */
};

/* The GPUs of all platforms, or their CPU devices where there is no GPU. */
static int find_devices(cl_device_id *ids) {
  cl_platform_id platforms[8];
  cl_uint np = 0;
  if (clGetPlatformIDs(8, platforms, &np) != CL_SUCCESS) return 0;
  int count = 0;
  for (int pass = 0; pass < 2 && count == 0; ++pass) {
    cl_device_type type = pass == 0 ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU;
    for (cl_uint p = 0; p < np && count < MAX_DEVICES; ++p) {
      cl_uint nd = 0;
      if (clGetDeviceIDs(platforms[p], type, MAX_DEVICES - count, ids + count, &nd) == CL_SUCCESS)
        count += (int)nd;
    }
  }
  return count;
}

int main(int argc, char **argv) {
  struct nbody_config c = nbody_config(argc, argv, 1);
  cl_device_id ids[MAX_DEVICES];
  int count = find_devices(ids);
  if (count == 0) {
    printf("SKIP: no OpenCL device\n");
    return APP_SKIP;
  }
  long blocks = (c.n + c.bs - 1) / c.bs;
  int devices = c.gpus > 0 && c.gpus < count ? c.gpus : count;
  if (devices > blocks) devices = (int)blocks;

  size_t length;
  char *source = app_read_kernel_file("nbody.cl", &length);
  if (!source) return APP_FAILED;
  size_t bytes = c.n * sizeof(nbody_vec4);
  nbody_vec4 *pos[2] = {malloc(bytes), malloc(bytes)}, *vel[2] = {malloc(bytes), malloc(bytes)};
  struct device d[MAX_DEVICES];
  cl_int err;
  for (int k = 0; k < devices; ++k) {
    d[k].id = ids[k];
    d[k].first = blocks * k / devices * c.bs;
    d[k].end = blocks * (k + 1) / devices * c.bs;
    if (d[k].end > c.n) d[k].end = c.n;
    d[k].context = clCreateContext(NULL, 1, &ids[k], NULL, NULL, &err);
    CHECK_ERR("clCreateContext");
    d[k].queue = clCreateCommandQueue(d[k].context, ids[k], 0, &err);
    CHECK_ERR("clCreateCommandQueue");
    cl_program program =
        clCreateProgramWithSource(d[k].context, 1, (const char **)&source, &length, &err);
    CHECK_ERR("clCreateProgramWithSource");
    if (clBuildProgram(program, 1, &ids[k], "", NULL, NULL) != CL_SUCCESS) {
      size_t log_size = 0;
      clGetProgramBuildInfo(program, ids[k], CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
      char *log = malloc(log_size + 1);
      clGetProgramBuildInfo(program, ids[k], CL_PROGRAM_BUILD_LOG, log_size, log, NULL);
      log[log_size] = '\0';
      fprintf(stderr, "error: clBuildProgram of nbody.cl failed:\n%s\n", log);
      return APP_FAILED;
    }
    d[k].kernel = clCreateKernel(program, "nbody_step", &err);
    CHECK_ERR("clCreateKernel");
    CHECK(clReleaseProgram(program));
    size_t own = (d[k].end - d[k].first) * sizeof(nbody_vec4);
    cl_buffer_region region = {d[k].first * sizeof(nbody_vec4), own};
    for (int b = 0; b < 2; ++b) {
      d[k].pos[b] = clCreateBuffer(d[k].context, CL_MEM_READ_WRITE, bytes, NULL, &err);
      CHECK_ERR("clCreateBuffer");
      d[k].own[b] = clCreateSubBuffer(d[k].pos[b], CL_MEM_READ_WRITE,
                                      CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
      CHECK_ERR("clCreateSubBuffer");
      d[k].vel[b] = clCreateBuffer(d[k].context, CL_MEM_READ_WRITE, own, NULL, &err);
      CHECK_ERR("clCreateBuffer");
    }
  }

  const int n = (int)c.n;
  const float dt = NBODY_DT, eps2 = NBODY_EPS2;
  double *times = malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    nbody_init(c.n, pos[0], vel[0]);
    double start = app_now();
    for (int k = 0; k < devices; ++k) {
      size_t own = (d[k].end - d[k].first) * sizeof(nbody_vec4);
      CHECK(clEnqueueWriteBuffer(d[k].queue, d[k].pos[0], CL_FALSE, 0, bytes, pos[0], 0, NULL,
                                 NULL));
      CHECK(clEnqueueWriteBuffer(d[k].queue, d[k].vel[0], CL_FALSE, 0, own, vel[0] + d[k].first, 0,
                                 NULL, NULL));
    }
    for (int s = 0; s < c.steps; ++s) {
      int cur = s % 2, nxt = 1 - cur;
      int exchange = devices > 1 && s + 1 < c.steps;
      for (int k = 0; k < devices; ++k) {
        int first = (int)d[k].first, bodies = (int)(d[k].end - d[k].first);
        cl_kernel kn = d[k].kernel;
        CHECK(clSetKernelArg(kn, 0, sizeof n, &n));
        CHECK(clSetKernelArg(kn, 1, sizeof first, &first));
        CHECK(clSetKernelArg(kn, 2, sizeof bodies, &bodies));
        CHECK(clSetKernelArg(kn, 3, sizeof dt, &dt));
        CHECK(clSetKernelArg(kn, 4, sizeof eps2, &eps2));
        CHECK(clSetKernelArg(kn, 5, sizeof(cl_mem), &d[k].pos[cur]));
        CHECK(clSetKernelArg(kn, 6, sizeof(cl_mem), &d[k].vel[cur]));
        CHECK(clSetKernelArg(kn, 7, sizeof(cl_mem), &d[k].own[nxt]));
        CHECK(clSetKernelArg(kn, 8, sizeof(cl_mem), &d[k].vel[nxt]));
        size_t global[2] = {(bodies + NBODY_GROUP - 1) / NBODY_GROUP * NBODY_GROUP, NBODY_SPLIT};
        size_t local[2] = {NBODY_GROUP, NBODY_SPLIT};
        CHECK(clEnqueueNDRangeKernel(d[k].queue, kn, 2, NULL, global, local, 0, NULL, NULL));
        if (exchange) /* its new positions to the host, for the other devices */
          CHECK(clEnqueueReadBuffer(d[k].queue, d[k].own[nxt], CL_FALSE, 0,
                                    bodies * sizeof(nbody_vec4), pos[nxt] + first, 0, NULL, NULL));
        CHECK(clFlush(d[k].queue));
      }
      if (!exchange) continue;
      for (int k = 0; k < devices; ++k) CHECK(clFinish(d[k].queue));
      for (int k = 0; k < devices; ++k) /* the others' new positions to each device */
        for (int o = 0; o < devices; ++o)
          if (o != k)
            CHECK(clEnqueueWriteBuffer(d[k].queue, d[k].pos[nxt], CL_FALSE,
                                       d[o].first * sizeof(nbody_vec4),
                                       (d[o].end - d[o].first) * sizeof(nbody_vec4),
                                       pos[nxt] + d[o].first, 0, NULL, NULL));
    }
    /* The results: the last step and the one before (the check needs both). */
    for (int k = 0; k < devices; ++k) {
      size_t own = (d[k].end - d[k].first) * sizeof(nbody_vec4);
      for (int s = c.steps; s >= c.steps - 1 && s >= 1; --s) {
        CHECK(clEnqueueReadBuffer(d[k].queue, d[k].own[s % 2], CL_FALSE, 0, own,
                                  pos[s % 2] + d[k].first, 0, NULL, NULL));
        CHECK(clEnqueueReadBuffer(d[k].queue, d[k].vel[s % 2], CL_FALSE, 0, own,
                                  vel[s % 2] + d[k].first, 0, NULL, NULL));
      }
    }
    for (int k = 0; k < devices; ++k) CHECK(clFinish(d[k].queue));
    app_record(times, rep, app_now() - start);
  }

  int ok = nbody_check(&c, pos, vel);
  app_report("nbody", "native_opencl", devices, c.size, times, c.reps, ok);
  for (int k = 0; k < devices; ++k) {
    for (int b = 0; b < 2; ++b) {
      CHECK(clReleaseMemObject(d[k].own[b]));
      CHECK(clReleaseMemObject(d[k].pos[b]));
      CHECK(clReleaseMemObject(d[k].vel[b]));
    }
    CHECK(clReleaseKernel(d[k].kernel));
    CHECK(clReleaseCommandQueue(d[k].queue));
    CHECK(clReleaseContext(d[k].context));
  }
  for (int b = 0; b < 2; ++b) {
    free(pos[b]);
    free(vel[b]);
  }
  free(source);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
