/* Errors at exact columns, found by the plugin (in pragmas) and by the compiler (in clause
 * expressions, through the lowered source). */
#pragma omp task in([n]x) outt(x)
void f(int n, int *x) { *x = n; }
