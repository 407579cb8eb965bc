// MPI inside tasks, run with mpiexec on 2 and 4 ranks (tests/mpi/tests.cmake). Linked with
// nanort-mpi. Checks:
//  1. MPI_Init (plain) gave MPI_THREAD_MULTIPLE: nanort-mpi asked for it.
//  2. The OmpSs NBody pattern: tasks compute each rank's block, an smp task with dependences
//     wraps MPI_Allgather of the blocks, the next step's tasks read every block.
//  3. No deadlock with fewer workers than tasks blocked in MPI: each rank first submits
//     receive tasks, then the send tasks their partner's receives wait for; run with one CPU
//     worker, a blocking receive that held it would stop everything.
//  4. The same with the other blocking point-to-point calls: MPI_Probe + MPI_Recv of a message
//     of unknown length, MPI_Waitany over two receives, MPI_Mprobe + MPI_Mrecv, all waiting
//     for synchronous sends (MPI_Ssend) of later tasks.
//  5. The other collectives inside tasks (Gatherv, Scan, Reduce_scatter_block, Comm_dup with
//     an Allreduce on the new communicator), chained by dependences.
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

void probes_and_synchronous_sends() {
  const int partner = rank ^ 1;
  if (partner >= ranks) return;
  std::vector<int> unknown(16, -1), any(2, -1), matched(1, -1);
  int unknown_count = -1, first_index = -1;
  int *u = unknown.data(), *a = any.data(), *m = matched.data(), *uc = &unknown_count,
      *fi = &first_index;
  nanort::task("probe").out(u, unknown.size()).out(uc).spawn([=] {
    MPI_Status status;
    MPI_Probe(partner, 10, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, uc);
    MPI_Recv(u, *uc, MPI_INT, partner, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  });
  nanort::task("waitany").out(a, any.size()).out(fi).spawn([=] {
    MPI_Request requests[2];
    MPI_Irecv(&a[0], 1, MPI_INT, partner, 11, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&a[1], 1, MPI_INT, partner, 12, MPI_COMM_WORLD, &requests[1]);
    int index = -1;
    MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
    *fi = index;
    MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
  });
  nanort::task("mprobe").out(m).spawn([=] {
    MPI_Message message;
    MPI_Mprobe(partner, 13, MPI_COMM_WORLD, &message, MPI_STATUS_IGNORE);
    MPI_Mrecv(m, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
  });
  static const int seven[7] = {1, 2, 3, 4, 5, 6, 7};
  const int base = 100 * rank;
  nanort::task("ssend 13").spawn([=] {
    const int v = base + 13;
    MPI_Ssend(&v, 1, MPI_INT, partner, 13, MPI_COMM_WORLD);
  });
  nanort::task("ssend 12").spawn([=] {
    const int v = base + 12;
    MPI_Ssend(&v, 1, MPI_INT, partner, 12, MPI_COMM_WORLD);
  });
  nanort::task("ssend 11").spawn([=] {
    const int v = base + 11;
    MPI_Ssend(&v, 1, MPI_INT, partner, 11, MPI_COMM_WORLD);
  });
  nanort::task("ssend 10").spawn([=] {
    MPI_Ssend(seven, 7, MPI_INT, partner, 10, MPI_COMM_WORLD);
  });
  nanort::taskwait();
  const int other = 100 * partner;
  CHECK(unknown_count == 7);
  for (int i = 0; i < 7; ++i) CHECK(unknown[i] == i + 1);
  CHECK(any[0] == other + 11 && any[1] == other + 12);
  CHECK(first_index == 0 || first_index == 1);
  CHECK(matched[0] == other + 13);
}

void other_collectives() {
  std::vector<int> gathered(static_cast<std::size_t>(ranks) * (ranks + 1) / 2, -1);
  std::vector<int> counts(ranks), displs(ranks), mine(rank + 1, rank);
  for (int r = 0, at = 0; r < ranks; at += ++r) counts[r] = r + 1, displs[r] = at;
  int prefix = -1, scattered = -1;
  MPI_Comm dup = MPI_COMM_NULL;
  int dup_sum = -1;
  int *g = gathered.data(), *p = &prefix, *sc = &scattered, *ds = &dup_sum;
  const int *c = counts.data(), *d = displs.data(), *mi = mine.data();
  MPI_Comm *dp = &dup;
  // One chain: every rank makes the calls in the same order.
  nanort::task("gatherv").inout(g, gathered.size()).spawn([=] {
    MPI_Gatherv(mi, rank + 1, MPI_INT, g, c, d, MPI_INT, 0, MPI_COMM_WORLD);
  });
  nanort::task("scan").in(g, gathered.size()).out(p).spawn([=] {
    MPI_Scan(&rank, p, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  nanort::task("reduce_scatter").in(p).out(sc).spawn([=] {
    std::vector<int> ones(static_cast<std::size_t>(ranks), 1);
    MPI_Reduce_scatter_block(ones.data(), sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  nanort::task("comm_dup").in(sc).out(dp).out(ds).spawn([=] {
    MPI_Comm_dup(MPI_COMM_WORLD, dp);
    const int one = 1;
    MPI_Allreduce(&one, ds, 1, MPI_INT, MPI_SUM, *dp);
  });
  nanort::taskwait();
  if (rank == 0)
    for (int r = 0; r < ranks; ++r)
      for (int i = 0; i < r + 1; ++i) CHECK(gathered[displs[r] + i] == r);
  CHECK(prefix == rank * (rank + 1) / 2);
  CHECK(scattered == ranks);
  CHECK(dup_sum == ranks);
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
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
  probes_and_synchronous_sends();
  other_collectives();
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
