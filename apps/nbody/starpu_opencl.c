/* NBody on StarPU with the OpenCL kernel (nbody.cl): what a StarPU user writes for the annotated
 * versions' loop, as the peer to measure them against. The arrays are plain malloc'd memory.
 * Every task of a step reads all positions of the previous step, so each position array is one
 * data handle, with a partition plan into the blocks of bs bodies for the step that writes it:
 * each step switches one array to its blocks and the other back to a whole (asynchronous
 * partitioning, submitted like tasks). Velocities are only used block by block and are
 * registered so. An OpenCL codelet on the same kernel file, queued asynchronously on StarPU's
 * command queue; one task per block and step; the dmda scheduler (STARPU_SCHED chooses another).
 * A repetition ends with the last two steps acquired on the host, as the annotated versions'
 * taskwait brings them home. StarPU 1.3 makes each partition switch on the handle's home node,
 * so the positions go through host memory at every step. */
#include <starpu.h>

#include "nbody.h"

static struct starpu_opencl_program program;

static void fail_opencl(const char *what, cl_int status) {
  fprintf(stderr, "error: %s failed with OpenCL error %d\n", what, (int)status);
  exit(APP_FAILED);
}

/* The buffer to pass the kernel for a vector, whose arguments point at the vector's first
 * element. A block of a partitioned array may live inside the whole array's cl_mem, at an
 * offset: it then gets a sub-buffer of its own, which the caller releases (*sub; NULL where
 * none was made). Blocks start at multiples of NBODY_GROUP bodies, aligned for sub-buffers. */
static cl_mem kernel_buffer(void *vector, cl_mem *sub) {
  cl_mem buffer = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(vector);
  size_t offset = STARPU_VECTOR_GET_OFFSET(vector);
  *sub = NULL;
  if (offset == 0) return buffer;
  cl_buffer_region region = {offset,
                             STARPU_VECTOR_GET_NX(vector) * STARPU_VECTOR_GET_ELEMSIZE(vector)};
  cl_int status;
  *sub = clCreateSubBuffer(buffer, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
  if (status != CL_SUCCESS) fail_opencl("clCreateSubBuffer", status);
  return *sub;
}

/* One step for a block on the device: buffers are all positions of the previous step, the
 * block's velocities of that step, and the block's new positions and velocities; the argument
 * the block's first body. */
static void step_opencl(void *buffers[], void *arg) {
  int first;
  starpu_codelet_unpack_args(arg, &first);
  int n = (int)STARPU_VECTOR_GET_NX(buffers[0]), count = (int)STARPU_VECTOR_GET_NX(buffers[1]);
  float dt = NBODY_DT, eps2 = NBODY_EPS2;
  cl_mem mem[4], sub[4];
  for (int i = 0; i < 4; ++i) mem[i] = kernel_buffer(buffers[i], &sub[i]);
  int devid = starpu_worker_get_devid(starpu_worker_get_id());
  cl_kernel kernel;
  cl_command_queue queue;
  cl_int status = starpu_opencl_load_kernel(&kernel, &queue, &program, "nbody_step", devid);
  if (status != CL_SUCCESS) fail_opencl("starpu_opencl_load_kernel", status);
  status = clSetKernelArg(kernel, 0, sizeof n, &n);
  status |= clSetKernelArg(kernel, 1, sizeof first, &first);
  status |= clSetKernelArg(kernel, 2, sizeof count, &count);
  status |= clSetKernelArg(kernel, 3, sizeof dt, &dt);
  status |= clSetKernelArg(kernel, 4, sizeof eps2, &eps2);
  for (int i = 0; i < 4; ++i) status |= clSetKernelArg(kernel, 5 + i, sizeof(cl_mem), &mem[i]);
  if (status != CL_SUCCESS) fail_opencl("clSetKernelArg", status);
  size_t global[2] = {(size_t)(count + NBODY_GROUP - 1) / NBODY_GROUP * NBODY_GROUP, NBODY_SPLIT};
  size_t local[2] = {NBODY_GROUP, NBODY_SPLIT};
  status = clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL);
  if (status != CL_SUCCESS) fail_opencl("clEnqueueNDRangeKernel", status);
  /* OpenCL keeps a released sub-buffer until the queued kernel is done with it. */
  for (int i = 0; i < 4; ++i)
    if (sub[i]) clReleaseMemObject(sub[i]);
  starpu_opencl_release_kernel(kernel);
}

static struct starpu_perfmodel step_model = {.type = STARPU_HISTORY_BASED,
                                             .symbol = "nanort_apps_nbody_step"};
static struct starpu_codelet step_codelet = {.opencl_funcs = {step_opencl},
                                             .opencl_flags = {STARPU_OPENCL_ASYNC},
                                             .nbuffers = 4,
                                             .modes = {STARPU_R, STARPU_R, STARPU_W, STARPU_W},
                                             .model = &step_model,
                                             .name = "nbody_step"};

