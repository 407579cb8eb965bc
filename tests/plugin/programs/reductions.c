/* Task reductions written with pragmas (OmpSs-2 reduction and weakreduction, OmpSs-1
 * '#pragma omp task reduction', OpenMP taskgroup task_reduction with in_reduction), each
 * result compared with the sequential computation of the same data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h" /* tests/support */

enum { N = 100000, CHUNK = 1000, BINS = 16 };

static long global_count;

/* A user-defined reduction merging structures: the smallest and largest value seen. */
struct span { int low, high; };
static struct span widen(struct span a, struct span b) {
  struct span r = {a.low < b.low ? a.low : b.low, a.high > b.high ? a.high : b.high};
  return r;
}
#pragma omp declare reduction(merge : struct span : omp_out = widen(omp_out, omp_in)) \
    initializer(omp_priv = {2147483647, -2147483647 - 1})

/* A function task that adds through a pointer, as OmpSs-2 programs write it. */
#pragma oss task reduction(+: [1]p)
void bump(int *p) { (*p)++; }

/* A task that only creates the children that reduce. */
#pragma oss task weakreduction(+: [10]array)
void bump_all(int *array) {
  for (int i = 0; i < 10; ++i)
    bump(&array[i]);
}

/* The body works on its copy, never on the original (which only the combination writes):
 * the original's value is larger than every value the copies can hold. */
#pragma oss task reduction(max: [1]best) in([1]saw)
void peek(int *best, int value, int *saw) {
  if (*best == 1000000000) {
    #pragma omp atomic
    (*saw)++;
  }
  if (value > *best) *best = value;
}

/* Sum of a section inside a function that returns once its tasks are done. */
static long sum_section(const int *v, int first, int n) {
  long sum = 0;
  for (int c = first; c < first + n; c += CHUNK) {
    int len = c + CHUNK <= first + n ? CHUNK : first + n - c;
    #pragma oss task reduction(+: sum) in(v[c;len]) firstprivate(c, len)
    for (int i = c; i < c + len; ++i)
      sum += v[i];
  }
  #pragma oss taskwait
  return sum;
}

