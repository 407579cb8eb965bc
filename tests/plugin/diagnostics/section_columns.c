/* Errors in array sections at the user's columns (issue 18). */
#pragma omp task in(x[0;n;2])
void f(int n, float *x) { x[0] = n; }
#pragma omp task   inout( x[ 0 , n ] )
void g(int n, float *x) { x[0] = n; }
#pragma omp task in(x[-4;8])
void h(float *x) { x[0] = 1; }
#pragma omp task inout({x[i;2], i=0})
void m(int n, float *x) { x[0] = n; }
