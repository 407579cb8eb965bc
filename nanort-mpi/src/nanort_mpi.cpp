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

struct any_request {
  int count;
  MPI_Request *requests;
  int *index;
  MPI_Status *status;
  int rc;
};

static int any_done(void *arg) {
  struct any_request *w = (struct any_request *)arg;
  int flag = 0;
  w->rc = PMPI_Testany(w->count, w->requests, w->index, &flag, w->status);
  return flag || w->rc != MPI_SUCCESS;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
  if (!nanort_in_task()) return PMPI_Waitany(count, requests, index, status);
  struct any_request w = {count, requests, index, status, MPI_SUCCESS};
  if (nanort_block_until(any_done, &w) != NANORT_SUCCESS)
    return PMPI_Waitany(count, requests, index, status);
  return w.rc;
}

struct some_requests {
  int count;
  MPI_Request *requests;
  int *outcount;
  int *indices;
  MPI_Status *statuses;
  int rc;
};

static int some_done(void *arg) {
  struct some_requests *w = (struct some_requests *)arg;
  w->rc = PMPI_Testsome(w->count, w->requests, w->outcount, w->indices, w->statuses);
  return *w->outcount != 0 || w->rc != MPI_SUCCESS;  /* some done, or MPI_UNDEFINED: none active */
}

int MPI_Waitsome(int count, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[]) {
  if (!nanort_in_task()) return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  struct some_requests w = {count, requests, outcount, indices, statuses, MPI_SUCCESS};
  if (nanort_block_until(some_done, &w) != NANORT_SUCCESS)
    return PMPI_Waitsome(count, requests, outcount, indices, statuses);
  return w.rc;
}

/* Probing inside a task: MPI_Iprobe (MPI_Improbe) polled until a message matches. */
struct probe {
  int source, tag;
  MPI_Comm comm;
  MPI_Message *message; /* MPI_Mprobe's, or NULL */
  MPI_Status *status;
  int rc;
};

static int probe_matched(void *arg) {
  struct probe *w = (struct probe *)arg;
  int flag = 0;
  w->rc = w->message ? PMPI_Improbe(w->source, w->tag, w->comm, &flag, w->message, w->status)
                     : PMPI_Iprobe(w->source, w->tag, w->comm, &flag, w->status);
  return flag || w->rc != MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
  if (!nanort_in_task()) return PMPI_Probe(source, tag, comm, status);
  struct probe w = {source, tag, comm, NULL, status, MPI_SUCCESS};
  if (nanort_block_until(probe_matched, &w) != NANORT_SUCCESS)
    return PMPI_Probe(source, tag, comm, status);
  return w.rc;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
  if (!nanort_in_task()) return PMPI_Mprobe(source, tag, comm, message, status);
  struct probe w = {source, tag, comm, message, status, MPI_SUCCESS};
  if (nanort_block_until(probe_matched, &w) != NANORT_SUCCESS)
    return PMPI_Mprobe(source, tag, comm, message, status);
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

/* A collective (or another call best made as it is) inside a task: its blocking form as it is,
 * made while a spare thread runs other tasks in the task's place (nanort_block_call). Not its non-blocking form plus tests:
 * MPI runs a non-blocking collective as a schedule of rounds that advances only in the tests
 * (Open MPI's libnbc), with simpler algorithms. Outside tasks, MPI's own call. */
template <class Call>
static int made_blocking(Call call) {
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

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!nanort_in_task()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  NONBLOCKING(PMPI_Issend(buf, count, type, dest, tag, comm, &request_), MPI_STATUS_IGNORE);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!nanort_in_task()) return PMPI_Bsend(buf, count, type, dest, tag, comm);
  NONBLOCKING(PMPI_Ibsend(buf, count, type, dest, tag, comm, &request_), MPI_STATUS_IGNORE);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!nanort_in_task()) return PMPI_Rsend(buf, count, type, dest, tag, comm);
  NONBLOCKING(PMPI_Irsend(buf, count, type, dest, tag, comm, &request_), MPI_STATUS_IGNORE);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
              MPI_Status *status) {
  if (!nanort_in_task()) return PMPI_Mrecv(buf, count, type, message, status);
  NONBLOCKING(PMPI_Imrecv(buf, count, type, message, &request_), status);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
  return made_blocking([&] {
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                 status);
  });
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
  return made_blocking([&] { return PMPI_Barrier(comm); });
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return made_blocking([&] { return PMPI_Bcast(buf, count, type, root, comm); });
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  return made_blocking([&] { return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); });
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  return made_blocking([&] { return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  });
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root, comm);
  });
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                         root, comm);
  });
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
  });
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return made_blocking([&] {
    return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                          rdispls, recvtypes, comm);
  });
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return made_blocking(
      [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm); });
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return made_blocking(
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); });
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
             MPI_Comm comm) {
  return made_blocking([&] { return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm) {
  return made_blocking([&] { return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm); });
}

/* Communicators made inside tasks: collective calls too. */
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
  return made_blocking([&] { return PMPI_Comm_dup(comm, newcomm); });
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
  return made_blocking([&] { return PMPI_Comm_split(comm, color, key, newcomm); });
}