int main(void) {
  int *v = malloc(N * sizeof(int));
  unsigned seed = 12345;
  for (int i = 0; i < N; ++i) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (int)(seed >> 16) % 1000 - 300;
  }

  /* The sequential results. */
  long s_sum = 0, s_hist[BINS] = {0};
  int s_lo = v[0], s_hi = v[0];
  double s_prod = 1.0;
  unsigned s_xor = 0, s_or = 0, s_and = ~0u;
  for (int i = 0; i < N; ++i) {
    s_sum += v[i];
    s_hist[(v[i] + 300) % BINS]++;
    if (v[i] < s_lo) s_lo = v[i];
    if (v[i] > s_hi) s_hi = v[i];
    s_xor ^= (unsigned)v[i];
    s_or |= (unsigned)v[i] & 0xff;
    s_and &= (unsigned)v[i] | 0xff00;
  }
  for (int i = 0; i < 20; ++i) s_prod *= 1.0 + (double)(v[i] % 7) / 100.0;

  /* Sum of an array with many tasks, then a task that reads the result. */
  long sum = 0, seen = -1;
  for (int c = 0; c < N; c += CHUNK) {
    #pragma oss task reduction(+: sum) in(v[c;CHUNK])
    for (int i = c; i < c + CHUNK; ++i)
      sum += v[i];
  }
  #pragma oss task in(sum) out(seen)
  seen = sum;
  #pragma oss taskwait
  CHECK(sum == s_sum, "sum %ld, expected %ld", sum, s_sum);
  CHECK(seen == s_sum, "the reader saw %ld, expected %ld", seen, s_sum);

  /* Histogram over a section of a larger array, with a writer before and a reader after. */
  long storage[BINS + 8], copy[BINS];
  for (int b = 0; b < BINS + 8; ++b) storage[b] = -7;
  #pragma omp task out(storage[4;BINS])
  for (int b = 4; b < 4 + BINS; ++b) storage[b] = 0;
  for (int c = 0; c < N; c += CHUNK) {
    #pragma omp task reduction(+: storage[4:4 + BINS - 1]) in(v[c;CHUNK])
    for (int i = c; i < c + CHUNK; ++i)
      storage[4 + (v[i] + 300) % BINS]++;
  }
  #pragma omp task in(storage[4;BINS]) out(copy)
  memcpy(copy, storage + 4, sizeof copy);
  #pragma omp taskwait
  for (int b = 0; b < BINS; ++b)
    CHECK(copy[b] == s_hist[b], "bin %d: %ld, expected %ld", b, copy[b], s_hist[b]);
  CHECK(storage[3] == -7 && storage[4 + BINS] == -7, "the histogram wrote outside its section");

  /* min and max search; bitwise and logical operators. */
  int lo = v[0], hi = v[0], all_small = 1, any_big = 0;
  unsigned x = 0, o = 0, a = ~0u;
  for (int c = 0; c < N; c += CHUNK) {
    #pragma oss task reduction(min: lo) reduction(max: hi) in(v[c;CHUNK])
    for (int i = c; i < c + CHUNK; ++i) {
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
    #pragma omp task reduction(^: x) reduction(|: o) reduction(&: a) firstprivate(c)
    for (int i = c; i < c + CHUNK; ++i) {
      x ^= (unsigned)v[i];
      o |= (unsigned)v[i] & 0xff;
      a &= (unsigned)v[i] | 0xff00;
    }
    #pragma omp task reduction(&&: all_small) reduction(||: any_big)
    for (int i = c; i < c + CHUNK; ++i) {
      all_small = all_small && v[i] < 700;
      any_big = any_big || v[i] > 690;
    }
  }
  /* A task that takes part without using the variable (its copy starts at the identity);
   * pragmas in the branches of an #ifdef, as programs for two runtimes write them. */
  #pragma omp task reduction(min: lo) firstprivate(v)
  {
    (void)v;
  }
  for (int c = 0; c < N; c += CHUNK) {
#ifdef NANORT_TEST_UNDEFINED
    #pragma oss task weakreduction(max: hi) in(v[c;CHUNK])
#else
    #pragma oss task reduction(max: hi) in(v[c;CHUNK])
#endif
    for (int i = c; i < c + CHUNK; ++i)
      if (v[i] > hi) hi = v[i];
  }
  #pragma omp taskwait
  CHECK(lo == s_lo && hi == s_hi, "min %d max %d, expected %d %d", lo, hi, s_lo, s_hi);
  CHECK(x == s_xor && o == s_or && a == s_and, "xor/or/and %x %x %x, expected %x %x %x", x, o,
        a, s_xor, s_or, s_and);
  CHECK(all_small == (s_hi < 700) && any_big == (s_hi > 690), "&& %d || %d", all_small, any_big);

  /* Product of doubles, and '-' (reduced as +). */
  double prod = 1.0;
  long minus = 0;
  for (int i = 0; i < 20; ++i) {
    #pragma omp task reduction(*: prod) reduction(-: minus)
    {
      prod *= 1.0 + (double)(v[i] % 7) / 100.0;
      minus -= v[i];
    }
  }
  #pragma omp taskwait
  long s_minus = 0;
  for (int i = 0; i < 20; ++i) s_minus -= v[i];
  CHECK(prod > s_prod * (1 - 1e-12) && prod < s_prod * (1 + 1e-12), "product %g, expected %g",
        prod, s_prod);
  CHECK(minus == s_minus, "minus %ld, expected %ld", minus, s_minus);

  /* The copies, not the original, in inline and function tasks. */
  int best = 1000000000, saw = 0;
  for (int c = 0; c < N; c += CHUNK) {
    #pragma oss task reduction(max: best) firstprivate(c) shared(saw)
    {
      if (best == 1000000000) {
        #pragma omp atomic
        saw++;
      }
      for (int i = c; i < c + CHUNK; ++i)
        if (v[i] > best) best = v[i];
    }
    peek(&best, v[c], &saw);
  }
  #pragma oss taskwait
  CHECK(best == 1000000000 && saw == 0, "max %d (expected the original), %d tasks saw the original",
        best, saw);

  /* A variable at file scope; tasks in a function that returns. */
  for (int c = 0; c < N; c += CHUNK) {
    #pragma oss task reduction(+: global_count) firstprivate(c)
    for (int i = c; i < c + CHUNK; ++i)
      global_count += v[i] > 0;
  }
  long half = sum_section(v, N / 2, N / 2 - 17);
  #pragma oss taskwait
  long s_pos = 0, s_half = 0;
  for (int i = 0; i < N; ++i) s_pos += v[i] > 0;
  for (int i = N / 2; i < N - 17; ++i) s_half += v[i];
  CHECK(global_count == s_pos, "global %ld, expected %ld", global_count, s_pos);
  CHECK(half == s_half, "section sum %ld, expected %ld", half, s_half);

  /* Nested tasks: a weakreduction parent whose children reduce; function tasks. */
  long total = 5;
  for (int c = 0; c < N; c += 10 * CHUNK) {
    #pragma oss task weakreduction(+: total) firstprivate(c)
    for (int k = c; k < c + 10 * CHUNK; k += CHUNK) {
      #pragma oss task reduction(+: total) firstprivate(k)
      for (int i = k; i < k + CHUNK; ++i)
        total += v[i];
    }
  }
  int counts[10] = {0};
  for (int r = 0; r < 3; ++r)
    bump_all(counts);
  #pragma oss taskwait
  CHECK(total == s_sum + 5, "nested total %ld, expected %ld", total, s_sum + 5);
  for (int i = 0; i < 10; ++i)
    CHECK(counts[i] == 3, "counts[%d] = %d, expected 3", i, counts[i]);

  /* final(1): the children run at once, on the parent's copy. Shaped pointer [n]w. */
  int n = 8;
  int *w = calloc(n, sizeof(int));
  for (int r = 0; r < 4; ++r) {
    #pragma omp task reduction(+: [n]w) final(1) firstprivate(r)
    {
      for (int e = 0; e < n; ++e) {
        #pragma omp task reduction(+: [n]w) firstprivate(e)
        w[e] += e + r;
      }
    }
  }
  #pragma omp taskwait
  for (int i = 0; i < n; ++i)
    CHECK(w[i] == 4 * i + 6, "w[%d] = %d, expected %d", i, w[i], 4 * i + 6);

  /* declare reduction on a structure. */
  struct span range = {0, 0};
  for (int c = 0; c < N; c += CHUNK) {
    #pragma oss task reduction(merge: range) in(v[c;CHUNK])
    for (int i = c; i < c + CHUNK; ++i) {
      struct span one = {v[i], v[i]};
      range = widen(range, one);
    }
  }
  #pragma oss taskwait
  CHECK(range.low == (s_lo < 0 ? s_lo : 0) && range.high == (s_hi > 0 ? s_hi : 0),
        "merged span [%d, %d], expected [%d, %d]", range.low, range.high, s_lo < 0 ? s_lo : 0,
        s_hi > 0 ? s_hi : 0);

  /* OpenMP taskgroup task_reduction with in_reduction tasks in a loop and in nested tasks. */
  long tg = 0;
  #pragma omp taskgroup task_reduction(+: tg)
  {
    for (int c = 0; c < N; c += CHUNK) {
      #pragma omp task in_reduction(+: tg) firstprivate(c)
      for (int i = c; i < c + CHUNK; ++i)
        tg += v[i];
    }
    #pragma omp task shared(tg)
    {
      for (int q = 0; q < 4; ++q) {
        #pragma omp task in_reduction(+: tg) firstprivate(q)
        tg += 1000 * q;
      }
    }
  }
  CHECK(tg == s_sum + 6000, "taskgroup %ld, expected %ld", tg, s_sum + 6000);

  /* A plain taskgroup waits for its tasks (and their children). */
  int done[4] = {0};
  #pragma omp taskgroup
  for (int k = 0; k < 4; ++k) {
    #pragma omp task firstprivate(k) shared(done)
    {
      #pragma omp task firstprivate(k) shared(done)
      done[k] = k + 1;
    }
  }
  for (int k = 0; k < 4; ++k)
    CHECK(done[k] == k + 1, "taskgroup did not wait for task %d", k);

  free(w);
  free(v);
  if (failures)
    return 1;
  printf("all results correct\n");
  return 0;
}
