/* annotated_opencl.c: Krist with pragmas, on OpenCL devices. Each block of reflections is a
 * task (the kernel of krist.cl, declared below) that reads all the atoms; the runtime spreads
 * the tasks over the devices, copies the atoms once to each device that needs them and the
 * results home at the taskwait. */
#include <nanort/nanort.h>

#include "app.h"
#include "krist.h"

#pragma omp target device(opencl) ndrange(1, n, 128) copy_deps
#pragma omp task in([4 * natoms]atoms, [3 * n]hkl) out([2 * n]f)
__kernel void krist(int natoms, __global const float *atoms, int n, __global const int *hkl,
                    __global float *f);

int main(int argc, char **argv) {
  krist_problem p = krist_setup(argc, argv, 0);
  int devices = nanort_device_count(NANORT_DEVICE_OPENCL);
  if (devices == 0) {
    printf("SKIP: no OpenCL device\n");
    return APP_SKIP;
  }
  size_t atom_bytes = (size_t)p.atoms * 4 * sizeof(float);
  size_t hkl_bytes = (size_t)p.reflections * 3 * sizeof(int);
  size_t f_bytes = (size_t)p.reflections * 2 * sizeof(float);
  float *atoms = malloc(atom_bytes), *f = malloc(f_bytes);
  int *hkl = malloc(hkl_bytes);
  double *times = malloc(p.reps * sizeof *times);
  krist_init(&p, atoms, hkl);
  for (int rep = -1; rep < p.reps; ++rep) { /* rep -1: the warm-up */
    memset(f, 0, f_bytes);
    double start = app_now();
    for (int first = 0; first < p.reflections; first += p.bs) {
      int n = p.reflections - first < p.bs ? p.reflections - first : p.bs;
      krist(p.atoms, atoms, n, hkl + 3 * (size_t)first, f + 2 * (size_t)first);
    }
    #pragma omp taskwait
    app_record(times, rep, app_now() - start);
  }
  int ok = krist_check(&p, atoms, hkl, f);
  app_report("krist", "annotated_opencl", devices, p.size, times, p.reps, ok);
  free(atoms);
  free(hkl);
  free(f);
  free(times);
  return ok ? APP_OK : APP_FAILED;
}
