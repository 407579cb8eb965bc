// Array sections and shapes in dependences (issue 18): a malformed section is one error at the
// user's text, a comma in a subscript is an error (x[0,n] would be x[n]), and constant
// negative lengths, sizes and starts are errors at compile time.
// RUN: clang-19 -fsyntax-only -fplugin=nanort-plugin.so -Xclang -verify sections.c
#define NEG (-5)
#define FOUR 4
int f(int a, int b);
float g[16];

// A third part: one error, at the second separator.
// expected-error@+1 {{an array section has at most two parts: start;length or start:end, the end included}}
#pragma omp task in(x[0;n;2])
void s1(int n, float *x) { x[0] = n; }

// expected-error@+1 {{an array section has at most two parts: start;length or start:end, the end included}}
#pragma omp task inout(x[0:n:1])
void s2(int n, float *x) { x[0] = n; }

// depend() follows OpenMP (x[a:n]), which has strides: not supported.
// expected-error@+1 {{an array section has at most two parts: start:length (strides are not supported)}}
#pragma omp task depend(in: x[0:n:2])
void s3(int n, float *x) { x[0] = n; }

// A comma in a subscript: the comma operator would make x[0,n] the one element x[n].
// expected-error@+3 {{',' in a subscript of a dependence is the comma operator, which keeps only the last value: did you mean ';' (start;length) or ':' (start:end)?}}
// expected-note@+2 {{replace ',' with ';' for a start and a length}}
// expected-note@+1 {{replace ',' with ':' for a start and an end, the end included}}
#pragma omp task inout(x[0,n])
void c1(int n, float *x) { x[0] = n; }

// expected-error@+2 {{',' in a subscript of a dependence is the comma operator, which keeps only the last value: did you mean ':' (start:length)?}}
// expected-note@+1 {{replace ',' with ':' for a start and a length}}
#pragma omp task depend(out: x[0,n])
void c2(int n, float *x) { x[0] = n; }

// Also a plain subscript, and after a separator.
// expected-error@+3 {{',' in a subscript of a dependence is the comma operator, which keeps only the last value: did you mean ';' (start;length) or ':' (start:end)?}}
// expected-note@+2 {{replace ',' with ';' for a start and a length}}
// expected-note@+1 {{replace ',' with ':' for a start and an end, the end included}}
#pragma omp task in(x[0;n,2])
void c3(int n, float *x) { x[0] = n; }

// expected-error@+2 {{',' in a shape is the comma operator, which keeps only the last size: did you mean '][' ([n][m]x)?}}
// expected-note@+1 {{replace ',' with '][' for two dimensions}}
#pragma omp task in([n,n]x)
void c4(int n, float *x) { x[0] = n; }

// expected-error@+1 {{unexpected ';' in a shape: a shape gives one size per '[]', [n]x or [n][m]x}}
#pragma omp task in([n;2]x)
void c5(int n, float *x) { x[0] = n; }

// Commas inside parentheses or calls are the user's own; a ':' of a '?' is no separator.
#pragma omp task in(x[f(0, n)], x[(0, n)], x[f(1, 2);n], x[n ? 1 : 2], x[n ? 0 : 1 ; n])
void ok1(int n, float *x) { x[0] = n; }

// expected-error@+1 {{expected a length after ':' in array section}}
#pragma omp task depend(in: x[1:])
void e1(float *x) { x[0] = 1; }

// Constant lengths and sizes: literals and macros.
// expected-error@+1 {{in(x[0;-5]): the section's length is -5}}
#pragma omp task in(x[0;-5])
void n1(float *x) { x[0] = 1; }

// expected-error@+1 {{inout(x[1;NEG]): the section's length is -5}}
#pragma omp task inout(x[1;NEG])
void n2(float *x) { x[0] = 1; }

// x[a:b] includes b: x[5:4] is empty (allowed), x[5:2] has the length 2 - 5 + 1.
// expected-error@+1 {{out(x[5:2]): the section's length is -2}}
#pragma omp task out(x[5:4]) out(x[5:2])
void n3(float *x) { x[0] = 1; }

// depend(): x[a:n] is a start and a length.
// expected-error@+1 {{depend(inout: x[5:-1]): the section's length is -1}}
#pragma omp task depend(inout: x[5:2], x[5:-1])
void n4(float *x) { x[0] = 1; }

// expected-error@+1 {{in([FOUR][2 - FOUR]x): the shape's size in dimension 2 is -2}}
#pragma omp task in([FOUR][2 - FOUR]x)
void n5(float *x) { x[0] = 1; }

// expected-error@+1 {{in(m[0;2][1;-1]): the section's length in dimension 2 is -1}}
#pragma omp task in(m[0;2][1;-1])
void n6(float (*m)[4]) { m[0][0] = 1; }

// Constant starts before the base: a pointer may point into a larger array, whose memory
// (x - 4)[0;8] names; an array has nothing before its first element.
// expected-error@+1 {{in(x[-4;8]): the section starts at index -4, before x[0] (to name memory before a pointer, write (x - 4)[0;8])}}
#pragma omp task in(x[-4;8])
void b1(float *x) { x[0] = 1; }

// expected-error@+1 {{inout(x[-FOUR:n]): the section starts at index -4, before x[0] (to name memory before a pointer, write (x - 4)[0;n + 5])}}
#pragma omp task inout(x[-FOUR:n])
void b2(int n, float *x) { x[0] = n; }

// expected-error@+1 {{in(g[-1;2]): the section starts at index -1, outside the array g}}
#pragma omp task in(g[-1;2])
void b3(void) {}

// expected-error@+1 {{in(m[0;2][-1;2]): the section starts at index -1 in dimension 2, before the first element of a row}}
#pragma omp task in(m[0;2][-1;2])
void b4(float (*m)[4]) { m[0][0] = 1; }

// The memory before a pointer, named explicitly: no error.
#pragma omp task in((x - 4)[0;8])
void b5(float *x) { x[0] = 1; }

int main(void) {
  float a[8] = {0};
  float *p = a + 4;
  // expected-error@+1 {{inout(a[-2;2]): the section starts at index -2, outside the array a}}
  #pragma omp task inout(a[-2;2])
  a[0] = 1;
  // expected-error@+1 {{inout(p[-1:2]): the section starts at index -1, before p[0] (to name memory before a pointer, write (p - 1)[0;4])}}
  #pragma omp task inout(p[-1:2])
  p[0] = 1;
  // expected-error@+1 {{on(a[0;-1]): the section's length is -1}}
  #pragma omp taskwait on(a[0;-1])
  #pragma omp taskwait
  return 0;
}
