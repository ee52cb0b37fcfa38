/* What a benchmark backend provides to the harness (src/bench/harness.c).
 *
 * A backend moves data between ranks: MPI (a loadable module linked to
 * libmpi, host memory), NCCL (dlopen'd libnccl + the CUDA driver API, GPU
 * memory), socket (gpuready's own TCP connections, host memory; for testing
 * the harness and launchers without MPI or GPUs). The harness owns the
 * sweep, data, timing, validation, statistics and output; a backend only
 * allocates, copies, runs one collective and measures a loop.
 *
 * Ranks: a process runs `local` ranks (NCCL with -g N GPUs per process;
 * the others 1); rank ids are global (proc_rank * local + i). Every call
 * takes the local index `l` (0..local-1) where it matters.
 *
 * Errors: functions return 0 or -errno and write a message into
 * b->error (backend_set_error). Blocking calls must give up at the
 * deadline they are given (monotonic seconds, 0 = none) with -ETIMEDOUT,
 * or — where the underlying library cannot be interrupted (MPI) — rely on
 * the harness's watchdog, which reports the stalled phase and exits. */
#ifndef GPUREADY_BENCH_BACKEND_H
#define GPUREADY_BENCH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

struct backend;
struct bench_sync;

/* What the harness tells a backend when it starts. */
struct backend_env {
	int nranks;            /* global ranks */
	int proc_rank;         /* this process among processes */
	int nprocs;
	int local;             /* ranks in this process (-g), each on GPU first_gpu + l */
	int first_gpu;         /* CUDA ordinal of local rank 0 (local rank of the launcher × local) */
	bool blocking;         /* -z: wait for each collective before the next */
	int graph;             /* -G: graph launches per step (0: no CUDA graphs) */
	bool memory;           /* -M: init notes the GPU memory communicator setup takes (mem_init) */
	int reg;               /* -R: 1 buffers registered with their communicator, 2 as symmetric windows */
	const char *nccl_lib;  /* --nccl-lib PATH, or NULL to search */
	/* Out-of-band exchange the backend may use during init (NCCL's unique
	 * id): rank 0's process fills buf, every process gets it. Provided by
	 * the harness through gpuready's rendezvous; NULL when the backend
	 * brings its own (MPI). Returns 0 or -errno. */
	int (*oob_bcast)(void *ctx, void *buf, size_t len, double deadline);
	void *oob_ctx;
	/* the job's exchanges (sync.h), for the socket backend, which moves
	 * its data over them; others ignore it */
	const struct bench_sync *sync;
};

/* How split() groups the processes (cluster nccl). */
struct backend_split {
	int color;             /* the group; -1 none */
	int key;               /* order within the group (ties: the parent's order) */
	bool ring;             /* force NCCL's ring algorithm in the child (NCCL_ALGO=Ring while it is made):
				* two nodes' tree all_reduce can report more than the link carries */
	const char *addr;      /* socket backend: the numeric address this process's group
				* connections listen on (the one it reaches process 0 from) */
	double timeout;        /* socket backend: seconds any one collective of the child may take */
};

/* One GPU/device a rank uses, for the "# Using devices" lines. */
struct backend_device {
	int ordinal;           /* CUDA device, -1 for host memory */
	char bus_id[32];       /* "0000:18:00" style, "" for host */
	char name[96];         /* "NVIDIA H100 80GB HBM3", "host" */
};

