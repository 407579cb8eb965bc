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

// A variable-length array (clang's extension in C++) and a pointer to one are captured
// (tests/plugin/programs/vla.cpp); a firstprivate one must be trivially copyable.
struct Named {
  Named();
  Named(const Named &);
};
void vla(int n, int &r, const int &cr) {
  int v[n];
  int (*p)[n] = nullptr;
  Named names[n];
  #pragma omp task shared(v)
  v[0] = 1;
  #pragma omp task
  (*p)[0] = 1;
  // expected-error@+1 {{firstprivate array 'names' must be trivially copyable}}
  #pragma omp task firstprivate(names)
  (void)names;
  // A reference is private as an object of the referenced type (OpenMP 4.5); not a const one.
  #pragma omp task private(r)
  r = 2;
  // expected-error@+1 {{private variable 'cr' cannot be const}}
  #pragma omp task private(cr)
  (void)cr;
}
