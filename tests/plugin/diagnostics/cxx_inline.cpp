// Inline tasks in places that C++ cannot lower yet, and jumps out of a task.
struct S {
  int v = 0;
  void method() {
    #pragma omp task
    {
      auto l = [this] { v++; }; // expected-error {{lambdas that capture 'this' inside an inline task are not supported yet}}
      l();
    }
  }
};

template <class T> void tmpl(T x) {
  #pragma omp task
  { if (x) return; } // expected-error {{'return' cannot leave a task}}
}

void lambda() {
  auto l = [] {
    int y = 0;
    // expected-error@+1 {{inline tasks inside lambdas are not supported yet}}
    #pragma omp task
    y++;
  };
  l();
}

// A variable-length array (a clang extension in C++) and a pointer to one.
void vla(int n, int &r, const int &cr) {
  int v[n];
  int (*p)[n] = nullptr;
  // expected-error@+1 {{variable 'v' has a variably modified type (a variable-length array or a pointer to one, a C feature): C++ inline tasks cannot capture it; use a pointer to its first element}}
  #pragma omp task shared(v)
  v[0] = 1;
  // expected-error@+1 {{variable 'p' has a variably modified type (a variable-length array or a pointer to one, a C feature): C++ inline tasks cannot capture it; use a pointer to its first element}}
  #pragma omp task
  (*p)[0] = 1;
  // A reference is private as an object of the referenced type (OpenMP 4.5); not a const one.
  #pragma omp task private(r)
  r = 2;
  // expected-error@+1 {{private variable 'cr' cannot be const}}
  #pragma omp task private(cr)
  (void)cr;
}
