// Errors about taskloops in C++: range-based loops, iterators, and loops in templates.
#include <vector>

template <typename T> void fill(std::vector<T> &v, T x) {
  #pragma omp taskloop grainsize(8) shared(v) // a loop of a dependent type is split as written
  for (typename std::vector<T>::size_type i = 0; i < v.size(); ++i) v[i] = x;
}

void f(std::vector<int> &v) {
  // expected-error@+1 {{'#pragma omp taskloop' must be followed by a 'for' loop with an integer variable (not a range-based 'for')}}
  #pragma omp taskloop
  for (int &x : v) x = 0;

  // expected-error@+2 {{the variable 'it' of a taskloop's loop must have an integer type}}
  #pragma oss taskloop
  for (auto it = v.begin(); it < v.end(); ++it) *it = 0;

  #pragma oss taskloop shared(v)
  for (int i = 0; i < int(v.size()); ++i) {
    auto twice = [](int k) { return 2 * k; }; // its return is its own
    v[i] = twice(i);
  }

  #pragma omp taskloop shared(v)
  for (int i = 0; i < 10; ++i)
    if (v[i] < 0) throw 1; // not a jump out of the loop: the chunk task fails
  fill(v, 3);
}
