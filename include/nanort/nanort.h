/*
 * nanort: the C ABI of the runtime.
 *
 * The pragma plugin lowers every task pragma to the calls below; a C or C++ program may call
 * them by hand as well. The runtime starts at the first call and shuts down at exit.
 *
 * A task is built in three steps:
 *
 *     nanort_task *t = nanort_task_create(&site, sizeof(args));   // site: static description
 *     memcpy(nanort_task_args(t), &args, sizeof(args));            // argument block, copied
 *     nanort_task_access(t, x, n * sizeof(float), NANORT_IN);      // accesses (dependences)
 *     nanort_task_submit(t);                                       // the handle is consumed
 *     ...
 *     nanort_taskwait();
 *
 * Versioning: NANORT_ABI_VERSION grows by one with every incompatible change. Each task site
 * carries the version it was compiled against; the runtime refuses a site from another
 * version with NANORT_ERROR_ABI_MISMATCH instead of misreading it. Structures only grow at the
 * end, and their first field says which version laid them out. The first four fields of
 * nanort_task_site (abi_version, label, file, line) never change, so that the refusal can
 * name the site.
 *
 * Threads: every function may be called from any thread, including from inside tasks (nested
 * tasks). No function throws; errors are status codes with a message from nanort_last_error().
 */
#ifndef NANORT_NANORT_H
#define NANORT_NANORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NANORT_ABI_VERSION 1

#if defined(__GNUC__)
#define NANORT_API __attribute__((visibility("default")))
#define NANORT_NORETURN __attribute__((noreturn))
#else
#define NANORT_API
#define NANORT_NORETURN
#endif

/* ---------------------------------------------------------------------------------------- */
/* Status                                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef enum nanort_status {
  NANORT_SUCCESS = 0,
  NANORT_ERROR_INVALID_ARGUMENT = 1, /* a null handle, a bad mode, a bad ndrange ...        */
  NANORT_ERROR_ABI_MISMATCH = 2,     /* a site compiled against another ABI version         */
  NANORT_ERROR_NO_DEVICE = 3,        /* no device can run any implementation of the task    */
  NANORT_ERROR_TASK_FAILED = 4,      /* a child task failed; reported at taskwait           */
  NANORT_ERROR_OUT_OF_MEMORY = 5,
  NANORT_ERROR_INTERNAL = 6          /* a bug of nanort's: the message names where; report it */
} nanort_status;

/* The message of the last error seen by this thread (never NULL; "" when none), whole however
 * long, valid until this thread's next failing call. In exit handlers, after the thread's C++
 * objects are destroyed, a message longer than 4 KiB is cut after a line and ends with
 * "... (N more characters)". */
NANORT_API const char *nanort_last_error(void);
NANORT_API const char *nanort_status_string(nanort_status status);

/* ---------------------------------------------------------------------------------------- */
/* Runtime                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Starting is implicit at the first call; nanort_init only makes the moment explicit. */
NANORT_API nanort_status nanort_init(void);
/* Waits for every task, flushes device data, prints statistics, writes the trace and stops
 * the workers. Runs at exit if the program did not call it. Calls after it restart nothing
 * and return NANORT_ERROR_INVALID_ARGUMENT. Returns NANORT_ERROR_TASK_FAILED when task
 * failures were left that no taskwait collected (they are listed on stderr); at exit, such
 * failures make the exit status 1.
 *
 * A malformed NANORT_* variable (or NANORT_REQUIRE not met) ends the program when the runtime
 * starts, at the first call, with a message naming the variable and exit status 1. */
NANORT_API nanort_status nanort_shutdown(void);

/* Ends the program with exit 'status' after a failure the program does not go on from (the
 * lowered code of a failing taskwait in C calls it with 1). Statistics (NANORT_STATS) and the
 * trace (NANORT_TRACE) are written first. Outside tasks it is exit(status): the runtime stops
 * in order at exit, waiting for the tasks of other threads. Inside a task the other tasks are
 * not waited for (they may wait for this one): statistics and trace of what ran so far, then
 * _Exit(status). */
NANORT_API NANORT_NORETURN void nanort_exit(int status);

NANORT_API int nanort_abi_version(void);
NANORT_API const char *nanort_version_string(void);

/* ---------------------------------------------------------------------------------------- */
/* Devices                                                                                  */
/* ---------------------------------------------------------------------------------------- */

