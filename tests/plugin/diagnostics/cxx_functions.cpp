// Function tasks that C++ cannot lower yet.
struct S {
  // expected-error@+1 {{virtual member functions cannot be tasks yet}}
  #pragma omp task
  virtual void method(int *x) { *x = 1; }
  // expected-error@+1 {{ref-qualified member functions cannot be tasks yet}}
  #pragma omp task
  void rvalue_this(int *x) && { *x = 1; }
};

// expected-error@+1 {{unnamed template parameters of a task function are not supported yet}}
#pragma omp task inout(*x)
template <class T, int> void tmpl(T *x) { *x = 1; }

template <class T> struct Box {
  // expected-error@+1 {{out-of-line members of class templates as tasks are not supported yet}}
  #pragma omp task
  static void fill(T *x);
};
template <class T> void Box<T>::fill(T *x) { *x = T(); }

namespace ns {
void qualified(int *x);
}
// expected-error@+1 {{a task pragma on a qualified name is not supported yet}}
#pragma omp task inout(*x)
void ns::qualified(int *x) { *x = 1; }

// expected-error@+1 {{rvalue reference parameters of task functions are not supported yet}}
#pragma omp task
void moved(int &&x) { (void)x; }

// The pragma goes before the template head.
template <typename T>
// expected-error@+1 {{'#pragma omp task' goes before 'template <...>', not between the template head and the function}}
#pragma omp task inout(*x)
void after_head(T *x) { *x = T(); }

namespace ns {
void declares(int *x) {
  // A function task declared in a block: lowered (local_tasks.cpp has the unsupported forms).
  #pragma omp task inout(*x)
  void block_task(int *x);
  block_task(x);
}
} // namespace ns
