/* Task functions used from several files. scale: the pragma is on this declaration, so
 * every file that includes it knows scale is a task, and the file defining it
 * (two_files_task.c) renames the definition. offset: a plain declaration; the pragma is on
 * its definition. */
#pragma omp task inout([n]v) label(scale)
void scale(int n, double *v, double f);

void offset(int n, double *v, double d);
