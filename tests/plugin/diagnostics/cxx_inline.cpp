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