typedef enum nanort_device_kind {
  NANORT_DEVICE_SMP = 0, /* a host function run by a CPU worker */
  NANORT_DEVICE_CUDA = 1,
  NANORT_DEVICE_OPENCL = 2,
  NANORT_DEVICE_KIND_COUNT = 3
} nanort_device_kind;

/* Devices of a kind the runtime can run tasks on. For NANORT_DEVICE_SMP: CPU workers. */
NANORT_API int nanort_device_count(nanort_device_kind kind);
/* Index of the CPU worker running the caller, or -1 outside tasks. The pool's workers have
 * indices 0 to count - 2, each its own; the last index is shared by every other thread that
 * runs tasks (the program's threads in taskwait, spare threads of nanort_block_until), so it
 * is not unique: per-worker scratch indexed by it must allow for that. */
NANORT_API int nanort_current_worker(void);

/* ---------------------------------------------------------------------------------------- */
/* Task sites: what is fixed at the pragma (static storage, never freed)                    */
/* ---------------------------------------------------------------------------------------- */

typedef void (*nanort_smp_fn)(void *args);

typedef enum nanort_kernel_arg_kind {
  NANORT_ARG_VALUE = 0,  /* bytes passed as they are                                       */
  NANORT_ARG_BUFFER = 1, /* a host pointer to data; the device gets its own copy's address */
  NANORT_ARG_LOCAL = 2   /* OpenCL __local memory of 'size' bytes; nothing in the block     */
} nanort_kernel_arg_kind;

/* One kernel parameter: where its value lies in the argument block. */
typedef struct nanort_kernel_arg {
  uint32_t offset;
  uint32_t size;
  uint32_t kind; /* nanort_kernel_arg_kind */
} nanort_kernel_arg;

typedef enum nanort_module_format {
  NANORT_MODULE_OPENCL_SOURCE = 0, /* OpenCL C text, built once per context             */
  NANORT_MODULE_CUDA_FATBIN = 1,   /* an nvcc --fatbin image (SASS + PTX)               */
  NANORT_MODULE_CUDA_LINKED = 2    /* kernels linked in from objects made by nvcc -c    */
} nanort_module_format;

/* Code for a device: embedded by the build, found by kernel name. */
typedef struct nanort_kernel_module {
  uint32_t abi_version;
  uint32_t format;             /* nanort_module_format                             */
  const void *image;           /* source text or fatbin; NULL for CUDA_LINKED      */
  size_t image_size;           /* bytes; 0 for NUL-terminated source               */
  const char *build_options;   /* OpenCL: e.g. "-I include -DNB=64"; may be NULL   */
  const char *origin;          /* file it came from, for messages; may be NULL     */
} nanort_kernel_module;

/* One way of running the task. */
typedef struct nanort_task_impl {
  uint32_t device; /* nanort_device_kind */
  /* smp */
  nanort_smp_fn smp_fn;
  /* cuda / opencl */
  const char *kernel_name;
  const nanort_kernel_module *module;
  const nanort_kernel_arg *kernel_args;
  uint32_t num_kernel_args;
} nanort_task_impl;

/* A pragma, or any place that creates tasks of one kind. */
typedef struct nanort_task_site {
  uint32_t abi_version; /* NANORT_ABI_VERSION */
  const char *label;    /* task name: function name or label clause; may be NULL */
  const char *file;     /* source file of the pragma; may be NULL                */
  int line;             /* line of the pragma; 0 when unknown                    */
  const nanort_task_impl *impls;
  uint32_t num_impls;
  /* Called on the argument block once a submitted task is done with it (C++ captures); may
   * be NULL. A task that runs on the CPU is done with it when it completes: its body and all
   * its children have ended (the moment its dependences are released), so the block may hold
   * the body's private variables that children share. A device task is done with it when its
   * kernel ends. Until submit the block is the caller's: a discarded task does not call it. */
  void (*args_destroy)(void *args);
} nanort_task_site;

/* ---------------------------------------------------------------------------------------- */
/* Tasks                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct nanort_task nanort_task;

typedef enum nanort_access_mode {
  NANORT_IN = 1,
  NANORT_OUT = 2,
  NANORT_INOUT = 3,
  NANORT_CONCURRENT = 4,  /* may run together with each other; ordered against the rest */
  NANORT_COMMUTATIVE = 5  /* one at a time, in any order; ordered against the rest      */
} nanort_access_mode;

