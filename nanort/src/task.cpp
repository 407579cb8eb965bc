#include "task.hpp"

#include <cstdlib>

#include "dependencies.hpp"
#include "reduction.hpp"
#include "task_pool.hpp"

namespace nanort::rt {

void *Task::operator new(std::size_t bytes) { return TaskPool::allocate(bytes); }
void Task::operator delete(void *memory) noexcept { TaskPool::deallocate(memory); }

Task::~Task() {
  // Taskgroups its body left open (the C ABI's begin without its end).
  while (taskgroup && taskgroup != inherited_taskgroup) {
    TaskgroupScope *outer = taskgroup->outer;
    delete taskgroup;
    taskgroup = outer;
  }
  delete errors.load();
  destroy_args();
  if (args && args != inline_args) std::free(args);
}

void Task::destroy_args() {
  if (!args_constructed) return;  // (the usual case: no write to this line)
  if (site && site->args_destroy) site->args_destroy(args);
  args_constructed = false;
}

DependencyDomain &Task::domain_for_children() {
  if (!child_domain) child_domain = std::make_unique<DependencyDomain>();
  return *child_domain;
}

void Task::record_failure(Failure failure) {
  ErrorList *list = errors.load(std::memory_order_acquire);
  if (!list) {  // the first failure creates the list; children may fail at the same time
    auto *fresh = new ErrorList();
    if (errors.compare_exchange_strong(list, fresh, std::memory_order_acq_rel))
      list = fresh;
    else
      delete fresh;  // another thread won; 'list' now holds its list
  }
  std::lock_guard<std::mutex> guard(list->mutex);
  list->failures.push_back(std::move(failure));
}

std::vector<Failure> Task::take_errors() {
  ErrorList *list = errors.load(std::memory_order_acquire);
  if (!list) return {};
  std::lock_guard<std::mutex> guard(list->mutex);
  return std::move(list->failures);
}

std::string Task::describe(const char *label, const char *file, int line) {
  std::string text = "task '";
  text += label ? label : "(unnamed)";
  text += "'";
  if (file) {
    text += " (";
    text += file;
    text += ":" + std::to_string(line) + ")";
  }
  return text;
}

}  // namespace nanort::rt
