/* A function task declared here and defined in another file. */
#pragma omp task inout(*x)
void elsewhere(int *x);