/* Creates a task with an argument block of args_size bytes (16-byte aligned). Returns NULL
 * on error (see nanort_last_error). The handle must be submitted or discarded. */
NANORT_API nanort_task *nanort_task_create(const nanort_task_site *site, size_t args_size);
NANORT_API void *nanort_task_args(nanort_task *task);

/* The bytes [address, address + size) are read and/or written by the task. A NULL address
 * is accepted as a name that orders CPU tasks (OmpSs programs name pointers they never
 * dereference); a task with a device implementation and such an access is refused at submit
 * (NANORT_ERROR_INVALID_ARGUMENT), and so is a copy of a NULL address. */
NANORT_API nanort_status nanort_task_access(nanort_task *task, const void *address, size_t size,
                                            nanort_access_mode mode);
/* A block of a row-major matrix: 'rows' rows of 'row_bytes' bytes each, 'stride_bytes' apart
 * (stride_bytes >= row_bytes), the first one starting at 'address'. */
NANORT_API nanort_status nanort_task_access_2d(nanort_task *task, const void *address,
                                               size_t row_bytes, size_t rows,
                                               size_t stride_bytes, nanort_access_mode mode);

/* Device tasks: data to have on the device without ordering the task by it (OmpSs copy_in:
 * NANORT_IN, copy_out: NANORT_OUT, copy_inout: NANORT_INOUT). A copy of the same bytes as a
 * dependence replaces the copy the dependence implies. */
NANORT_API nanort_status nanort_task_copy(nanort_task *task, const void *address, size_t size,
                                          nanort_access_mode mode);
NANORT_API nanort_status nanort_task_copy_2d(nanort_task *task, const void *address,
                                             size_t row_bytes, size_t rows, size_t stride_bytes,
                                             nanort_access_mode mode);
/* copy_deps(1), the default: a device task has the data of its dependences copied to the
 * device (and its results back when the host needs them). 0 (no_copy_deps): only what
 * nanort_task_copy names moves; CPU tasks always see current host memory. */
NANORT_API void nanort_task_set_copy_deps(nanort_task *task, int copy_deps);

/* Overrides the site's label and pragma location (strings with static storage: statistics
 * and traces keep them until the end). */
NANORT_API void nanort_task_set_label(nanort_task *task, const char *label);
NANORT_API void nanort_task_set_location(nanort_task *task, const char *file, int line);
/* Higher runs earlier among ready tasks; default 0. */
NANORT_API void nanort_task_set_priority(nanort_task *task, int priority);
/* if(0): the creating thread waits for the task's dependences and runs it itself. */
NANORT_API void nanort_task_set_if(nanort_task *task, int condition);
/* final(1): tasks created inside this task run at once, in order, inside it. */
NANORT_API void nanort_task_set_final(nanort_task *task, int is_final);
/* replayable(0) (OpenMP 6.0): created in the body of a taskiter or taskgraph, the task runs as
 * usual when the body runs, and is not recorded: no replay runs it again, and it may be what
 * a recording refuses (a reduction, arguments with a destructor). The recorded tasks' order
 * among themselves comes from their own accesses only. In a body run again by
 * nanort_taskiter_update it runs too, not matched against a recorded task, if it names no
 * data (no access, copy or reduction); one that does fails its submit as a mismatch does (it
 * would run at once, unordered against its iteration's recorded tasks, which run at the
 * replay). Default 1; outside such a body it changes nothing. */
NANORT_API void nanort_task_set_replayable(nanort_task *task, int replayable);
/* Device implementations: the index space, 1 to 3 dimensions; 'local' may be NULL. */
NANORT_API nanort_status nanort_task_set_ndrange(nanort_task *task, int dims, const size_t *global,
                                                 const size_t *local);
/* Device implementations: dynamic shared (CUDA) or local (OpenCL) memory bytes. */
NANORT_API void nanort_task_set_shmem(nanort_task *task, size_t bytes);
/* Runs the task on one device: device 'index' of 'kind' (0, 1, ...: the device named
 * cuda<index> or opencl<index> in nanort-info's list of the devices the runtime runs tasks on;
 * not the numbers that NANORT_CUDA_DEVICES and NANORT_OPENCL_DEVICES select by, which count the
 * devices found, used or not), with the task's implementation for that kind (for
 * NANORT_DEVICE_SMP, any CPU worker; the index is not used). With index -1, on any device of 'kind' (the scheduler picks
 * which). Submitting fails with NANORT_ERROR_NO_DEVICE when the task has no implementation for
 * 'kind' or there is no such device. For placement made by hand (a static split of the work,
 * tests); the scheduler places every other task. */