int main(int argc, char **argv) {
  struct nbody_config c = nbody_config(argc, argv, 0);
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = 0; /* the steps run on the OpenCL devices only */
  conf.ncuda = 0;
  if (!getenv("STARPU_SCHED")) conf.sched_policy_name = "dmda";
  int status = starpu_init(&conf);
  if (status == -ENODEV) {
    printf("SKIP: StarPU found no device\n");
    return APP_SKIP;
  }
  if (status != 0) {
    fprintf(stderr, "error: starpu_init failed (%d)\n", status);
    return APP_FAILED;
  }
  int devices = (int)starpu_opencl_worker_get_count();
  if (devices == 0) {
    printf("SKIP: StarPU has no OpenCL device (on a CPU-only OpenCL platform, "
           "STARPU_OPENCL_ON_CPUS=1 gives it one)\n");
    starpu_shutdown();
    return APP_SKIP;
  }
  size_t length = 0;
  char *source = app_read_kernel_file("nbody.cl", &length);
  if (!source || starpu_opencl_load_opencl_from_string(source, &program, NULL) != 0) {
    fprintf(stderr, "error: the OpenCL program nbody.cl could not be loaded\n");
    return APP_FAILED;
  }
  free(source);

  /* The positions and velocities of two steps (step s reads pos[s % 2], writes the other). */
  size_t bytes = c.n * sizeof(nbody_vec4);
  nbody_vec4 *pos[2] = {malloc(bytes), malloc(bytes)}, *vel[2] = {malloc(bytes), malloc(bytes)};
  unsigned blocks = (unsigned)((c.n + c.bs - 1) / c.bs);
  uint32_t *lengths = malloc(blocks * sizeof *lengths); /* bs bodies, the last block fewer */
  for (unsigned b = 0; b < blocks; ++b) lengths[b] = (uint32_t)nbody_length(&c, b * c.bs);
  /* A list filter rather than an even split (starpu_vector_filter_block), so that the blocks
   * are those of bs bodies whatever n is. */
  struct starpu_data_filter into_blocks = {.filter_func = starpu_vector_filter_list,
                                           .nchildren = blocks,
                                           .filter_arg_ptr = lengths};
  starpu_data_handle_t hpos[2], *hblock[2], *hvel[2];
  for (int i = 0; i < 2; ++i) {
    starpu_vector_data_register(&hpos[i], STARPU_MAIN_RAM, (uintptr_t)pos[i], (uint32_t)c.n,
                                sizeof(nbody_vec4));
    hblock[i] = malloc(blocks * sizeof *hblock[i]);
    starpu_data_partition_plan(hpos[i], &into_blocks, hblock[i]);
    hvel[i] = malloc(blocks * sizeof *hvel[i]);
    for (unsigned b = 0; b < blocks; ++b)
      starpu_vector_data_register(&hvel[i][b], STARPU_MAIN_RAM, (uintptr_t)(vel[i] + b * c.bs),
                                  lengths[b], sizeof(nbody_vec4));
  }

  double *times = malloc(c.reps * sizeof(double));
  for (int rep = -1; rep < c.reps; ++rep) { /* rep -1: the warm-up */
    /* The bodies are written on the host: StarPU's device copies of them become stale. */
    starpu_data_acquire(hpos[0], STARPU_W);
    for (unsigned b = 0; b < blocks; ++b) starpu_data_acquire(hvel[0][b], STARPU_W);
    nbody_init(c.n, pos[0], vel[0]);
    starpu_data_release(hpos[0]);
    for (unsigned b = 0; b < blocks; ++b) starpu_data_release(hvel[0][b]);
    double start = app_now();
    /* Both position arrays are whole here; a step makes the array it writes blocks, and the
     * next step makes it whole again to read it. */
    for (int s = 0; s < c.steps; ++s) {
      int cur = s % 2, nxt = 1 - cur;
      if (s > 0) starpu_data_unpartition_submit(hpos[cur], blocks, hblock[cur], STARPU_MAIN_RAM);
      starpu_data_partition_submit(hpos[nxt], blocks, hblock[nxt]);
      for (unsigned b = 0; b < blocks; ++b) {
        int first = (int)(b * c.bs);
        status = starpu_task_insert(&step_codelet, STARPU_VALUE, &first, sizeof first, STARPU_R,
                                    hpos[cur], STARPU_R, hvel[cur][b], STARPU_W, hblock[nxt][b],
                                    STARPU_W, hvel[nxt][b], 0);
        if (status != 0) {
          fprintf(stderr, "error: starpu_task_insert failed (%d)\n", status);
          return APP_FAILED;
        }
      }
    }
    /* The last step's positions whole again, as at the start (whatever the number of steps). */
    starpu_data_unpartition_submit(hpos[c.steps % 2], blocks, hblock[c.steps % 2], STARPU_MAIN_RAM);
    starpu_task_wait_for_all();
    for (int i = 0; i < 2; ++i) { /* the last two steps home, for the check */
      starpu_data_acquire(hpos[i], STARPU_R);
      starpu_data_release(hpos[i]);
      for (unsigned b = 0; b < blocks; ++b) {
        starpu_data_acquire(hvel[i][b], STARPU_R);
        starpu_data_release(hvel[i][b]);
      }
    }
    app_record(times, rep, app_now() - start);
  }

  for (int i = 0; i < 2; ++i) {
    starpu_data_partition_clean(hpos[i], blocks, hblock[i]);
    starpu_data_unregister(hpos[i]);
    for (unsigned b = 0; b < blocks; ++b) starpu_data_unregister(hvel[i][b]);
  }
  int ok = nbody_check(&c, pos, vel);
  app_report("nbody", "starpu_opencl", devices, c.size, times, c.reps, ok);
  starpu_opencl_unload_opencl(&program);
  starpu_shutdown();
  for (int i = 0; i < 2; ++i) {
    free(hblock[i]);
    free(hvel[i]);
    free(pos[i]);
    free(vel[i]);
  }
  free(lengths);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
