/* nanort-mpi: MPI inside tasks. Linked before the MPI library, it replaces MPI's blocking
 * calls through the MPI profiling interface (each calls its PMPI_ twin). Called from inside a
 * task, a point-to-point call or wait becomes its non-blocking form plus a wait in which the
 * task's thread polls MPI_Test (nanort_block_until), and a collective is made as it is
 * (nanort_block_call); either way a spare thread runs other tasks meanwhile. So a task blocked
 * in MPI never holds a CPU worker that the task it waits for may need: a receive whose send
 * is a later task completes whatever the number of workers. Outside tasks, every call is
 * MPI's own. MPI_Init and MPI_Init_thread ask for MPI_THREAD_MULTIPLE (tasks call MPI from any
 * worker at once) and stop the program with a clear message when the library lacks it. */
/* (MPI's C API; its C++ bindings are deprecated and live in another library.) */
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <nanort/nanort.h>

#include <cstdio>
#include <cstdlib>

static const char *thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
  }
}

static int init_multiple(int *argc, char ***argv, int *provided) {
  int level = MPI_THREAD_SINGLE;
  int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &level);
  if (provided) *provided = level;
  if (rc == MPI_SUCCESS && level < MPI_THREAD_MULTIPLE) {
    fprintf(stderr,
            "nanort-mpi: this MPI library gives %s, but tasks call MPI from several threads at "
            "once and need MPI_THREAD_MULTIPLE (Open MPI: built with thread support, e.g. "
            "Debian's openmpi; MPICH: MPIR_CVAR_DEFAULT_THREAD_LEVEL is not it)\n",
            thread_level_name(level));
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  return rc;
}

int MPI_Init(int *argc, char ***argv) { return init_multiple(argc, argv, NULL); }

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  (void)required; /* tasks need MULTIPLE whatever the program asks */
  return init_multiple(argc, argv, provided);
}

/* ---- Waiting for requests without holding a worker ---- */

struct one_request {
  MPI_Request *request;
  MPI_Status *status;
  int rc;
};

static int one_done(void *arg) {
  struct one_request *w = (struct one_request *)arg;
  int flag = 0;
  w->rc = PMPI_Test(w->request, &flag, w->status);
  return flag || w->rc != MPI_SUCCESS;
}

static int wait_one(MPI_Request *request, MPI_Status *status) {
  struct one_request w = {request, status, MPI_SUCCESS};
  if (nanort_block_until(one_done, &w) != NANORT_SUCCESS) return PMPI_Wait(request, status);
  return w.rc;
}

struct all_requests {
  int count;
  MPI_Request *requests;
  MPI_Status *statuses;
  int rc;
};

static int all_done(void *arg) {
  struct all_requests *w = (struct all_requests *)arg;
  int flag = 0;
  w->rc = PMPI_Testall(w->count, w->requests, &flag, w->statuses);
  return flag || w->rc != MPI_SUCCESS;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
  if (!nanort_in_task()) return PMPI_Wait(request, status);
  return wait_one(request, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!nanort_in_task()) return PMPI_Waitall(count, requests, statuses);
  struct all_requests w = {count, requests, statuses, MPI_SUCCESS};
  if (nanort_block_until(all_done, &w) != NANORT_SUCCESS)
    return PMPI_Waitall(count, requests, statuses);
  return w.rc;
}

/* A blocking call inside a task: its non-blocking form, then the wait above. */
#define NONBLOCKING(start_call, status)                      \
  do {                                                       \
    MPI_Request request_;                                    \
    int rc_ = (start_call);                                  \
    if (rc_ != MPI_SUCCESS) return rc_;                      \
    return wait_one(&request_, (status));                    \
  } while (0)

/* A collective inside a task: its blocking form as it is, made while a spare thread runs
 * other tasks in the task's place (nanort_block_call). Not its non-blocking form plus tests:
 * MPI runs a non-blocking collective as a schedule of rounds that advances only in the tests
 * (Open MPI's libnbc), with simpler algorithms. Outside tasks, MPI's own call. */
template <class Call>
static int collective(Call call) {
  if (!nanort_in_task()) return call();
  struct made {
    Call *call;
    int rc;
    bool done;
  } m = {&call, MPI_SUCCESS, false};
  nanort_status status = nanort_block_call(
      [](void *arg) {
        made *c = static_cast<made *>(arg);
        c->done = true;
        c->rc = (*c->call)();
      },
      &m);
  /* Made here when the runtime could not make it (never twice: ranks would not match). */
  if (status != NANORT_SUCCESS && !m.done) return call();
  return m.rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!nanort_in_task()) return PMPI_Send(buf, count, type, dest, tag, comm);
  NONBLOCKING(PMPI_Isend(buf, count, type, dest, tag, comm, &request_), MPI_STATUS_IGNORE);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
  if (!nanort_in_task()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  NONBLOCKING(PMPI_Irecv(buf, count, type, source, tag, comm, &request_), status);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status) {
  if (!nanort_in_task())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                         recvtype, source, recvtag, comm, status);
  MPI_Request requests[2];
  MPI_Status statuses[2];
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[1]);
  if (rc != MPI_SUCCESS) {  /* no receive left posted into recvbuf */
    PMPI_Cancel(&requests[0]);
    PMPI_Request_free(&requests[0]);
    return rc;
  }
  rc = MPI_Waitall(2, requests, statuses);
  if (rc == MPI_ERR_IN_STATUS)  /* not a code MPI_Sendrecv returns: the failing one's */
    rc = statuses[0].MPI_ERROR != MPI_SUCCESS ? statuses[0].MPI_ERROR : statuses[1].MPI_ERROR;
  if (status != MPI_STATUS_IGNORE) *status = statuses[0];
  return rc;
}

int MPI_Barrier(MPI_Comm comm) {
  return collective([&] { return PMPI_Barrier(comm); });
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return collective([&] { return PMPI_Bcast(buf, count, type, root, comm); });
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  return collective([&] { return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); });
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  return collective([&] { return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective([&] {
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return collective([&] {
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return collective([&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return collective([&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  });
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return collective([&] {
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}
