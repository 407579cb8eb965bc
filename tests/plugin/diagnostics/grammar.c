// Errors found while reading a pragma: each at the offending token.
// RUN: clang-19 -fsyntax-only -fplugin=nanort-plugin.so -Xclang -verify grammar.c

// expected-error@+1 {{unknown clause 'inn' on '#pragma omp task'}}
#pragma omp task inn(x)
void f1(int *x) { *x = 1; }

// expected-error@+1 {{clause 'on' is not allowed on '#pragma omp task'}}
#pragma omp task on(x)
void f2(int *x) { *x = 1; }

// expected-error@+1 {{expected ')' to close 'in('}}
#pragma omp task in([n]x
void f3(int n, int *x) { x[0] = n; }

// expected-error@+1 {{clause 'priority' has an empty argument}}
#pragma omp task priority()
void f4(void) {}

// expected-error@+1 {{clause 'noflush' takes no argument}}
#pragma omp taskwait noflush(1)

// expected-error@+1 {{clause 'in' needs an argument: in(...)}}
#pragma omp task in
void f5(void) {}

// expected-error@+1 {{clause 'priority' appears twice}}
#pragma omp task priority(1) priority(2)
void f6(void) {}

// expected-error@+1 {{expected 'in:', 'out:', 'inout:', 'inoutset:' or 'mutexinoutset:' at the start of 'depend'}}
#pragma omp task depend(read: x)
void f7(int *x) { *x = 1; }

// expected-error@+1 {{expected one of shared,firstprivate,none in 'default'}}
#pragma omp task default(private)
void f8(void) {}

// expected-error@+1 {{unknown directive '#pragma omp tasks'}}
#pragma omp tasks

// expected-error@+2 {{OpenMP directive '#pragma omp parallel' is not supported by nanort}}
// expected-note@+1 {{OmpSs programs need no parallel region: tasks run on every CPU worker from main on; remove the line and keep the tasks in it (a 'parallel for' loop becomes '#pragma omp taskloop')}}
#pragma omp parallel for

// expected-error@+2 {{OpenMP directive '#pragma oss for' is not supported by nanort}}
// expected-note@+1 {{to split a loop into tasks, write '#pragma oss taskloop' (grainsize(n) or num_tasks(n) sets the chunks)}}
#pragma oss for

// expected-error@+2 {{OpenMP directive '#pragma omp single' is not supported by nanort}}
// expected-note@+1 {{remove the line: the code outside tasks runs once, in the thread that runs main}}
#pragma omp single

// expected-error@+2 {{OpenMP directive '#pragma omp barrier' is not supported by nanort}}
// expected-note@+1 {{write '#pragma omp taskwait': it waits for the tasks created before it}}
#pragma omp barrier

// expected-error@+2 {{OpenMP directive '#pragma omp sections' is not supported by nanort}}
// expected-note@+1 {{make each section a task ('#pragma omp task' on its block) and wait for them with '#pragma omp taskwait'}}
#pragma omp sections

// expected-error@+2 {{OpenMP directive '#pragma omp flush' is not supported by nanort}}
// expected-note@+1 {{remove the line: dependences order the tasks' accesses, and a taskwait makes what the tasks wrote visible}}
#pragma omp flush

// No note where there is nothing simple to write instead.
// expected-error@+1 {{OpenMP directive '#pragma omp threadprivate' is not supported by nanort}}
#pragma omp threadprivate(x)

// expected-error@+1 {{expected a directive after '#pragma omp'}}
#pragma omp

// expected-error@+1 {{expected '(name)' after '#pragma omp critical'}}
#pragma omp critical(1)

// expected-error@+1 {{expected one of smp,opencl,cuda in 'device'}}
#pragma omp target device(fpga)
#pragma omp task
void f9(void);

// expected-error@+1 {{expected a file name in 'file' (write a name with spaces or commas as a string literal)}}
#pragma omp target device(opencl) ndrange(1, 1) file(my kernels.cl)
#pragma omp task
void f10(void);

// expected-error@+1 {{expected a file name in 'file'}}
#pragma omp target device(opencl) ndrange(1, 1) file("")
#pragma omp task
void f10b(void);

// expected-error@+1 {{expected a file name in 'file' (write a name with spaces or commas as a string literal)}}
#pragma omp target device(opencl) ndrange(1, 1) file(a.cl, b.cl)
#pragma omp task
void f10c(void);

// expected-error@+1 {{clause 'name' appears twice}}
#pragma omp target device(opencl) ndrange(1, 1) name(k1) name(k2)
#pragma omp task
void f10d(void);

// expected-error@+1 {{expected a name or a string literal in 'name'}}
#pragma omp target device(opencl) ndrange(1, 1) name(k + 1)
#pragma omp task
void f10e(void);

// expected-error@+1 {{clause 'implements' goes on a '#pragma omp target' line before the task: '#pragma omp target device(...) implements(f1)'}}
#pragma omp task implements(f1)
void f11(int *x);

// expected-error@+1 {{expected a name or a string literal in 'implements'}}
#pragma omp target device(smp) implements(f1 + 1)
#pragma omp task
void f11b(int *x);

// expected-error@+1 {{expected a length after ';' in array section}}
#pragma omp task in(x[0;])
void f12(int *x) { *x = 1; }

// expected-error@+1 {{expected an upper bound after ':' in array section}}
#pragma omp task in(x[1:])
void f13(int *x) { *x = 1; }

// expected-error@+1 {{a subscript after an array section is not supported}}
#pragma omp task in(x[0;2][1])
void f14(int (*x)[4]) { x[0][0] = 1; }