NANORT_API void nanort_task_set_device(nanort_task *task, nanort_device_kind kind, int index);

/* Affinity score of the tasks labelled 'task' (a function task's name) on 'place': a device
 * kind ("smp", "cuda", "opencl") or one device ("cuda1"; its score wins over its kind's).
 * Lower is better; a score is a relative cost (cuda 1, smp 8: eight times as long on a CPU
 * worker). Tasks with scores are placed by them under the breadth-first and locality policies,
 * and under dmda until its model has measured them (docs/devices.md, "Where tasks run").
 * Same as NANORT_AFFINITY. Fails with NANORT_ERROR_INVALID_ARGUMENT for an empty name or a
 * score that is not a positive number. */
NANORT_API nanort_status nanort_set_affinity(const char *task, const char *place, double score);

/* Inside a task's body: the task has failed. 'message' says how (copied; the report reads
 * "task 'label' (file:line) <message>"). 'payload' (may be NULL) is kept with the failure for
 * the thread whose taskwait collects it (nanort_take_failure_payload), else destroyed with
 * destroy(payload): the C++ header passes the task's exception this way, so that taskwait
 * rethrows it. The body should return after the call; its successors are not run (see
 * nanort_taskwait). NANORT_ERROR_INVALID_ARGUMENT outside a task's body (the payload is
 * destroyed). */
NANORT_API nanort_status nanort_task_fail(const char *message, void *payload,
                                          void (*destroy)(void *));
/* After a taskwait of this thread returned NANORT_ERROR_TASK_FAILED: the payload of the first
 * collected failure that had one (ownership passes to the caller), or NULL. Only the last
 * taskwait's payload is kept: the next taskwait destroys one not taken. */
NANORT_API void *nanort_take_failure_payload(void);

/* Hands the task to the runtime and consumes the handle, whatever the outcome. Fails with
 * NANORT_ERROR_NO_DEVICE when no device can run any implementation of the task. */
NANORT_API nanort_status nanort_task_submit(nanort_task *task);
/* Drops a task that was created but not submitted (site->args_destroy is not called: until
 * submit the argument block is the caller's to clean up). */
NANORT_API void nanort_task_discard(nanort_task *task);

/* Whether the caller runs inside a final task (where new tasks run at once). */
NANORT_API int nanort_in_final(void);
/* 1 when the calling thread runs a task's body (0 in the program's own threads outside tasks). */
NANORT_API int nanort_in_task(void);
/* Waits until ready(arg) returns nonzero, calling it over and over (at once at first, then
 * every 20 to 100 microseconds). Inside a task, a spare thread runs other ready tasks in the
 * meantime, so that a task blocked on something outside the runtime (an MPI message, I/O) does
 * not hold a CPU worker that the tasks it waits for may need: any number of tasks may block
 * this way with any number of workers. For libraries that turn a blocking call into a
 * request and a test (nanort-mpi does so for MPI). ready must be thread-safe. */
NANORT_API nanort_status nanort_block_until(int (*ready)(void *arg), void *arg);
/* Calls call(arg) in the calling thread; inside a task, a spare thread runs other ready tasks
 * until it returns, as above. For a blocking call best made as it is rather than as a request
 * and a test: MPI's blocking collectives, whose algorithms and progress are faster than
 * those of their non-blocking forms (nanort-mpi makes them so inside tasks). */
NANORT_API nanort_status nanort_block_call(void (*call)(void *arg), void *arg);

/* Kernels linked in from objects that plain `nvcc -c` made: each object registers its fatbin
 * image at start-up (through the nanort_cuda_objects library, which stands in for the entry
 * points CUDA's runtime library would provide). Sites name them with a module of format
 * NANORT_MODULE_CUDA_LINKED; the kernel is looked for in every image registered. The image
 * must stay valid until the program ends. May be called before the runtime starts. */
NANORT_API void nanort_cuda_register_image(const void *fatbin_image);

