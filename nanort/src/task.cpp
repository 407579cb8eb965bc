#include "task.hpp"

#include <cstdlib>

#include "dependencies.hpp"
#include "task_pool.hpp"

namespace nanort::rt {

void *Task::operator new(std::size_t bytes) { return TaskPool::allocate(bytes); }
void Task::operator delete(void *memory) noexcept { TaskPool::deallocate(memory); }

Task::~Task() {
  destroy_args();
  if (args && args != inline_args) std::free(args);
}

void Task::destroy_args() {
  if (args_constructed && site && site->args_destroy) site->args_destroy(args);
  args_constructed = false;
}

DependencyDomain &Task::domain_for_children() {
  if (!child_domain) child_domain = std::make_unique<DependencyDomain>();
  return *child_domain;
}

void Task::record_error(std::string message) {
  // Only the first failure of a task creates the list; children may fail concurrently.
  static std::mutex creation;
  {
    std::lock_guard<std::mutex> guard(creation);
    if (!errors) errors = std::make_unique<ErrorList>();
  }
  std::lock_guard<std::mutex> guard(errors->mutex);
  errors->messages.push_back(std::move(message));
}

std::string Task::describe() const {
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
