// Task pragmas of included files: on declarations they are lowered; on functions defined in
// the header they are an error, never a dropped task.
// expected-error@header_task.h:2 {{in an included file, only task pragmas on function declarations without a body}}
#include "header_task.h"
#pragma omp task inout(*x)
void here(int *x) { in_header(x); }