// expected-error@+1 {{array sections of more than 2 dimensions are not supported yet}}
#pragma omp task in(x[0;1][0;1][0;1])
void f15(int (*x)[2][2]) { x[0][0][0] = 1; }

// expected-error@+1 {{an array section of a shaped expression needs parentheses around the shaped expression: ([n]x)[a;k]}}
#pragma omp task in([4]x[0;2])
void f16(int *x) { *x = 1; }

// With them it is a section of the shape's dimensions (tests/plugin/programs/legacy_forms.c).
#pragma omp task in(([4]x)[0;2]) inout(([2][3]y)[1;1][0:1])
void f16b(int *x, int *y) { *y = *x; }

// expected-error@+1 {{an array section inside a shaped expression is not supported: write the sections after the parentheses, ([n]x)[a;k]}}
#pragma omp task in(([4]x[0;2])[0;1])
void f16c(int *x) { *x = 1; }

// expected-error@+1 {{this array section has no dimension of the shape left: a shape of 1 dimension takes at most that many sections}}
#pragma omp task in(([4]x)[0;2][0;1])
void f16d(int *x) { *x = 1; }

// expected-error@+1 {{expected a clause name, found '('}}
#pragma omp task (x)
void f17(int *x) { *x = 1; }

// expected-error@+1 {{expected an expression in the list}}
#pragma omp task in(x, , x)
void f18(int *x) { *x = 1; }

// expected-error@+1 {{expected a variable name in 'shared'}}
#pragma omp task shared(a + 1)
void f19(int a) { (void)a; }

// expected-error@+1 {{expected a name or a string literal in 'label'}}
#pragma omp task label(1 + 2)
void f20(void) {}

// expected-error@+1 {{expected a size inside '[]' of a shape}}
#pragma omp task in([]x)
void f21(int *x) { *x = 1; }

// expected-error@+1 {{expected an expression after the shape}}
#pragma omp task in([4])
void f22(int *x) { *x = 1; }

// expected-error@+1 {{clause 'default' takes one word}}
#pragma omp task default(shared, none)
void f23(void) {}

// expected-error@+1 {{expected a list after ':' in 'depend'}}
#pragma omp task depend(in:)
void f24(int *x) { *x = 1; }

// expected-error@+1 {{unexpected ';' in dependence (sections are written x[a;n])}}
#pragma omp task in(x; 2)
void f25(int *x) { *x = 1; }

// expected-error@+1 {{expected an expression after the shape}}
#pragma omp task in([0;2])
void f26(int *x) { *x = 1; }

// Multidependences (OmpSs, issue 19): {items, iterators}, each error at its token.
// expected-error@+1 {{a multidependence needs an iterator after its items: {v[i], i=0;n}}}
#pragma omp task in({v[i;4]})
void f27(int n, int *v) { v[0] = n; }

// expected-error@+1 {{a multidependence starts with the items it names, then its iterators: {v[i], i=0;n}}}
#pragma omp task depend(inout: x[0:1], {i=0;n, v[i]})
void f28(int n, int *v, int *x) { v[0] = n + *x; }

// expected-error@+1 {{expected an iterator ('name = start;length' or 'name = start:end') after the first iterator of the multidependence}}
#pragma omp task in({v[i], i=0;n, v[i + 1]})
void f28b(int n, int *v) { v[0] = n; }

// expected-error@+1 {{expected 'i = start;length', 'i = start:end' (the end included) or 'i = {a, b}', with ':step' after it if the step is not 1}}
#pragma omp task in({v[i], i=0;n;2})
void f28c(int n, int *v) { v[0] = n; }

// expected-error@+1 {{expected a length after ';' in iterator 'i'}}
#pragma omp task in({v[i], i=0;})
void f28d(int n, int *v) { v[0] = n; }

// expected-error@+1 {{expected a step after ':' in iterator 'i'}}
#pragma omp task in({v[i], i=0:n:})
void f28e(int n, int *v) { v[0] = n; }

// expected-error@+1 {{expected a value in the list of iterator 'k'}}
#pragma omp task in({v[k], k={1,,3}})
void f28f(int *v) { v[0] = 1; }

// expected-error@+1 {{unexpected 'v' after the multidependence's '}'}}
#pragma omp task in({v[k], k=0;2} v)
void f28g(int *v) { v[0] = 1; }

// expected-error@+1 {{expected the values of iterator 'k' after '=': 'k = start;length', 'k = start:end' (the end included) or 'k = {a, b}'}}
#pragma omp task in({v[k], k=})
void f28h(int *v) { v[0] = 1; }

// The item of a multidependence is checked as any other.
// expected-error@+1 {{an array section has at most two parts: start;length or start:end, the end included}}
#pragma omp task in({v[i;1;2], i=0;4})
void f28i(int *v) { v[0] = 1; }

// inprivate (OmpSs-1) copies whole variables (issue 19).
void f28m(int *v) {
  // expected-error@+1 {{clause 'inprivate' takes variables of the enclosing function, whose whole value the task copies: 'v[0;2]' is not one}}
  #pragma omp task inprivate(v[0;2])
  v[0] = 1;
}

// taskyield takes no clauses; simd's and declare simd's are not read (issue 19).
void f28k(int *v) {
  // expected-error@+1 {{clause 'if' is not allowed on '#pragma omp taskyield'}}
  #pragma omp taskyield if(1)
  #pragma omp simd safelen(4) anything(at, all)
  for (int i = 0; i < 4; ++i)
    v[i] = i;
  // expected-error@+1 {{'noflush' cannot be combined with 'in' (a taskwait with dependences flushes only the named data)}}
  #pragma oss taskwait in(*v) noflush
}
#pragma omp declare simd uniform(v)
void f28l(int *v, int i);
