// Task pragmas on functions declared inside a function, in C++: what is not supported is an
// error naming what to write instead (the supported forms run in
// tests/plugin/programs/block_tasks.cpp).
template <class T> void in_template(T *x) {
  // expected-error@+1 {{a task pragma on a function declared inside a template is not supported: declare 'templated_block' with its pragma at namespace scope (its calls after that are tasks)}}
  #pragma omp task inout(*p)
  void templated_block(int *p);
  templated_block(x);
}

namespace ns {
void with_default(int *x) {
  #pragma omp task inout(p[0;n])
  void defaulted(int *p, int n = 4); // expected-error {{parameter 'n' of task 'defaulted' has a default argument, which a task declared inside a function cannot have: pass the value in the calls}}
  defaulted(x);
}
} // namespace ns
