/* Function tasks declared inside a function. */
#pragma omp task in(a[0;n])
void shown(int *a, int n);

void before(int *a) { shown(a, 1); } /* the file-scope task */

void user(int *a, int n) {
  shown(a, n); /* before the declaration: the file-scope task */
#pragma omp task inout(a[0;n])
  void shown(int *a, int n);
  shown(a, n);
  {
#pragma oss task in(a[0;n]) label(inner)
    void shown(int *a, int n);
    shown(a, n);
  }
  shown(a, n);
#pragma omp taskwait
}

void shown(int *a, int n) { (void)a; (void)n; }

/* Defined in another file. */
void elsewhere(int *a);

void other(int *a) {
#pragma omp task out(*a)
  void elsewhere(int *a);
  elsewhere(a);
}
