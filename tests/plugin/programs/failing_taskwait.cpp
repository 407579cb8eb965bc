// Tasks throw in C++: the pragma taskwait rethrows the task's own exception, which the program
// catches around it; the program goes on after it.
#include "check.h"

#include <nanort/nanort.h>
#include <stdexcept>
#include <string>

struct ParseError : std::runtime_error {
  ParseError(const char *what, int at) : std::runtime_error(what), line(at) {}
  int line;
};

#pragma omp task out([1]value) label(parser)
void parse(int *value) {
  *value = -1;
  throw ParseError("bad header", 3);
}

int main() {
  int x = 0;
  parse(&x);
  try {
    #pragma omp taskwait
    CHECK(!"the taskwait after a throwing function task did not throw");
  } catch (const ParseError &e) {
    CHECK(e.line == 3);
    CHECK(std::string(nanort_last_error()).find("task 'parser'") != std::string::npos);
  }

  int y = 0;
  #pragma omp task out(y)
  {
    if (y == 0) throw std::out_of_range("inline task");
    y = 1;
  }
  bool caught = false;
  try {
    #pragma omp taskwait
  } catch (const std::out_of_range &e) {
    caught = std::string(e.what()) == "inline task";
  }
  CHECK(caught);

  // The program goes on: tasks after the taskwait run as usual.
  #pragma omp task out(y)
  y = 5;
  #pragma omp taskwait
  CHECK(y == 5);
  CHECK_DONE();
}
