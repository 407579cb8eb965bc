// Array sections that are very likely off by one (issue 19): warnings, with a note that says
// what to write, and none on correct sections. In in(), out(), inout() and the other OmpSs
// clauses x[a:b] includes x[b]; in depend() x[a:n] is a start and a length.
// tests/plugin/tests.cmake checks every warning and note, with its line and column, and that
// there are no others.
#define N 100
#define BS 16
#define SIZE 100
int g[N];
int h[SIZE + 1];
typedef double row_t[8];
struct grid {
  int cells[N];
  int count;
  int extra[1]; // the last member, of one element: may be a flexible array the old way
};

// 1. Past the end of an array whose size is known.
#pragma omp task inout(g[0:N])
void past_global(void) { g[0] = 1; }

#pragma omp task depend(in: g[2:N])
void past_depend(void) { (void)g[2]; }

// Constants that differ from the size as written: the size's own words in the hint.
#pragma omp task in(g[0:SIZE])
void past_other_macro(void) { (void)g[0]; }

// x[;n] past the end of a start;length section, and two dimensions.
#pragma omp task out(g[1;N])
void past_length(void) { g[1] = 0; }

#pragma omp task in(m[0:3][0:8])
void past_row(row_t *m) { (void)m; }

// A parameter declared as an array, a variable-length array, a member, a shape.
#pragma omp task inout(a[0:BS])
void past_parameter(int a[BS]) { a[0] = 1; }

#pragma omp task inout(s->cells[0:N])
void past_member(struct grid *s) { s->count = 0; }

#pragma omp task in(([n]p)[0:n])
void past_shape(int n, const float *p) { (void)p[n - 1]; }

void past_vla(int n) {
  float w[n];
  #pragma omp task in(w[0:n])
  (void)w[0];
  int v[N];
  #pragma omp taskwait on(v[0:N])
  #pragma omp target device(smp) copy_in(v[:N])
  #pragma omp task
  (void)v[0];
}

// 2. An inclusive upper bound written as the start plus a number of elements.
#pragma omp task in(x[i:i+BS])
void block_plus(int i, const float *x) { (void)x[i]; }

#pragma omp task inout(x[i*BS:(i+1)*BS])
void block_product(int i, float *x) { x[i] = 0; }

#pragma omp task concurrent(x[0;n][j:j+2*bs])
void block_rows(int n, int j, int bs, row_t *x) { (void)x[0][j]; }

#pragma oss task in({x[i:i+BS], i=0;n:BS})
void block_multidep(int n, const float *x) { (void)x[n]; }

// 3. In depend(), a length written as the start plus something.
#pragma omp task depend(in: x[i:i+BS])
void depend_end(int i, const float *x) { (void)x[i]; }

#pragma omp task depend(inout: x[i:i+BS-1])
void depend_inclusive(int i, float *x) { x[i] = 0; }

// Correct sections: no warning.
#pragma omp task inout(g[0:N-1], g[0;N], h[0:SIZE], a[0:BS-1], s->cells[0:N-1], s->extra[0:3])
void right_bounds(int a[BS], struct grid *s) { a[0] = s->count; }

#pragma omp task in(x[i:i+BS-1], x[i;BS], x[i-1:i+BS], x[i:i+1], x[i:i+BS+1], x[0:n])
void right_blocks(int i, int n, const float *x) { (void)x[i]; }

#pragma omp task in(([n]p)[0:n-1], ([n]p)[1;n-1], ([n + 1]p)[0:n], ([2 * n]p)[0:n])
void right_shapes(int n, const float *p) { (void)p[0]; }

#pragma omp task depend(in: g[0:N], x[i:BS], x[0:n-1], x[0:0+n], x[k:i+BS]) depend(out: g[N-1:1])
void right_depend(int i, int k, int n, const float *x) { (void)x[i + k + n]; }

// Sizes the plugin does not see: a pointer, an unsized parameter, a cast.
#pragma omp task inout(p[0:N], q[0:N], ((int (*)[N])p)[0:N])
void unknown_sizes(int *p, int q[]) { p[0] = q[0]; }

void right_vla(int n) {
  float w[n];
  float u[n + 1];
  #pragma omp task in(w[0:n-1], w[0;n], u[0:n], u[1;n])
  (void)w[0], (void)u[0];
}
