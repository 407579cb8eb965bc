/* The definition of a function task declared with its pragma in header_task.h. */
void defined_in_header(int *x) { *x = 3; }
