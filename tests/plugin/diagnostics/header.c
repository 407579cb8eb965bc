// Task pragmas of included files (header_task.h): declarations are lowered (kernels by each
// file that uses them); what is not lowered yet is an error, never a dropped task.
// expected-error@header_task.h:3 {{in an included file, a task pragma on a function definition is not lowered yet: declare 'in_header' with its pragma there and define it in a source file}}
// expected-error@header_task.h:8 {{in an included file, a task pragma applies to function declarations only (inline tasks are lowered in source files)}}
// expected-error@header_task.h:18 {{kernel task 'scale_header' is declared in an included file, so each source file calls a wrapper of its own: name it in the source file itself, not in a macro body, an included file or an overloaded call in a template}}
// expected-error@header_task.h:21 {{a device(opencl) kernel needs an 'ndrange' clause}}
// expected-error@header_task.h:26 {{function task 'defined_in_header' is defined in an included file, which is not lowered yet: define it in a source file (the header keeps its declaration with the pragma)}}
#include "header_task.h"
#include "header_task_def.h"

#define SCALE_ALL(x) scale_header(4, x)

#pragma omp task inout(*x)
void here(int *x) { in_header(x); }

void user(float *x, int *y) {
  scale_header(4, x); // lowered: calls this file's wrapper
  SCALE_ALL(x); // expected-error {{kernel task 'scale_header' is declared in an included file}}
  no_ndrange(4, x);
  defined_in_header(y);
}
