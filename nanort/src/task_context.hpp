// The calling thread's place among tasks: the task whose body it runs (nullptr outside any
// body) and its implicit task (made on first use, the parent of the tasks it creates outside
// a body). Defined with the task path (ready/task_path.cpp); start and stop read them too.
#pragma once

#include "hot_tls.hpp"

namespace nanort::rt {

struct Task;

extern NANORT_HOT_TLS thread_local Task *tls_current;
extern NANORT_HOT_TLS thread_local Task *tls_root;

}  // namespace nanort::rt