/* ---------------------------------------------------------------------------------------- */
/* Reductions                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Task reductions, as OmpSs-2's reduction(op: x) and OpenMP's taskgroup task_reduction(op: x)
 * with in_reduction(op: x) (docs/reductions.md):
 *
 *     static const nanort_reduction_op sum = {NANORT_ABI_VERSION, NANORT_REDUCE_SUM,
 *                                             NANORT_TYPE_DOUBLE, sizeof(double)};
 *     nanort_task_reduction(t, &total, sizeof total, &sum);          // before submit
 *     ...
 *     double *mine = nanort_reduction_private(&total);   // in the body: its private copy
 *     *mine += x;
 *
 * The tasks of a reduction run at the same time; each works on private storage that starts
 * at the operator's identity, one copy per CPU worker that runs them (not per task). The
 * copies are combined into the original before the next task that accesses the bytes
 * otherwise runs, at the taskwait (or a taskwait on them), and when the parent task ends;
 * the thread that releases the reduction's last task (or submits the access that ends it)
 * combines them. Reductions run on CPU workers only: a task with a reduction and no smp
 * implementation (or placed on a device) is refused at submit (NANORT_ERROR_NO_DEVICE).
 * A task of a reduction that fails, or is not run, leaves the original as it was: the copies
 * are not combined, and the tasks ordered after the reduction are not run (nanort_taskwait
 * reports both). */

typedef enum nanort_reduction_operator {
  NANORT_REDUCE_SUM = 1,     /* +, and -, which OpenMP and OmpSs-2 reduce as +; identity 0    */
  NANORT_REDUCE_PRODUCT = 2, /* *; identity 1                                                  */
  NANORT_REDUCE_MIN = 3,     /* identity: the largest value of the type (+infinity if floating) */
  NANORT_REDUCE_MAX = 4,     /* identity: the lowest value of the type (-infinity if floating)  */
  NANORT_REDUCE_BIT_AND = 5, /* &, integer types; identity ~0                                   */
  NANORT_REDUCE_BIT_OR = 6,  /* |, integer types; identity 0                                    */
  NANORT_REDUCE_BIT_XOR = 7, /* ^, integer types; identity 0                                    */
  NANORT_REDUCE_AND = 8,     /* &&; identity 1; the result is 0 or 1                            */
  NANORT_REDUCE_OR = 9,      /* ||; identity 0; the result is 0 or 1                            */
  NANORT_REDUCE_USER = 10    /* declare reduction: the initializer and combiner of the op      */
} nanort_reduction_operator;

/* The element types of the built-in operators. Complex types take + and * only; bool (C's
 * _Bool) and the integer types take every operator; floating types all but &, |, ^. */
typedef enum nanort_reduction_type {
  NANORT_TYPE_CHAR = 1,
  NANORT_TYPE_SIGNED_CHAR = 2,
  NANORT_TYPE_UNSIGNED_CHAR = 3,
  NANORT_TYPE_SHORT = 4,
  NANORT_TYPE_UNSIGNED_SHORT = 5,
  NANORT_TYPE_INT = 6,
  NANORT_TYPE_UNSIGNED_INT = 7,
  NANORT_TYPE_LONG = 8,
  NANORT_TYPE_UNSIGNED_LONG = 9,
  NANORT_TYPE_LONG_LONG = 10,
  NANORT_TYPE_UNSIGNED_LONG_LONG = 11,
  NANORT_TYPE_BOOL = 12,
  NANORT_TYPE_FLOAT = 13,
  NANORT_TYPE_DOUBLE = 14,
  NANORT_TYPE_LONG_DOUBLE = 15,
  NANORT_TYPE_FLOAT_COMPLEX = 16,       /* float _Complex, std::complex<float>             */
  NANORT_TYPE_DOUBLE_COMPLEX = 17,      /* double _Complex, std::complex<double>           */
  NANORT_TYPE_LONG_DOUBLE_COMPLEX = 18  /* long double _Complex, std::complex<long double> */
} nanort_reduction_type;

/* A reduction operator. The runtime copies what it needs at each call that takes one; only
 * 'name' must outlive the call (static storage). A reduction of an array applies the operator
 * element by element. */
