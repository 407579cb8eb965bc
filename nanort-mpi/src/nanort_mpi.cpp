/* nanort-mpi: MPI inside tasks. Linked before the MPI library, it replaces MPI's blocking
 * calls (through the MPI profiling interface: each calls its PMPI_ twin): called from inside
 * a task, a blocking call becomes its non-blocking form plus a wait in which the task's thread
 * polls MPI_Test while a spare thread runs other tasks (nanort_block_until). So a task blocked
 * in MPI never holds a CPU worker that the task it waits for may need: a receive whose send
 * is a later task completes whatever the number of workers. Outside tasks the point-to-point
 * calls are MPI's own; collectives are non-blocking plus MPI_Wait everywhere, so that they
 * match across ranks whether or not each calls them inside a task. MPI_Init and MPI_Init_thread ask for MPI_THREAD_MULTIPLE (tasks call MPI from
 * any worker at once) and stop the program with a clear message when the library lacks it. */
#include <mpi.h>
#include <nanort/nanort.h>

#include <stdio.h>
#include <stdlib.h>

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

/* A collective, inside a task or not: always its non-blocking form (MPI does not match a
 * blocking collective with a non-blocking one, and one rank may call it inside a task while
 * another does not), then the wait above inside a task, MPI's own wait outside. */
#define COLLECTIVE(start_call)                                                   \
  do {                                                                           \
    MPI_Request request_;                                                        \
    int rc_ = (start_call);                                                      \
    if (rc_ != MPI_SUCCESS) return rc_;                                          \
    return nanort_in_task() ? wait_one(&request_, MPI_STATUS_IGNORE)             \
                            : PMPI_Wait(&request_, MPI_STATUS_IGNORE);           \
  } while (0)

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
  COLLECTIVE(PMPI_Ibarrier(comm, &request_));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  COLLECTIVE(PMPI_Ibcast(buf, count, type, root, comm, &request_));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  COLLECTIVE(PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, &request_));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  COLLECTIVE(PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &request_));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  COLLECTIVE(PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm, &request_));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  COLLECTIVE(PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                            comm, &request_));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  COLLECTIVE(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                              &request_));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  COLLECTIVE(PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm, &request_));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  COLLECTIVE(PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             &request_));
}
