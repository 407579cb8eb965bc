// Errors about taskloops: the loop's form, the clauses, and jumps out of the loop.
void f(int n, int *a, double x, int *p) {
  int i;
  // expected-error@+1 {{'#pragma omp taskloop' must be followed by a 'for' loop}}
  #pragma omp taskloop
  while (n--) a[n] = 0;

  // expected-error@+2 {{the loop of a taskloop must start by setting its variable: 'for (int i = start; ...' or 'for (i = start; ...'}}
  #pragma omp taskloop
  for (; i < n; i++) a[i] = 0;

  // expected-error@+2 {{the variable 'd' of a taskloop's loop must have an integer type}}
  #pragma oss taskloop
  for (double d = 0; d < x; d += 1) a[0]++;

  // expected-error@+2 {{the variable 'q' of a taskloop's loop must have an integer type}}
  #pragma omp taskloop
  for (int *q = a; q < a + n; q++) *q = 0;

  // expected-error@+2 {{the condition of a taskloop's loop must compare 'i' with its bound: 'i < end', 'i <= end', 'i > end' or 'i >= end'}}
  #pragma omp taskloop
  for (i = 0; i != n; i++) a[i] = 0;

  // expected-error@+2 {{the condition of a taskloop's loop must compare 'k' with its bound: 'k < end', 'k <= end', 'k > end' or 'k >= end'}}
  #pragma omp taskloop
  for (int k = 0; k * 2 < n; k++) a[k] = 0;

  // expected-error@+2 {{the bound of a taskloop's loop must have an integer type}}
  #pragma omp taskloop
  for (int k = 0; k < x; k++) a[k] = 0;

  // expected-error@+2 {{the increment of a taskloop's loop must be 'k++', '++k', 'k--', '--k', 'k += step', 'k -= step' or 'k = k + step'}}
  #pragma omp taskloop
  for (int k = 1; k < n; k *= 2) a[k] = 0;

  // expected-error@+2 {{the increment of a taskloop's loop must take 'k' towards its bound: the condition wants it to go up}}
  #pragma omp taskloop
  for (int k = 0; k < n; k--) a[k] = 0;

  // expected-error@+2 {{the increment of a taskloop's loop must take 'k' towards its bound: the condition wants it to go down}}
  #pragma oss taskloop
  for (int k = n; k >= 0; k -= -1) a[k] = 0;

  #pragma omp taskloop
  for (int k = 0; k < n; k++) {
    for (int m = 0; m < k; m++)
      if (a[m]) break; // leaves the inner loop only
    switch (a[k]) { case 0: break; default: continue; }
    if (a[k] < 0)
      break; // expected-error {{'break' cannot leave the loop of a taskloop (its iterations run in tasks)}}
  }

  #pragma oss taskloop
  for (int k = 0; k < n; k++)
    if (a[k]) return; // expected-error {{'return' cannot leave the loop of a taskloop (its iterations run in tasks)}}

  #pragma omp taskloop
  for (int k = 0; k < n; k++)
    if (a[k]) goto out; // expected-error {{'goto' cannot leave the loop of a taskloop (its iterations run in tasks)}}

  // expected-error@+1 {{'grainsize' and 'num_tasks' cannot both be given on '#pragma omp taskloop'}}
  #pragma omp taskloop grainsize(4) num_tasks(2)
  for (int k = 0; k < n; k++) a[k] = 0;

  // collapse(n): n perfectly nested canonical loops with bounds that the outer loops do not
  // change.
  #pragma omp taskloop collapse(2)
  for (int k = 0; k < n; k++)
    for (int m = 0; m < n; m++) a[k] += m;

  #pragma omp taskloop collapse(2)
  for (int k = 0; k < n; k++) {
    a[k] = 0; // expected-error {{'collapse(2)' needs 2 perfectly nested 'for' loops: the body of the loop of 'k' must be the next 'for' loop and nothing else}}
    for (int m = 0; m < n; m++) a[k] += m;
  }

  #pragma oss taskloop collapse(3)
  for (int k = 0; k < n; k++)
    for (int m = 0; m < n; m++)
      a[k] += m; // expected-error {{'collapse(3)' needs 3 perfectly nested 'for' loops: the body of the loop of 'm' must be the next 'for' loop and nothing else}}

  #pragma omp taskloop collapse(2)
  for (int k = 0; k < n; k++)
    for (int m = 0; m < k; m++) a[k] += m; // expected-error {{the bound of the loop of 'm' depends on 'k', the variable of an enclosing loop: 'collapse' splits rectangular nests only (give the inner loop bounds that do not change with the outer loops, or collapse fewer loops)}}

  #pragma oss taskloop collapse(2)
  for (int k = 0; k < n; k++)
    for (int m = k + 1; m < n; m++) a[k] += m; // expected-error {{the start of the loop of 'm' depends on 'k', the variable of an enclosing loop: 'collapse' splits rectangular nests only (give the inner loop bounds that do not change with the outer loops, or collapse fewer loops)}}

  #pragma omp taskloop collapse(2)
  for (int k = 0; k < n; k++)
    for (int m = 0; m < n; m += k + 1) a[k] += m; // expected-error {{the step of the loop of 'm' depends on 'k', the variable of an enclosing loop: 'collapse' splits rectangular nests only (give the inner loop bounds that do not change with the outer loops, or collapse fewer loops)}}

  #pragma omp taskloop collapse(2)
  for (int k = 0; k < n; k++)
    for (double m = 0; m < n; m++) a[k] += m; // expected-error {{the variable 'm' of a taskloop's loop must have an integer type}}

  #pragma omp taskloop collapse(2)
  for (int k = 0; k < n; k++)
    for (int m = 0; m < n; m++)
      if (a[m]) break; // expected-error {{'break' cannot leave the loop of a taskloop (its iterations run in tasks)}}

  // expected-error@+1 {{the argument of 'collapse' must be an integer constant from 1 to 16, not 'n'}}
  #pragma omp taskloop collapse(n)
  for (int k = 0; k < n; k++) a[k] = 0;

  // expected-error@+1 {{the argument of 'collapse' must be an integer constant from 1 to 16, not '0'}}
  #pragma oss taskloop collapse(0)
  for (int k = 0; k < n; k++) a[k] = 0;

  // expected-error@+1 {{'reduction' cannot be given on '#pragma omp taskloop' with 'nogroup': the taskloop's group is the reduction's scope (drop 'nogroup', or write in_reduction inside a '#pragma omp taskgroup task_reduction(...)')}}
  #pragma omp taskloop nogroup reduction(+: i)
  for (int k = 0; k < n; k++) i += a[k];

  // OmpSs-2 has no group: its taskloop's tasks are reduction tasks.
  #pragma oss taskloop reduction(+: i)
  for (int k = 0; k < n; k++) i += a[k];

  // expected-error@+1 {{reduction operator '&' is not defined for type 'double' (item 'x')}}
  #pragma omp taskloop reduction(&: x)
  for (int k = 0; k < n; k++) x += a[k];

  // expected-error@+1 {{clause 'weakreduction' is not allowed on '#pragma oss taskloop'}}
  #pragma oss taskloop weakreduction(+: i)
  for (int k = 0; k < n; k++) i += a[k];

  #pragma omp taskloop collapse(1) nogroup
  for (int k = 0; k < n; k++) a[k] = 0;

  // expected-error@+1 {{clause 'grainsize' is not allowed on '#pragma omp task'}}
  #pragma omp task grainsize(4)
  a[0] = 1;

  // expected-error@+1 {{clause 'noflush' is not allowed on '#pragma omp taskloop'}}
  #pragma omp taskloop noflush
  for (int k = 0; k < n; k++) a[k] = 0;

  // expected-error@+1 {{clause 'nogroup' appears twice}}
  #pragma omp taskloop nogroup nogroup
  for (int k = 0; k < n; k++) a[k] = 0;

  // expected-error@+1 {{unknown clause 'lastprivate' on '#pragma omp taskloop'}}
  #pragma omp taskloop lastprivate(i)
  for (i = 0; i < n; i++) a[i] = 0;

  // expected-error@+1 {{'#pragma omp taskloop' must be followed by a 'for' loop}}
  #pragma omp taskloop
  int late = 0;
  (void)late;
  (void)p;
out:;
}

// expected-error@+1 {{'#pragma oss taskloop' must be followed by a statement}}
#pragma oss taskloop
void g(void);