typedef struct nanort_reduction_op {
  uint32_t abi_version;  /* NANORT_ABI_VERSION                                            */
  uint32_t op;           /* nanort_reduction_operator                                     */
  uint32_t type;         /* nanort_reduction_type; not used by NANORT_REDUCE_USER           */
  uint32_t element_size; /* bytes of one element: the type's size (0 means that too), or,
                            for NANORT_REDUCE_USER, the size of the user's type             */
  /* NANORT_REDUCE_USER only (NULL otherwise). initialize: sets one private element (omp_priv)
   * to the operator's identity; 'orig' is the original's element (omp_orig); NULL: the
   * private copy starts as zero bytes. combine: out = out op in, one element (omp_out,
   * omp_in); required. destroy: ends the life of one private element after it was combined
   * (C++ types); may be NULL. */
  void (*initialize)(void *priv, const void *orig);
  void (*combine)(void *out, const void *in);
  void (*destroy)(void *priv);
  const char *name; /* for messages ("+", "merge"); may be NULL */
} nanort_reduction_op;

/* OmpSs-2 reduction(op: x): the task adds its part to the reduction on the bytes
 * [address, address + size), a whole number of elements of the operator. Tasks that reduce the
 * same bytes (or bytes inside them) with the same operator, one after another among siblings,
 * form one reduction and may run at the same time; it is ordered like a write against the
 * other accesses of those bytes: it waits for the tasks before it, and the next task that
 * accesses them otherwise (or reduces with another operator, or over bytes outside them) waits
 * for the reduction's tasks and the combination. More reduction tasks that come after every
 * earlier one ended, with no other access between, join the same reduction.
 * Inside a task that takes part in a reduction on x, a child's reduction on x (or on elements
 * of it) with the same operator takes part in the same reduction directly (OmpSs-2's
 * weakreduction needs nothing more); a child's reduction on the parent's private copy (what
 * nanort_reduction_private returned) is a reduction of its own, combined into that copy when
 * the parent ends. Either way the parent must leave its copy alone while its children reduce
 * into it (until a taskwait). A size of 0 names nothing and adds nothing. Refused with
 * NANORT_ERROR_INVALID_ARGUMENT: a NULL operator or one of another ABI, a size that is not a
 * whole number of elements, an operator that the type lacks (& on double), a user-defined one
 * without a combiner, a reduction that overlaps another reduction of the task; at submit, one
 * that overlaps any other access of the task, or that overlaps a reduction of the parent
 * without lying inside it or with another operator. */
NANORT_API nanort_status nanort_task_reduction(nanort_task *task, void *address, size_t size,
                                               const nanort_reduction_op *op);

/* OpenMP in_reduction(op: x): the task takes part in the reduction on these bytes that the
 * innermost enclosing taskgroup of its creator (nanort_taskgroup_reduction) declared, also
 * when it is created deep inside tasks of the taskgroup. It adds no dependence. Fails with
 * NANORT_ERROR_INVALID_ARGUMENT when no enclosing taskgroup declared a reduction on the bytes,
 * or it did with another operator. */
NANORT_API nanort_status nanort_task_in_reduction(nanort_task *task, void *address, size_t size,
                                                  const nanort_reduction_op *op);

/* In the body of a task that takes part in a reduction (either kind): the address of its
 * private copy of 'original', any address inside the bytes it reduces (the copy of an array
 * is laid out as the array). Taken at the first call in the task, then the same for the
 * task's whole run; cheap on every later call. A task that runs at once inside a final task
 * works on its parent's copy, or on the original itself, in program order. NULL (with
 * nanort_last_error set) when the calling task takes part in no reduction on that address. */
NANORT_API void *nanort_reduction_private(const void *original);

/* OpenMP taskgroup task_reduction(op: x) { ... }:
 *
 *     nanort_taskgroup_begin();
 *     nanort_taskgroup_reduction(&x, sizeof x, &sum);   // each task_reduction item, at once
 *     ... tasks with nanort_task_in_reduction(t, &x, sizeof x, &sum) ...
 *     nanort_taskgroup_end();
 *
 * nanort_taskgroup_end waits for every child of the calling task (as a taskwait does; a
 * taskgroup waits at least for the tasks created in it) and combines the taskgroup's
 * reductions into their originals, on the host. Failures of tasks are left for the next
 * taskwait to report; a reduction one of whose tasks failed is not combined (the original
 * keeps its value). Taskgroups nest; each begin needs its end in the same task (or thread):
 * NANORT_ERROR_INVALID_ARGUMENT otherwise, and for a task_reduction outside a taskgroup or
 * over bytes of another of its task_reductions. Inside a task that takes part in a reduction
 * on x, a taskgroup reduction on x (same operator, inside its bytes) combines into the task's
 * private copy. */
