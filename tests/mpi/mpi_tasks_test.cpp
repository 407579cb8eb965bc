// MPI inside tasks, run with mpiexec on 2 and 4 ranks (tests/mpi/tests.cmake). Linked with
// nanort-mpi. Checks:
//  1. MPI_Init (plain) gave MPI_THREAD_MULTIPLE: nanort-mpi asked for it.
//  2. The OmpSs NBody pattern: tasks compute each rank's block, an smp task with dependences
//     wraps MPI_Allgather of the blocks, the next step's tasks read every block.
//  3. No deadlock with fewer workers than tasks blocked in MPI: each rank first submits
//     receive tasks, then the send tasks their partner's receives wait for; run with one CPU
//     worker, a blocking receive that held it would stop everything.
#include <mpi.h>
#include <nanort/nanort.hpp>

#include <cstdio>
#include <vector>

namespace {

int failures = 0;
#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::printf("FAILED (rank %d): %s (%s:%d)\n", rank, #cond, __FILE__, __LINE__); \
      ++failures;                                                                    \
    }                                                                                \
  } while (0)

int rank = 0, ranks = 1;

void allgather_steps() {
  constexpr int block = 1000, steps = 3;
  std::vector<double> all(static_cast<std::size_t>(block) * ranks, 0.0), mine(block);
  double *a = all.data(), *m = mine.data();
  for (int step = 0; step < steps; ++step) {
    // Each rank's new block from every block of the previous step (a sum, so that a missing
    // or stale block changes the result).
    nanort::task("compute").in(a, all.size()).out(m, mine.size()).spawn([=] {
      double total = 0;
      for (int r = 0; r < ranks; ++r) total += a[static_cast<std::size_t>(r) * block];
      for (int i = 0; i < block; ++i) m[i] = total + rank + i * 1e-3;
    });
    nanort::task("allgather").in(m, mine.size()).out(a, all.size()).spawn([=] {
      MPI_Allgather(m, block, MPI_DOUBLE, a, block, MPI_DOUBLE, MPI_COMM_WORLD);
    });
  }
  nanort::taskwait();
  // The same recurrence on one process: first elements s_r(step) = T(step-1) + r.
  double total = 0;
  for (int step = 0; step < steps; ++step) {
    double next = 0;
    for (int r = 0; r < ranks; ++r) next += total + r;
    if (step < steps - 1) total = next;
  }
  for (int r = 0; r < ranks; ++r)
    for (int i = 0; i < block; i += 97)
      CHECK(all[static_cast<std::size_t>(r) * block + i] == total + r + i * 1e-3);
}

void receives_before_sends() {
  constexpr int kMessages = 6;
  const int partner = rank ^ 1;
  if (partner >= ranks) return;
  std::vector<int> received(kMessages, -1), sent(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    int *slot = &received[i];
    nanort::task("receive").out(slot).spawn([=] {
      CHECK(nanort_in_task() == 1);
      MPI_Recv(slot, 1, MPI_INT, partner, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    });
  }
  for (int i = kMessages - 1; i >= 0; --i) {  // the last receive's message first
    sent[i] = 100 * rank + i;
    const int *value = &sent[i];
    nanort::task("send").in(value).spawn([=] {
      MPI_Send(value, 1, MPI_INT, partner, i, MPI_COMM_WORLD);
    });
  }
  nanort::taskwait();
  for (int i = 0; i < kMessages; ++i) CHECK(received[i] == 100 * partner + i);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  CHECK(level == MPI_THREAD_MULTIPLE);
  allgather_steps();
  receives_before_sends();
  // A collective inside a task and one outside, together.
  int sum = 0, one = 1;
  nanort::task("allreduce").out(&sum).spawn([&] {
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  nanort::taskwait();
  CHECK(sum == ranks);
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0)
    std::printf("all results correct on %d ranks, %d CPU worker(s) each\n", ranks,
                nanort_device_count(NANORT_DEVICE_SMP));
  nanort_shutdown();
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
