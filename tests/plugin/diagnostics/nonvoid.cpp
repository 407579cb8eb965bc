// Function tasks that return a value, in C++: references and deduced types cannot be
// delivered by a task.

static int cell;

// expected-error@+1 {{function task 'ref' returns a reference, which its task cannot deliver: return a value or a pointer}}
#pragma omp task
int &ref(int i) { return cell; }

// expected-error@+1 {{function task 'deduced' has a deduced return type: write the type it returns}}
#pragma omp task
auto deduced(int i) { return i + 1; }

// expected-error@+1 {{function task 'trailing' has a deduced return type: write the type it returns}}
#pragma omp task
decltype(auto) trailing(int i) { return i; }

struct S {
  // expected-error@+1 {{function task 'member' returns a reference, which its task cannot deliver: return a value or a pointer}}
  #pragma omp task
  const S &member() const { return *this; }
};

#pragma omp task
S make() { return S(); }

void use() {
  S s;
  s = make();
}