NANORT_API nanort_status nanort_taskgroup_begin(void);
NANORT_API nanort_status nanort_taskgroup_reduction(void *address, size_t size,
                                                    const nanort_reduction_op *op);
NANORT_API nanort_status nanort_taskgroup_end(void);

/* ---------------------------------------------------------------------------------------- */
/* Host memory                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Page-locks the ordinary host memory [address, address + bytes) for the GPUs (what
 * cudaHostRegister does for CUDA GPUs; for NVIDIA's OpenCL GPUs in a process without a CUDA
 * GPU, a buffer made over the memory), so that task data in it moves between host and devices
 * directly, at the full speed of the bus, instead of through the runtime's pinned staging
 * buffers. Host memory the program page-locked itself (cudaMallocHost, cudaHostRegister) is
 * used directly too. Locking costs time (the system pins every page), so it pays for arrays
 * that move many times. The memory must stay allocated until nanort_host_unregister, which
 * must come after a taskwait that covers the tasks using it; it brings the range's device
 * data home first (as nanort_taskwait_on would). Does nothing without such a GPU (other
 * devices' copies are staged either way). Optional with NANORT_HOST_REGISTER=auto (the
 * default): the runtime then locks ordinary memory that moves by itself, after its first
 * copies; this call locks it ahead of them, and takes over what the runtime locked there. */
NANORT_API nanort_status nanort_host_register(void *address, size_t bytes);
NANORT_API nanort_status nanort_host_unregister(void *address);

/* ---------------------------------------------------------------------------------------- */
/* Waiting                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Waits for every child of the calling task (or of the calling thread, outside tasks) and
 * makes host memory current. Returns NANORT_ERROR_TASK_FAILED if a child failed since the
 * last taskwait; nanort_last_error() then names each failed task and its pragma location.
 *
 * After a failure: the tasks ordered after the failed one (those that access its data after
 * it, directly or through other such tasks, until this taskwait) are not run, and each is
 * reported as "task 'b' (f.c:9) was not run: it depends on task 'a' (f.c:3), which failed".
 * The others run. The program may go on: tasks created after the taskwait run as usual. (The
 * pragma taskwait in C ends the program instead, with exit status 1; in C++ it throws.) */
NANORT_API nanort_status nanort_taskwait(void);
/* The same, but device copies stay where they are (host memory may be stale). */
NANORT_API nanort_status nanort_taskwait_noflush(void);
/* Waits only for the earlier sibling tasks that access the given bytes, then makes those
 * bytes current on the host. */
NANORT_API nanort_status nanort_taskwait_on(const void *const *addresses, const size_t *sizes,
                                            size_t count);

/* ---------------------------------------------------------------------------------------- */
/* Taskiter: a loop whose every iteration creates the same tasks (OmpSs-2 taskiter)           */
/* ---------------------------------------------------------------------------------------- */

typedef struct nanort_taskiter nanort_taskiter;

/* Starts recording the tasks the calling task (or program thread) submits: the body of one
 * iteration (or of 'unroll' iterations) runs between this call and nanort_taskiter_end, and
 * its tasks run as usual. Inside a final task *iter is NULL (its tasks run at once, nothing
 * is recorded): the program then runs every iteration itself. Fails with
 * NANORT_ERROR_INVALID_ARGUMENT inside the body of another taskiter (they do not nest). */
NANORT_API nanort_status nanort_taskiter_begin(nanort_taskiter **iter);
/* Ends the recording, waits for its tasks (and the caller's tasks before them, as
 * nanort_taskwait_noflush does), then runs the recorded tasks again 'replays' times, each
 * time with the argument blocks they had when submitted and the dependences between them
 * matched once; a replay starts when the one before has ended. Returns once the last one has
 * ended, with the failures of the tasks as nanort_taskwait_noflush returns them; after a
 * failure no further replay runs. Inside the body: nanort_taskwait, nanort_taskwait_on,
 * nanort_taskgroup_begin and nanort_taskgroup_end fail (NANORT_ERROR_INVALID_ARGUMENT: the
 * replays would not wait there), and so does the
 * submit of a task a replay cannot repeat (a reduction, or arguments with a destructor)
 * unless it is not replayable (nanort_task_set_replayable);
 * then this call replays nothing and fails, saying which task. A task created with if(0)
 * comes before every task recorded after it, as in the recorded iteration. iter NULL: does
 * nothing; an iter that does not record in the calling task (ended already): fails. A task
 * whose body returns while it records fails, and nothing of its recording is replayed. */
