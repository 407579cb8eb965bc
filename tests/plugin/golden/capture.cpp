// Golden test: the captures of an inline task's dependences in C++ (issue 19). p (a reference
// to a pointer) and x (a dependent pointer): firstprivate; total (a reference to a scalar):
// shared; s: firstprivate (plain data); l: shared (its copy would run a constructor).
#include <string>

struct Span {
  double *data;
  int n;
};
struct Labelled {
  std::string name;
  double *data;
};

template <class T>
void f(T *x, double *&p, double &total, Span s, Labelled &l) {
  #pragma oss task in(x[0;s.n], p[0;s.n]) inout(total) in(s.data[0;s.n], l.data[0;1])
  total += x[0] + p[0] + s.data[0] + l.data[0];
}

template void f(float *, double *&, double &, Span, Labelled &);
