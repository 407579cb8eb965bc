// A task declared inside a function of an included file (tests local_tasks.c).
static inline void header_block(int *x) {
#pragma omp task inout(*x)
  void in_header_block(int *x);
  in_header_block(x);
}