NANORT_API nanort_status nanort_taskiter_end(nanort_taskiter *iter, uint64_t replays);
/* The same as nanort_taskiter_end, except that iter stays: later calls replay the graph
 * again (a loop whose condition is evaluated on the host after each iteration replays one
 * iteration per call). The first call ends the recording; 'replays' may be 0. End with
 * nanort_taskiter_end (which may replay more). iter NULL: does nothing. */
NANORT_API nanort_status nanort_taskiter_replay(nanort_taskiter *iter, uint64_t replays);
/* As nanort_taskiter_replay, for replays that more will follow: returns once they are under
 * way (the last one not waited for), and their results stay on the devices that computed
 * them. The next call on iter (nanort_taskiter_update excepted, which the next iteration's
 * body may so overlap with this one's run: its replayable tasks do not run then, and the
 * others name no data), a taskwait of the calling task, or its end waits
 * for them and returns their failures; after a failure nothing more is replayed. */
NANORT_API nanort_status nanort_taskiter_launch(nanort_taskiter *iter, uint64_t replays);
/* OmpSs-2's update clause: the next iteration (or group of 'unroll' iterations) runs its body
 * again, so that its tasks' argument blocks (firstprivate values: the loop variable, a time
 * step) are those of that iteration, while their dependences stay matched once. The tasks the
 * calling task submits from this call to the next nanort_taskiter_replay are not run (those
 * not replayable excepted, see nanort_task_set_replayable): each
 * gives its argument block to the recorded task at its place (the k-th submitted to the k-th
 * recorded), and that replay runs the recorded tasks with them (nanort_taskiter_end with
 * replays uses them too; without, they are dropped). A submitted task must be the recorded
 * one: the same construct with the same data (each access's address, size and mode), device,
 * launch size (ndrange, shmem), if and final; else its submit fails with
 * NANORT_ERROR_INVALID_ARGUMENT naming it, as does a task past the recorded count, and the
 * replay fails where fewer were submitted. After such a failure nothing more is replayed.
 * The first call ends the recording, as nanort_taskiter_replay's first call does. A
 * taskwait inside the body fails as while recording. iter NULL (inside a final task): does
 * nothing, and the tasks run as usual. */
NANORT_API nanort_status nanort_taskiter_update(nanort_taskiter *iter);

/* ---------------------------------------------------------------------------------------- */
/* Taskgraph: a region recorded once and replayed at its later encounters (OpenMP 6.0)       */
/* ---------------------------------------------------------------------------------------- */

typedef struct nanort_taskgraph nanort_taskgraph;

/* Enters a taskgraph region. 'construct' is an address unique to the construct in the
 * program (a static variable of its own), graph_id tells apart the graphs of one construct.
 * First waits for the caller's earlier tasks (as nanort_taskwait_noflush does). Then, when a
 * graph of (construct, graph_id) was recorded and 'reset' is 0, replays it, with the argument
 * blocks and dependences of its recording, and returns with *run_block 0 once it has ended
 * (the region's code is not run again) and the failures of its tasks. Otherwise (the first
 * encounter, 'reset' not 0, or the graph being recorded or replayed by another task at that
 * moment) *run_block is 1: the caller runs the region, whose tasks are recorded (the graph
 * kept until the program ends) when *graph is not NULL; in a final task *graph is NULL and
 * nothing is recorded. Recording refuses what nanort_taskiter_begin's recording refuses. */
NANORT_API nanort_status nanort_taskgraph_begin(const void *construct, uint64_t graph_id,
                                                int reset, nanort_taskgraph **graph,
                                                int *run_block);
/* Leaves the region: ends a recording (graph not NULL) and waits for the region's tasks; with
 * graph NULL waits for the caller's tasks when 'wait' is not 0 (OpenMP's implicit taskgroup;
 * a recording always waits: later tasks are not matched against replayed ones). Returns the
 * failures of the region's tasks as nanort_taskwait_noflush returns them. */
NANORT_API nanort_status nanort_taskgraph_end(nanort_taskgraph *graph, int wait);

#ifdef __cplusplus
}
#endif

#endif /* NANORT_NANORT_H */
