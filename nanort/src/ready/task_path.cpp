// The life of a task inside the runtime, in order: made (create), handed over (submit:
// dependences registered in the parent's domain, or none), ready (push_ready: placed on a
// device, or into the CPU ready path, ready/ready_path.hpp), run (execute, on a worker or a
// thread that waits), complete once its body and children are done (complete: dependences
// released, parent told), and the waits that run other tasks meanwhile (help_until,
// taskwait). Start, stop and wiring are in runtime.cpp; devices in device/.
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../cpu/cpu_worker_pool.hpp"
#include "../cpu/spare_threads.hpp"
#include "../device/accelerator.hpp"
#include "../device/device_manager.hpp"
#include "../hot_tls.hpp"
#include "../observe/observer.hpp"
#include "../runtime.hpp"
#include "../scheduler/perf_model.hpp"
#include "../scheduler/scheduler.hpp"
#include "../task_context.hpp"

namespace nanort::rt {

NANORT_HOT_TLS thread_local Task *tls_current = nullptr;
NANORT_HOT_TLS thread_local Task *tls_root = nullptr;

// ---------------------------------------------------------------------------------------------
// Creation and submission

Task *Runtime::current_task() {
  if (tls_current) return tls_current;
  if (!tls_root) {
    auto *root = new Task();
    root->label = "implicit task of a thread";
    {
      std::lock_guard<std::mutex> guard(roots_mutex_);
      roots_.push_back(root);
    }
    tls_root = root;
  }
  return tls_root;
}

Task *Runtime::create(const nanort_task_site *site, std::size_t args_size) {
  auto *task = new Task;  // (not Task(): that would zero all of it, cold lines too)
  // (For in_reduction: the taskgroups around its creator are around it too.)
  if (Task *creator = tls_current ? tls_current : tls_root)
    task->taskgroup = task->inherited_taskgroup = creator->taskgroup;
  task->site = site;
  if (site) {
    task->label = site->label;
    task->file = site->file;
    task->line = site->line;
  }
  task->args_size = args_size;
  if (args_size > (std::size_t(1) << 40)) {
    delete task;
    throw std::bad_alloc();
  }
  if (args_size <= Task::kInlineArgs) {
    task->args = task->inline_args;
  } else {
    task->args = static_cast<unsigned char *>(std::aligned_alloc(16, (args_size + 15) & ~15ul));
    if (!task->args) {
      delete task;
      throw std::bad_alloc();
    }
  }
  return task;
}

nanort_status Runtime::submit(Task *task) {
  if (task->site)
    for (const Access &access : task->accesses)
      if (access.region.first() == 0 && !access.region.empty())
        for (std::uint32_t i = 0; i < task->site->num_impls; ++i)
          if (task->site->impls[i].device != NANORT_DEVICE_SMP) {
            std::string what = task->describe() + ": access of a NULL address (a task that may run on a " +
                               device_name(task->site->impls[i].device) + " device moves its data)";
            delete task;
            throw std::invalid_argument(what);
          }
  std::string why_not;
  if (!choose_implementation(task, why_not)) {
    delete task;
    throw NoDeviceError(why_not);
  }
  Task *parent = current_task();
  if (parent->recording && parent->recording->updating()) [[unlikely]] {
    // A taskiter's body run again (nanort_taskiter_update): its argument block only; a task
    // that is not replayable runs as usual where it names no data.
    try {
      if (!task->replayable) {
        parent->recording->unrecorded_in_update(*task);
      } else {
        parent->recording->update(*task);
        delete task;
        return NANORT_SUCCESS;
      }
    } catch (...) {
      delete task;
      throw;
    }
  }
  if (task->reductions) {
    try {
      prepare_reductions(task, parent);
    } catch (...) {
      delete task;
      throw;
    }
  }
  if (parent->recording && task->replayable) [[unlikely]] {  // kept for the replays too
    try {
      parent->recording->record(*task);
    } catch (...) {
      delete task;
      throw;
    }
  }
  task->parent = parent;
  observer_->task_created();
  const bool device = is_device_task(task);
  if (parent->is_final) {
    task->is_final = true;  // descendants of a final task are final too
    if (!device) {
      run_included(task);
      return NANORT_SUCCESS;
    }
    task->undeferred = true;  // a kernel cannot run inline: it runs now and is waited for
  }
  task->has_commutative = false;
  for (const Access &access : task->accesses)
    task->has_commutative = task->has_commutative || access.mode == NANORT_COMMUTATIVE;
  if (!device && task->accesses.empty() && !task->undeferred && !ready_->outranked(task) &&
      ready_->queued_near_more_than(CpuWorkerPool::current_lane(), ready_limit_)) {
    // Plenty of work is queued already and this task waits for nothing: run it here and now
    // (work first). The parent does not count it as a child unless it leaves children behind.
    task->counted_in_parent = false;
    execute(task, CpuWorkerPool::current_lane(), nullptr);
    return NANORT_SUCCESS;
  }
  const bool over_bound = count_child(parent);
  // Once registered, the task may run and be freed by another thread at any moment, unless
  // it is in 'ready' (then nobody else has it yet) or we hold a reference.
  const bool undeferred = task->undeferred;
  if (undeferred) task->add_ref();  // ours until we ran it

  ReadyList ready;
  if (task->accesses.empty())
    ready.push_back(task);  // nothing to order: no need for the domain at all
  else
    parent->domain_for_children().register_task(task, ready);

  if (undeferred && device) {  // the device runs it; the creator waits for its end
    push_ready(ready);
    wait_until([task] { return task->finished.load(std::memory_order_acquire); });
    task->drop_ref();
    return NANORT_SUCCESS;
  }
  if (undeferred) {
    // 'ready' holds at most the task itself: if it is there, nothing to wait for.
    if (ready.empty())
      wait_until([task] { return task->ready_for_creator.load(std::memory_order_acquire); });
    execute(task, CpuWorkerPool::current_lane(), nullptr);
    task->drop_ref();
    return NANORT_SUCCESS;
  }
  if (!device && !ready.empty() && !ready_->outranked(task) &&
      ready_->queued_near_more_than(CpuWorkerPool::current_lane(), ready_limit_)) {
    // Plenty of work is queued already: run this ready task (the only one 'ready' can hold)
    // here and now (work first), which costs no queueing and bounds the queue.
    execute(task, CpuWorkerPool::current_lane(), nullptr);
  } else {
    push_ready(ready);
  }
  if (over_bound) {
    // The creator runs far ahead of execution (tasks waiting for dependences): it helps, or
    // sleeps, until half of its children are done, which bounds memory.
    wait_for_children(parent, static_cast<std::int64_t>(config_.tasks_in_flight / 2));
  }
  return NANORT_SUCCESS;
}

namespace {
// Tasks not run after a failure, ended by the outermost push_ready of this thread: ending one
// releases its successors into push_ready again, and a long chain must not nest that deeply.
NANORT_HOT_TLS thread_local ReadyList *not_run_queue = nullptr;
}  // namespace

void Runtime::push_ready(ReadyList &ready, Task **next) {
  if (ready.empty()) return;
  std::size_t queued = 0;  // CPU tasks that went into the queues
  bool creator_waits = false;
  const int lane = CpuWorkerPool::current_lane();
  ReadyList not_run_here;
  for (Task *task : ready) {
    // After a failed predecessor: ended here, unrun (an undeferred CPU task is ended by its
    // creator, which waits to run it).
    if (task->not_run_after && !(task->undeferred && !is_device_task(task))) [[unlikely]] {
      (not_run_queue ? *not_run_queue : not_run_here).push_back(task);
      continue;
    }
    if (!task->early_released && task->placed_device < 0 && !task->undeferred && task->site &&
        !accelerators_.empty() && (placement_ || affinity_.has(task->label)))
      place(task);
    if (task->early_released && task->early_device >= 0) {
      // Behind its predecessors' kernels on that device.
      managers_[static_cast<std::size_t>(task->early_device)]->push_own(task);
    } else if (task->placed_device >= 0) {
      managers_[static_cast<std::size_t>(task->placed_device)]->push_own(task);
    } else if (is_device_task(task)) {
      // (Released behind kernels of several devices: any device of its kind waits for them.)
      if (task->early_released) early_across_releases_.fetch_add(1, std::memory_order_relaxed);
      const nanort_device_kind kind = static_cast<nanort_device_kind>(task->impl->device);
      device_queues_[kind]->push(task);
      for (const auto &manager : managers_) manager->notify();
    } else if (task->undeferred) {
      task->ready_for_creator.store(true);
      creator_waits = true;
    } else {
      // A CPU task: this thread's queue, or (a successor this worker released) its 'next',
      // to run here next, warm in its cache.
      if (ready_->push(task, lane, next)) ++queued;
    }
  }
  if (queued) ready_->wake(queued);
  if (creator_waits) idle_.notify_all();
  if (!not_run_here.empty()) {
    struct Draining {  // (reset however the loop ends)
      explicit Draining(ReadyList *queue) { not_run_queue = queue; }
      ~Draining() { not_run_queue = nullptr; }
    } draining(&not_run_here);
    for (std::size_t i = 0; i < not_run_here.size(); ++i) {  // (it grows while ending them)
      Task *task = not_run_here[i];
      not_run(task);
      finish_body(task, next);
    }
  }
}

void Runtime::not_run(Task *task) {
  observer_->task_not_run();
  task->parent->record_error(task->describe() + " was not run: it depends on " +
                             *task->not_run_after);
}

// ---------------------------------------------------------------------------------------------
// Execution

template <class Done>
void Runtime::run_from(Task *task, int lane, Done done) {
  while (task) {
    Task *next = nullptr;
    execute(task, lane, &next);
    // A waiter whose wait is over returns now (not after a whole chain of successors), and a
    // task that arrived with a higher priority runs before the one held here.
    if (next && (done() || ready_->outranked(next))) {
      if (ready_->push(next, lane)) ready_->wake();
      return;
    }
    task = next;
  }
}

void Runtime::run_body(Task *task, int lane) {
  Task *const previous = tls_current;
  tls_current = task;
  const bool recording = observer_->recording();
  const bool measuring = perf_model_ && task->impl && task->site && !task->not_run_after;
  const std::uint64_t start = recording || measuring ? Observer::now_ns() : 0;
  bool failed = false;
  if (task->not_run_after) [[unlikely]] {  // an undeferred task after a failure: not run
    if (task->site) not_run(task);
  } else if (task->impl) {
    try {
      acquire_host_data(task);
      task->impl->smp_fn(task->args);
      if (task->recording) [[unlikely]]
        end_abandoned_recording(task);
      settle_owned(task, false);  // (launched replays: the task ends after them)
    } catch (const std::exception &e) {
      task->failed = true;
      task->parent->record_error(task->describe() + " threw: " + e.what());
    } catch (...) {
      task->failed = true;
      task->parent->record_error(task->describe() + " threw an exception of unknown type");
    }
    failed = task->failed;  // (also set by nanort_task_fail in the body)
  }
  give_back_credits(task);
  tls_current = previous;
  if (measuring) {
    if (!failed)
      perf_model_->record(perf_key(*task, "smp"), static_cast<double>(Observer::now_ns() - start) * 1e-9);
    cpu_expected_ns_.fetch_sub(task->expected_ns, std::memory_order_relaxed);
  }
  if (recording && task->impl && !task->not_run_after)  // (internal tasks have no body to show)
    observer_->task_ran(lane >= 0 ? lane : config_.cpu_workers - 1, *task, start,
                        Observer::now_ns(), failed);
  // The argument block lives on until the task completes (complete()): the body's private
  // variables are there, and children that share them may still run.
}

void Runtime::execute(Task *task, int lane, Task **next) {
  run_body(task, lane);
  if (!task->counted_in_parent && task->children() > 0) {
    // Run at once but it left children running: from now on the parent waits for it too.
    // (Run by the thread of the parent's body, which alone writes counted_children: without
    // it the parent's end would not count 'alive' down and would complete it at once.)
    task->parent->alive.fetch_add(1, std::memory_order_relaxed);
    task->parent->counted_children = true;
    task->counted_in_parent = true;
  }
  finish_body(task, next);
}

void Runtime::run_included(Task *task) {
  // A child of a final task runs here and now, in program order; no dependences needed. Its
  // own children are included too, so when the body returns everything it made is done.
  run_body(task, CpuWorkerPool::current_lane());
  task->destroy_args();  // (its children were included: all done)
  if (task->reductions) release_reduction_slots(task);
  for (Failure &failure : task->take_errors()) task->parent->record_failure(std::move(failure));
  task->drop_ref();
}

void Runtime::finish_body(Task *task, Task **next) {
  // Without children 'alive' holds just the body: no need to write it (its line stays with
  // the creator, which writes it again when it reuses the task's memory).
  if (!task->counted_children || task->alive.fetch_sub(1, std::memory_order_acq_rel) == 1)
    complete(task, next);
}

void Runtime::complete(Task *task, Task **next) {
  // The body is done and so is every child: release the dependences, tell the parent. The
  // argument block goes first (OmpSs-2: a task's data environment lives until its children
  // are done), so its destructors' effects come before the successors.
  task->destroy_args();
  Task *const parent = task->parent;
  for (Failure &failure : task->take_errors()) parent->record_failure(std::move(failure));
  if (task->child_domain) task->child_domain.reset();  // (combines the reductions still open)
  if (task->reductions) release_reduction_slots(task);
  if (!task->counted_in_parent) {  // ran at once, without accesses: nobody else to tell
    task->drop_ref();
    return;
  }
  ReadyList ready;
  if (task->in_domain)
    parent->child_domain->release(task, ready, parent == (tls_current ? tls_current : tls_root));
  else if (task->replayed) [[unlikely]]
    task->replay->completed(task, ready);
  push_ready(ready, next);
  if (task->replayed) [[unlikely]] {  // its creator waits on the replay's own count
    if (task->replay->ended(task)) idle_.notify_all();  // (the task is not touched after)
    return;
  }
  if (task->undeferred) {  // its creator may wait for it alone
    task->finished.store(true, std::memory_order_release);
    idle_.notify_all();
  }
  // The parent's 'alive' counts its body, its unfinished children and its waiters. Reaching
  // 0: the parent completes too. With a waiter, reaching no children (taskwait) or the
  // resume mark of the in-flight bound: wake it. (Nothing of the parent is touched after
  // the decrement unless it completes: a waiter may end the parent's body at once.)
  const std::int64_t before = parent->alive.fetch_sub(1, std::memory_order_acq_rel);
  task->drop_ref();
  if (before == 1) {
    complete(parent, next);
    return;
  }
  if (before >= Task::kWaiter) {
    const std::int64_t children_left = before % Task::kWaiter - 2;
    if (children_left == 0 ||
        children_left == static_cast<std::int64_t>(config_.tasks_in_flight / 2))
      idle_.notify_all();
  }
}

bool Runtime::count_child(Task *parent) {
  // (Release stores: a stop that takes the credits of this thread's root sees the batch's
  // addition to 'alive' before it subtracts them.)
  if (!parent->counted_children) parent->counted_children = true;
  const std::int64_t credits = parent->child_credits.load(std::memory_order_relaxed);
  if (credits > 0) {
    parent->child_credits.store(credits - 1, std::memory_order_release);
    return false;
  }
  // A batch small against the bound, so that the bound still holds to within a few percent.
  const std::int64_t batch =
      std::clamp<std::int64_t>(static_cast<std::int64_t>(config_.tasks_in_flight / 16), 1, 64);
  const std::int64_t before = parent->alive.fetch_add(batch, std::memory_order_relaxed);
  parent->child_credits.store(batch - 1, std::memory_order_release);
  return before % Task::kWaiter - 1 >= static_cast<std::int64_t>(config_.tasks_in_flight);
}

void Runtime::give_back_credits(Task *task) {
  if (task->child_credits.load(std::memory_order_relaxed) == 0) return;
  // Taken whole: stop() gives back the credits of other threads' roots this way too.
  const std::int64_t credits = task->child_credits.exchange(0, std::memory_order_acquire);
  if (credits != 0) task->alive.fetch_sub(credits, std::memory_order_relaxed);
}

void Runtime::wait_for_children(Task *task, std::int64_t at_most) {
  give_back_credits(task);  // (exact counts for the children that wake us)
  if (task->children() <= at_most) return;
  task->alive.fetch_add(Task::kWaiter);  // completing children now know to wake us
  wait_until([task, at_most] { return task->children() <= at_most; });
  task->alive.fetch_sub(Task::kWaiter);
}

template <class Done>
void Runtime::help_until(int lane, Done done) {
  help_until(lane, done, idle_);
}

template <class Done>
void Runtime::help_until(int lane, Done done, IdleWaiters &sleep_in) {
  // Run ready tasks; when there are none, poll for a while as a spinner (ReadyPath: a push
  // wakes nobody while someone spins), then sleep until a push or the event 'done' waits for.
  // A thread woken from its sleep searches as a spinner first, so that it wakes the next one
  // if it finds work (workers come up one by one while work remains).
  const std::uint64_t spin_ns = static_cast<std::uint64_t>(config_.spin_us) * 1000;
  bool spinning = false;
  std::uint64_t deadline = 0;
  unsigned polls = 0;
  // A few looks first, unannounced: work often comes within a microsecond, and not writing
  // the spinner count then keeps that line quiet for the threads that push.
  unsigned quiet_looks = 0;
  // While spinning, between two fruitless looks, a pause that doubles up to 16: each look
  // reads the other threads' queue ends, and fewer reads leave those lines to their owners.
  // (Not longer: a chain of dependent tasks waits that long for each hand-over.)
  unsigned backoff = 1;
  const auto pause = [&backoff] {
    for (unsigned i = 0; i < backoff; ++i) NANORT_CPU_RELAX();
    if (backoff < 16) backoff *= 2;
  };
  const auto spin = [&] {
    spinning = ready_->start_spinning();
    deadline = Observer::now_ns() + spin_ns;
    polls = 0;
  };
  while (!done()) {
    if (Task *task = ready_->take(lane)) {
      if (spinning) {
        spinning = false;
        ready_->stop_spinning(true, false);
      }
      run_from(task, lane, done);
      quiet_looks = 0;
      backoff = 1;
      continue;
    }
    if (!spinning && spin_ns > 0 && quiet_looks < 16) {
      ++quiet_looks;
      NANORT_CPU_RELAX();
      continue;
    }
    if (!spinning && spin_ns > 0) {
      spin();
      if (spinning) continue;
    } else if (spinning && ((++polls & 3) != 0 || Observer::now_ns() < deadline)) {
      pause();
      continue;
    }
    if (spinning) {
      spinning = false;
      ready_->stop_spinning(false, false);  // (the check before sleeping sees what it left)
    }
    sleep_in.sleep_unless([&] { return done() || ready_->any_work(); });
    ready_->woken();
    backoff = 1;
    spin();
  }
  if (spinning) ready_->stop_spinning(false, true);
}

template <class Done>
void Runtime::wait_until(Done done) {
  if (!done()) help_until(CpuWorkerPool::current_lane(), done);
}

void Runtime::worker_loop(int lane) {
  help_until(lane, [this] { return stopping_.load(std::memory_order_relaxed); });
}

bool Runtime::in_task() { return tls_current != nullptr; }

Task *Runtime::running_task() { return tls_current; }

void Runtime::block_until(int (*ready)(void *), void *arg) {
  spares_->block_until(ready, arg, in_task(), config_.block_poll_us);
}

void Runtime::blocking_call(void (*call)(void *), void *arg) {
  spares_->blocking_call(call, arg, in_task());
}

// ---------------------------------------------------------------------------------------------
// Waiting

namespace {
// The payload of the first failure collected by this thread's last taskwait, until
// nanort_take_failure_payload takes it (the C++ header: the task's exception). Plain
// thread-locals: exit() destroys the main thread's C++ thread-locals before the runtime stops,
// and the stop may still run tasks that wait (and collect) on this thread. A holder frees a
// payload never taken when the thread ends; after that, payloads are freed at once.
struct PendingPayload {
  void *payload;
  void (*destroy)(void *);
};
thread_local PendingPayload pending_payload{nullptr, nullptr};
thread_local bool payload_holder_gone = false;
void drop_pending_payload() {
  if (pending_payload.payload && pending_payload.destroy)
    pending_payload.destroy(pending_payload.payload);
  pending_payload = {nullptr, nullptr};
}
struct PayloadHolder {
  ~PayloadHolder() {
    drop_pending_payload();
    payload_holder_gone = true;
  }
};
thread_local PayloadHolder payload_holder;
}  // namespace

void *Runtime::take_failure_payload() {
  void *taken = pending_payload.payload;
  pending_payload = {nullptr, nullptr};
  return taken;
}

nanort_status Runtime::collect_errors(Task *task) {
  std::vector<Failure> failures = task->take_errors();
  drop_pending_payload();  // a payload not taken by now is not wanted
  if (failures.empty()) return NANORT_SUCCESS;
  std::string text;
  for (Failure &failure : failures) {
    text += (text.empty() ? "" : "\n") + failure.message;
    if (failure.payload && !pending_payload.payload && !payload_holder_gone) {
      (void)&payload_holder;  // (its destructor now runs when the thread ends)
      pending_payload = {failure.payload, failure.destroy};
      failure.take_payload();
    }
  }
  throw TaskFailedError(text);
}

namespace {
void refuse_while_recording(const Task *task, const char *what) {
  if (task->recording)
    throw std::invalid_argument(std::string(what) +
                                " inside a taskiter's body: the replays would not wait there");
}
}  // namespace

nanort_status Runtime::taskwait(bool flush) {
  Task *task = current_task();
  refuse_while_recording(task, "taskwait");
  const nanort_status replayed = settle_owned(task, true);
  wait_for_children(task, 0);
  if (task->child_domain) task->child_domain->clear();
  if (flush && directory_) directory_->flush();
  const nanort_status status = collect_errors(task);
  return replayed ? replayed : status;
}

nanort_status Runtime::taskwait_on(const void *const *addresses, const std::size_t *sizes,
                                   std::size_t count) {
  refuse_while_recording(current_task(), "taskwait on");
  const nanort_status replayed = settle_owned(current_task(), true);
  // An empty undeferred task with inout accesses: it becomes ready exactly when every earlier
  // sibling touching those bytes is done.
  Task *marker = create(nullptr, 0);
  marker->label = "taskwait on";
  marker->undeferred = true;
  for (std::size_t i = 0; i < count; ++i)
    if (addresses[i] && sizes[i])
      marker->accesses.push_back({dc::Region::contiguous(addresses[i], sizes[i]), NANORT_INOUT});
  submit(marker);
  if (directory_)
    for (std::size_t i = 0; i < count; ++i)
      if (addresses[i] && sizes[i])
        directory_->flush(dc::Region::contiguous(addresses[i], sizes[i]));
  const nanort_status status = collect_errors(current_task());
  return replayed ? replayed : status;
}

void Runtime::help_as_spare(const std::function<bool()> &leave) { help_until(-1, leave, spare_idle_); }

// ---------------------------------------------------------------------------------------------
// Taskiter

void Runtime::end_abandoned_recording(Task *task) {
  TaskIter *iter = task->recording;
  const char *why;
  if (iter->updating()) {  // returned before the replay: the update goes unused
    iter->discard_update();
    why = " returned with a taskiter's update under way (nanort_taskiter_update without "
          "nanort_taskiter_replay or nanort_taskiter_end after it): that iteration was not run";
  } else {
    {
      // What it recorded are ordinary children that run on and tell it where they launch: it
      // stays until the runtime stops.
      std::lock_guard<std::mutex> guard(taskiters_mutex_);
      iter->abandon();
      kept_taskiters_.emplace_back(iter);
    }
    {
      std::lock_guard<std::mutex> guard(taskgraphs_mutex_);  // (a taskgraph's: records again)
      for (auto &[key, entry] : taskgraphs_)
        if (entry.recording == iter) {
          entry.recording = nullptr;
          entry.busy = false;
        }
    }
    why = " returned with a taskiter or taskgraph still recording (nanort_taskiter_end or "
          "nanort_taskgraph_end was not called): nothing of it was replayed";
  }
  task->recording = nullptr;
  task->failed = true;
  task->parent->record_error(task->describe() + why);
}

TaskIter *Runtime::taskiter_begin() {
  Task *owner = current_task();
  if (owner->is_final) return nullptr;  // its tasks run at once, in order: nothing to replay
  if (owner->recording)
    throw std::invalid_argument("nanort_taskiter_begin: a taskiter inside a taskiter's body "
                                "(they do not nest)");
  owner->recording = new TaskIter(owner);
  return owner->recording;
}

nanort_status Runtime::end_recording(TaskIter *iter, Task *owner) {
  owner->recording = nullptr;
  wait_for_children(owner, 0);  // the recorded iteration (and the owner's tasks before it)
  if (owner->child_domain) owner->child_domain->clear();
  if (!iter->spoiled().empty())
    throw std::invalid_argument("taskiter: " + iter->spoiled() + "; no iteration replayed");
  return collect_errors(owner);  // (a failure: nothing more runs)
}

nanort_status Runtime::settle(TaskIter *iter, Task *owner, bool collect) {
  if (!iter->in_flight) return NANORT_SUCCESS;
  if (iter->graph_device >= 0)  // (the launcher is a child)
    wait_for_children(owner, 0);
  else
    wait_until([iter] { return iter->replay_done(); });
  iter->in_flight = false;
  replays_in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  if (!collect) return NANORT_SUCCESS;
  nanort_status status = collect_errors(owner);
  if (status) iter->fail();
  return status;
}

nanort_status Runtime::settle_owned(Task *owner, bool collect) {
  // (A launched replay's tasks are not the owner's children: whatever waits for those, or
  // ends the owner, waits for them first.)
  if (replays_in_flight_.load(std::memory_order_acquire) == 0) return NANORT_SUCCESS;
  std::vector<TaskIter *> mine;
  {
    std::lock_guard<std::mutex> guard(taskiters_mutex_);
    for (const auto &kept : kept_taskiters_)
      if (kept->in_flight && kept->owner() == owner) mine.push_back(kept.get());
  }
  nanort_status first = NANORT_SUCCESS;
  for (TaskIter *iter : mine)
    if (nanort_status status = settle(iter, owner, collect); status && !first) first = status;
  return first;
}

nanort_status Runtime::replay(TaskIter *iter, Task *owner, std::uint64_t count, bool more) {
  if (nanort_status status = settle(iter, owner)) return status;
  if (count == 0) return NANORT_SUCCESS;
  if (!iter->spoiled().empty())
    throw std::invalid_argument("taskiter: " + iter->spoiled() + "; nothing more is replayed");
  if (iter->failed())
    throw std::invalid_argument("taskiter: an earlier replay failed; nothing more is replayed");
  if (!iter->built()) {
    iter->build();
    iter->make_tasks([this](const nanort_task_site *site, std::size_t args_size) {
      return create(site, args_size);
    });
  }
  if (iter->size() == 0) return NANORT_SUCCESS;
  std::vector<Task *> roots;
  std::uint64_t k = 0;
  for (; k < count && !iter->failed(); ++k) {
    if (iter->graph_device >= 0 || try_graph_replays(iter)) break;
    iter->arm(roots, k + 1 == count && !more, owner);
    for (std::size_t i = 0; i < iter->size(); ++i) observer_->task_created();
    ReadyList ready;
    for (Task *root : roots) ready.push_back(root);
    push_ready(ready);
    if (more && k + 1 == count) {  // (nanort_taskiter_launch: waited for at the next call)
      iter->in_flight = true;
      replays_in_flight_.fetch_add(1, std::memory_order_acq_rel);
      return NANORT_SUCCESS;
    }
    wait_until([iter] { return iter->replay_done(); });
  }
  if (k < count && iter->graph_device >= 0 && !iter->failed()) {
    // The rest as graph launches, all by one task in the owner's domain: its data staged
    // once, its argument block the number of launches (CudaDevice::launch), its writes
    // recorded as any device task's, and its results home early once they are done.
    const std::uint64_t launches = count - k;
    Task *launcher = create(iter->tasks().front()->site, sizeof launches);
    std::memcpy(launcher->args, &launches, sizeof launches);
    launcher->label = "taskiter graph";
    for (const Access &access : iter->graph_accesses) launcher->accesses.push_back(access);
    launcher->copy_deps = true;
    launcher->wanted_kind = accelerators_[static_cast<std::size_t>(iter->graph_device)]->kind();
    launcher->wanted_index = iter->graph_index;
    launcher->replay = iter;  // (and not replayed: the graph's launches, CudaDevice::launch)
    launcher->replay_index = kGraphLauncher;
    iter->set_last(!more);  // (more to come: its results stay on the device)
    if (nanort_status status = submit(launcher)) return status;
    if (more) {
      iter->in_flight = true;
      replays_in_flight_.fetch_add(1, std::memory_order_acq_rel);
      return NANORT_SUCCESS;
    }
    wait_for_children(owner, 0);
    nanort_status status = collect_errors(owner);
    if (status) iter->fail();
    return status;
  }
  return collect_errors(owner);
}

bool Runtime::try_graph_replays(TaskIter *iter) {
  if (!config_.taskiter_graphs || iter->graph_device == -2) return false;
  const int device = iter->one_device();
  const Accelerator *where = device >= 0 ? accelerators_[static_cast<std::size_t>(device)].get()
                                         : nullptr;
  if (!where || !where->replays_as_graph() ||
      (where->kind() == NANORT_DEVICE_OPENCL && !config_.taskiter_opencl_graphs)) {
    iter->graph_device = -2;  // never
    return false;
  }
  std::vector<Access> merged = iter->merged_accesses();
  // (Data that kernels could not be given inside the merged spans: replayed task by task,
  // each task's data placed where its kernel can be given it.)
  if (!iter->starts_aligned(merged, accelerators_[static_cast<std::size_t>(device)]
                                        ->memory().argument_alignment())) {
    iter->graph_device = -2;
    return false;
  }
  int index = 0;
  for (int d = 0; d < device; ++d)
    index += accelerators_[static_cast<std::size_t>(d)]->kind() == where->kind();
  iter->graph_index = index;
  iter->graph_accesses = std::move(merged);
  iter->graph_device = device;
  return true;
}

nanort_status Runtime::taskiter_replay(TaskIter *iter, std::uint64_t replays, bool more) {
  Task *owner = current_task();
  if (owner->recording == iter && iter->updating()) {  // the update made since _update
    owner->recording = nullptr;
    if (nanort_status status = settle(iter, owner)) {  // (the replay before: tasks idle)
      iter->discard_update();
      return status;
    }
    if (replays == 0) {
      iter->discard_update();
    } else {
      iter->finish_update();
    }
  } else if (owner->recording == iter) {  // the first call: the recording ends, the graph is kept
    std::unique_ptr<TaskIter> kept(iter);
    nanort_status status = end_recording(iter, owner);
    if (status) iter->fail();  // (the recorded iteration failed: nothing is replayed)
    {
      std::lock_guard<std::mutex> guard(taskiters_mutex_);
      kept_taskiters_.push_back(std::move(kept));
    }
    if (status) return status;
  } else {
    check_kept(iter, owner, "nanort_taskiter_replay");
  }
  return replay(iter, owner, replays, more);
}

void Runtime::check_kept(TaskIter *iter, Task *owner, const char *call) {
  // (Looked up before 'iter' is read: it may be gone.)
  std::lock_guard<std::mutex> guard(taskiters_mutex_);
  bool found = false;
  for (const auto &kept : kept_taskiters_) found = found || kept.get() == iter;
  if (!found || iter->owner() != owner)
    throw std::invalid_argument(std::string(call) + ": no such taskiter in the calling task "
                                "(ended already, or begun by another task)");
}

nanort_status Runtime::taskiter_update(TaskIter *iter) {
  Task *owner = current_task();
  if (owner->recording && owner->recording->updating())
    throw std::invalid_argument("nanort_taskiter_update: an update is under way in the calling "
                                "task (nanort_taskiter_replay runs it)");
  if (owner->recording && owner->recording != iter)
    throw std::invalid_argument("nanort_taskiter_update: another taskiter or taskgraph records "
                                "in the calling task (they do not nest)");
  if (owner->recording == iter) {  // the first call: the recording ends, as a replay's would
    if (nanort_status status = taskiter_replay(iter, 0)) return status;
  } else {
    check_kept(iter, owner, "nanort_taskiter_update");
  }
  if (!iter->spoiled().empty())
    throw std::invalid_argument("taskiter: " + iter->spoiled() + "; nothing more is replayed");
  if (iter->failed()) {  // (a launched replay's own failure first, where it is one)
    if (nanort_status status = settle(iter, owner)) return status;
    throw std::invalid_argument("taskiter: an earlier replay failed; nothing more is replayed");
  }
  iter->begin_update();
  owner->recording = iter;  // (updating: its submits go to the recording, not run)
  return NANORT_SUCCESS;
}

nanort_status Runtime::taskiter_end(TaskIter *iter, std::uint64_t replays) {
  Task *owner = current_task();
  std::unique_ptr<TaskIter> recording;
  const bool updated = owner->recording == iter && iter->updating();
  if (updated) owner->recording = nullptr;  // (kept below; its update used or dropped there)
  if (owner->recording == iter) {  // (before 'iter' is read: it may be gone)
    recording.reset(iter);
    if (nanort_status status = end_recording(iter, owner)) return status;
  } else {
    std::lock_guard<std::mutex> guard(taskiters_mutex_);
    for (auto &kept : kept_taskiters_)
      if (kept.get() == iter && iter->owner() == owner) {
        recording = std::move(kept);
        kept = std::move(kept_taskiters_.back());
        kept_taskiters_.pop_back();
        break;
      }
    if (!recording)
      throw std::invalid_argument("nanort_taskiter_end: no such taskiter records in the calling "
                                  "task (ended already, or begun by another task)");
  }
  if (nanort_status status = settle(iter, owner)) {
    if (updated) iter->discard_update();
    return status;
  }
  if (updated) {
    if (replays == 0 || recording->failed()) {
      iter->discard_update();
    } else {
      iter->finish_update();
    }
  }
  if (recording->failed()) return NANORT_SUCCESS;  // (its failure was returned already)
  return replay(iter, owner, replays);
}

nanort_status Runtime::taskgraph_begin(const void *construct, std::uint64_t graph_id, bool reset,
                                       TaskIter **graph, bool &run_block) {
  Task *owner = current_task();
  *graph = nullptr;
  run_block = true;
  if (owner->recording)
    throw std::invalid_argument("taskgraph inside the body of a taskiter or of another "
                                "taskgraph (they do not nest)");
  // The replayed tasks are not matched against the caller's earlier ones: those end first.
  wait_for_children(owner, 0);
  if (owner->child_domain) owner->child_domain->clear();
  if (nanort_status status = collect_errors(owner)) return status;
  if (owner->is_final) return NANORT_SUCCESS;  // its tasks run at once: the region runs
  std::unique_lock<std::mutex> lock(taskgraphs_mutex_);
  TaskGraph &entry = taskgraphs_[{construct, graph_id}];
  if (entry.busy) return NANORT_SUCCESS;  // recorded or replayed by another task right now
  entry.busy = true;
  if (entry.graph && !reset) {
    TaskIter *recorded = entry.graph.get();
    lock.unlock();
    nanort_status status = NANORT_SUCCESS;
    try {
      status = replay(recorded, owner, 1);
    } catch (...) {
      lock.lock();
      entry.busy = false;
      throw;
    }
    lock.lock();
    if (status) entry.graph.reset();  // recorded again at the next encounter
    entry.busy = false;
    run_block = false;
    return status;
  }
  entry.graph.reset();  // (graph_reset: its tasks ended with its last replay)
  entry.recording = new TaskIter(owner);
  owner->recording = entry.recording;
  *graph = entry.recording;
  return NANORT_SUCCESS;
}

nanort_status Runtime::taskgraph_end(TaskIter *graph, bool wait) {
  Task *owner = current_task();
  if (!graph) {
    if (!wait) return NANORT_SUCCESS;
    wait_for_children(owner, 0);
    return collect_errors(owner);
  }
  if (owner->recording != graph)
    throw std::invalid_argument("nanort_taskgraph_end: no such taskgraph records in the calling "
                                "task");
  std::unique_ptr<TaskIter> recording(graph);
  const auto keep = [&](bool ok) {
    std::lock_guard<std::mutex> guard(taskgraphs_mutex_);
    for (auto &[key, entry] : taskgraphs_)
      if (entry.recording == graph) {
        entry.recording = nullptr;
        entry.busy = false;
        if (ok) entry.graph = std::move(recording);
      }
  };
  nanort_status status;
  try {
    status = end_recording(graph, owner);
  } catch (...) {
    keep(false);
    throw;
  }
  if (!status) {  // matched now, so that a replay starts at once
    graph->build();
    graph->make_tasks([this](const nanort_task_site *site, std::size_t args_size) {
      return create(site, args_size);
    });
  }
  keep(status == NANORT_SUCCESS);
  return status;
}

}  // namespace nanort::rt