struct backend_ops {
	const char *name;      /* "mpi", "nccl", "socket" */
	/* Sets up communication for all local ranks. MPI: MPI_Init (and fills
	 * env->proc_rank/nprocs/nranks from MPI before the harness reads them:
	 * see bootstrap). Returns 0 or -errno. */
	int (*init)(struct backend *b, struct backend_env *env, double deadline);
	/* Memory for rank l's buffers (device memory for NCCL). Host memory
	 * comes zeroed: the warm-up runs before any data is written, and what
	 * it sends must not be bytes nobody wrote (tests/cli/valgrind.sh). */
	int (*alloc)(struct backend *b, int l, size_t bytes, void **ret);
	void (*free)(struct backend *b, int l, void *p);
	/* Host <-> buffer copies (synchronous). */
	int (*copy_in)(struct backend *b, int l, void *dst, const void *host, size_t bytes);
	int (*copy_out)(struct backend *b, int l, void *host, const void *src, size_t bytes);
	/* Starts (or performs) one collective for every local rank: send[l],
	 * recv[l] are rank l's buffers (equal for in-place); count is the
	 * element count the collective's API takes (nccl-tests' "paramcount");
	 * root is a global rank or -1; peer for sendrecv is computed by the
	 * backend as (rank + 1) % nranks sending, (rank - 1 + n) % n receiving.
	 * Buffers and in-place follow NCCL's API exactly (count = per-rank
	 * element count for all_gather/reduce_scatter/alltoall chunks): in-place
	 * all_gather passes send = recv + rank*count elements; in-place
	 * reduce_scatter passes recv = send + rank*count elements; other
	 * in-place calls pass send == recv. A backend whose library spells
	 * in-place differently (MPI_IN_PLACE) translates. */
	int (*run)(struct backend *b, enum coll c, void *const *send, void *const *recv, size_t count, enum dtype t,
		   enum redop op, int root);
	/* Waits until everything started has completed, by the deadline. */
	int (*wait)(struct backend *b, double deadline);
	/* A barrier across all ranks, by the deadline. */
	int (*barrier)(struct backend *b, double deadline);
	/* Timing of a loop: begin marks the start (after a barrier the harness
	 * did), end waits for completion and returns the elapsed seconds
	 * measured on the host clock after everything completed, as nccl-tests
	 * does (its numbers are what users compare). */
	int (*timer_begin)(struct backend *b);
	int (*timer_end)(struct backend *b, double deadline, double *seconds);
	/* Describes local rank l's device. */
	void (*device)(struct backend *b, int l, struct backend_device *out);
	/* The library version for the report ("NCCL 2.21.5", "Open MPI 4.1.4"). */
	const char *(*version)(struct backend *b);
	/* Tears down after an error or timeout without waiting for peers
	 * (ncclCommAbort; MPI_Abort is not used: the harness exits). */
	void (*abort)(struct backend *b);
	/* Orderly teardown; frees b. */
	void (*fini)(struct backend *b);
	/* CUDA graphs (-G), NCCL only (others NULL: -G is refused). Between
	 * capture_begin and capture_end, run() records onto every local rank's
	 * stream instead of launching (cuStreamBeginCapture in thread-local
	 * mode, as nccl-tests' -G); capture_end instantiates one executable graph per
	 * local rank; graph_launch launches each once on its rank's stream
	 * (completion through wait/timer_end as usual); graph_free destroys
	 * them (also called by fini). 0 or -errno with b->error. */
	int (*capture_begin)(struct backend *b);
	int (*capture_end)(struct backend *b);
	int (*graph_launch)(struct backend *b);
	void (*graph_free)(struct backend *b);
	/* -m N (N > 1, not -z): the run() calls between group_begin and
	 * group_end are issued as one operation (ncclGroupStart/End around
	 * nccl-tests' aggregated launches). Optional: a backend without them
	 * launches the N one after another. group_end is called after every
	 * successful group_begin, also when a run() between them failed.
	 * 0 or -errno with b->error. */
	int (*group_begin)(struct backend *b);
	int (*group_end)(struct backend *b);
	/* MPI only (others NULL): processes' identity from the MPI runtime,
	 * and a broadcast from process 0 used to bootstrap gpuready's own
	 * control connections under mpirun. */
	int (*proc_info)(struct backend *b, int *proc_rank, int *nprocs, int *local_rank);
	int (*bcast)(struct backend *b, void *buf, size_t len);
	/* -I, per-iteration timing. Optional: without them the harness reads
	 * the host clock at each point, which is right for a backend whose
	 * run() completes before it returns (MPI, socket). marks(b, n) makes
	 * n timing points per local rank (0: frees them; fini frees them too);
	 * mark(b, i) records point i on every local rank's stream (NCCL: a
	 * CUDA event); mark_elapsed(b, i, j, &sec), once wait() returned, the
	 * longest time from point i to point j over the local ranks. 0 or
	 * -errno with b->error. */
	int (*marks)(struct backend *b, int n);
	int (*mark)(struct backend *b, int i);
	int (*mark_elapsed)(struct backend *b, int from, int to, double *sec);
	/* -M (NCCL; NULL elsewhere, where -M is refused): the free memory of
	 * local rank l's GPU now (cuMemGetInfo). 0 or -errno with b->error. */
	int (*mem_free)(struct backend *b, int l, int64_t *bytes);
	/* -R (NCCL; NULL elsewhere, where -R is refused): registers rank l's
	 * buffer p of bytes, which alloc made, with its communicator as
	 * env.reg says (1 ncclCommRegister, 2 ncclCommWindowRegister,
	 * symmetric). The harness registers every local rank's buffers
	 * between group_begin and group_end, as nccl-tests; free deregisters.
	 * 0 or -errno with b->error. */
	int (*reg)(struct backend *b, int l, void *p, size_t bytes);
	/* `cluster nccl` (NULL: the backend cannot split its ranks): a backend
	 * over the ranks of this process's group, as ncclCommSplit and
	 * MPI_Comm_split make one. Every process calls it at once (it is a
	 * collective of the parent) with its group's color (>= 0; -1: in no
	 * group, *child stays NULL) and a key ordering the group's processes.
	 * The child's env says its own nranks and proc_rank; it uses the
	 * parent's devices; its fini comes before the parent's. 0 or -errno
	 * with b->error. */
	int (*split)(struct backend *b, const struct backend_split *how, double deadline, struct backend **child);
};

/* The common part of every backend object; backends embed it first. */
struct backend {
	const struct backend_ops *ops;
	char error[512];
	struct backend_env env;
	int64_t mem_init;      /* -M: GPU memory communicator setup took, the most of the local GPUs */
};

void backend_set_error(struct backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Creating backends. Each returns 0 or -errno with *err (malloc'd) saying
 * which library or driver is missing and how to get it. */
int backend_socket_create(struct backend **ret, char **err);
int backend_nccl_create(struct backend **ret, char **err);
/* Loads the MPI module (gpuready-mpi.so: $GPUREADY_MPI_MODULE, next to the
 * executable, <libdir>/gpuready/) and calls its
 * `int gpuready_backend_mpi_create(struct backend **ret, char **err)`. */
int backend_mpi_create(struct backend **ret, char **err);

/* The MPI module's entry point (exported by gpuready-mpi.so). */
typedef int (*backend_create_fn)(struct backend **ret, char **err);
#define BACKEND_MPI_SYMBOL "gpuready_backend_mpi_create"
/* Bumped on any change of the structs above; the module must match. */
#define BACKEND_ABI 7
#define BACKEND_ABI_SYMBOL "gpuready_backend_abi"

#endif
