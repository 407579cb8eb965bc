/* Blocked matmul on StarPU with the OpenCL kernel (matmul.cl): what a StarPU user writes for
 * the annotated versions' loop, as the peer to measure them against. The matrices are plain
 * malloc'd memory, each tile registered as a data handle; an OpenCL codelet on the same kernel
 * file, queued asynchronously on StarPU's command queue; one task per tile product; the dmda
 * scheduler (STARPU_SCHED chooses another). A repetition ends with every C tile acquired on the
 * host, as the annotated versions' taskwait brings C home. Unlike that taskwait, StarPU keeps
 * the copies of A and B on the devices from one repetition to the next (they do not change). */
#include <starpu.h>

#include "matmul.h"

static struct starpu_opencl_program program;

static void fail_opencl(const char *what, cl_int status) {
  fprintf(stderr, "error: %s failed with OpenCL error %d\n", what, (int)status);
  exit(APP_FAILED);
}

/* c += a * b on the device: buffers are the three tiles, the argument the tile order. */
static void tile_opencl(void *buffers[], void *arg) {
  int nb;
  starpu_codelet_unpack_args(arg, &nb);
  cl_mem tiles[3];
  for (int i = 0; i < 3; ++i) {
    if (STARPU_VECTOR_GET_OFFSET(buffers[i]) != 0) {
      fprintf(stderr, "error: a tile starts inside a StarPU buffer (offset %zu)\n",
              (size_t)STARPU_VECTOR_GET_OFFSET(buffers[i]));
      exit(APP_FAILED);
    }
    tiles[i] = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(buffers[i]);
  }
  int devid = starpu_worker_get_devid(starpu_worker_get_id());
  cl_kernel kernel;
  cl_command_queue queue;
  cl_int status = starpu_opencl_load_kernel(&kernel, &queue, &program, "matmul_tile", devid);
  if (status != CL_SUCCESS) fail_opencl("starpu_opencl_load_kernel", status);
  status = clSetKernelArg(kernel, 0, sizeof nb, &nb);
  for (int i = 0; i < 3; ++i) status |= clSetKernelArg(kernel, 1 + i, sizeof(cl_mem), &tiles[i]);
  if (status != CL_SUCCESS) fail_opencl("clSetKernelArg", status);
  size_t global[2] = {(size_t)nb / MATMUL_PER_THREAD, (size_t)nb / MATMUL_PER_THREAD};
  size_t local[2] = {MATMUL_THREADS, MATMUL_THREADS};
  status = clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL);
  if (status != CL_SUCCESS) fail_opencl("clEnqueueNDRangeKernel", status);
  starpu_opencl_release_kernel(kernel);
}

static struct starpu_perfmodel tile_model = {.type = STARPU_HISTORY_BASED,
                                             .symbol = "nanort_apps_matmul_tile"};
static struct starpu_codelet tile_codelet = {.opencl_funcs = {tile_opencl},
                                             .opencl_flags = {STARPU_OPENCL_ASYNC},
                                             .nbuffers = 3,
                                             .modes = {STARPU_R, STARPU_R, STARPU_RW},
                                             .model = &tile_model,
                                             .name = "matmul_tile"};

int main(int argc, char **argv) {
  struct matmul_config cfg = matmul_config(argc, argv, 0);
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = 0; /* the tile products run on the OpenCL devices only */
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
  char *source = app_read_kernel_file("matmul.cl", &length);
  if (!source || starpu_opencl_load_opencl_from_string(source, &program, NULL) != 0) {
    fprintf(stderr, "error: the OpenCL program matmul.cl could not be loaded\n");
    return APP_FAILED;
  }
  free(source);

  size_t matrix = cfg.n * cfg.n * sizeof(float);
  float *a = (float *)malloc(matrix), *b = (float *)malloc(matrix), *c = (float *)malloc(matrix);
  matmul_init(&cfg, a, b);
  long tiles = cfg.nt * cfg.nt;
  starpu_data_handle_t *ha = malloc(tiles * sizeof *ha), *hb = malloc(tiles * sizeof *hb),
                       *hc = malloc(tiles * sizeof *hc);
  for (long i = 0; i < cfg.nt; ++i)
    for (long j = 0; j < cfg.nt; ++j) {
      long t = i * cfg.nt + j, elements = cfg.nb * cfg.nb;
      starpu_vector_data_register(&ha[t], STARPU_MAIN_RAM,
                                  (uintptr_t)matmul_tile_at(&cfg, a, i, j), elements, sizeof(float));
      starpu_vector_data_register(&hb[t], STARPU_MAIN_RAM,
                                  (uintptr_t)matmul_tile_at(&cfg, b, i, j), elements, sizeof(float));
      starpu_vector_data_register(&hc[t], STARPU_MAIN_RAM,
                                  (uintptr_t)matmul_tile_at(&cfg, c, i, j), elements, sizeof(float));
    }

  int nb = (int)cfg.nb;
  double *times = (double *)malloc(cfg.reps * sizeof(double));
  for (int rep = -1; rep < cfg.reps; ++rep) { /* rep -1: the warm-up */
    /* C is cleared on the host: StarPU's device copies of it become stale. */
    for (long t = 0; t < tiles; ++t) starpu_data_acquire(hc[t], STARPU_W);
    matmul_clear(&cfg, c);
    for (long t = 0; t < tiles; ++t) starpu_data_release(hc[t]);
    double start = app_now();
    for (long i = 0; i < cfg.nt; ++i)
      for (long j = 0; j < cfg.nt; ++j)
        for (long k = 0; k < cfg.nt; ++k) {
          status = starpu_task_insert(&tile_codelet, STARPU_VALUE, &nb, sizeof nb, STARPU_R,
                                      ha[i * cfg.nt + k], STARPU_R, hb[k * cfg.nt + j], STARPU_RW,
                                      hc[i * cfg.nt + j], 0);
          if (status != 0) {
            fprintf(stderr, "error: starpu_task_insert failed (%d)\n", status);
            return APP_FAILED;
          }
        }
    starpu_task_wait_for_all();
    for (long t = 0; t < tiles; ++t) { /* C home */
      starpu_data_acquire(hc[t], STARPU_R);
      starpu_data_release(hc[t]);
    }
    app_record(times, rep, app_now() - start);
  }

  for (long t = 0; t < tiles; ++t) {
    starpu_data_unregister(ha[t]);
    starpu_data_unregister(hb[t]);
    starpu_data_unregister(hc[t]);
  }
  int ok = matmul_check(&cfg, a, b, c);
  app_report("matmul", "starpu_opencl", devices, cfg.size, times, cfg.reps, ok);
  starpu_opencl_unload_opencl(&program);
  starpu_shutdown();
  free(ha);
  free(hb);
  free(hc);
  free(a);
  free(b);
  free(c);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
