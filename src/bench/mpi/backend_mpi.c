/* The MPI backend of the collective benchmark harness (see bench/backend.h):
 * host memory, and each collective is one blocking MPI call on
 * MPI_COMM_WORLD, one rank per process.
 *
 * This file is built as the loadable module gpuready-mpi.so, the only part
 * of gpuready linked to libmpi, so that the gpuready binary runs (and
 * reports a missing MPI as a finding) on machines without Open MPI; the
 * binary loads it with backend_mpi_create() (bench/backend_mpi_load.c).
 * The module exports exactly two symbols, gpuready_backend_mpi_create and
 * gpuready_backend_abi (everything else is hidden); it takes backend_set_error,
 * host_reduce and host_avg_finish from the program that loads it (the list
 * is src/bench/mpi/host_exports.list, which that program links with).
 *
 * Translations to MPI:
 * - in-place calls follow NCCL's conventions (backend.h) and become
 *   MPI_IN_PLACE; in-place reduce_scatter gets its result at the start of
 *   the buffer from MPI and moves it to recv = send + rank*count;
 * - NCCL's broadcast has a send and a recv buffer: the root copies
 *   send to recv first, then recv is broadcast;
 * - half and bfloat16 have no MPI type: they travel as a contiguous 2-byte
 *   type and reduce through user-defined (commutative) ops calling
 *   host_reduce(), which reduces in float and rounds on every step;
 * - MPI has no average: OP_AVG is MPI_SUM, then host_avg_finish() on every
 *   rank holding a result.
 *
 * Deadlines: MPI calls block and cannot be interrupted, so the deadlines
 * the harness passes are not enforced here; a peer that never arrives
 * stalls the call until the harness's watchdog reports the phase and exits
 * the process. Errors: MPI_ERRORS_RETURN is set on MPI_COMM_WORLD and
 * MPI_COMM_SELF, and every failing call's code becomes a message
 * (MPI_Error_string) in b->error. A failing MPI_Init_thread still aborts the
 * process inside Open MPI (no error handler exists before MPI is up).
 *
 * The module is loaded RTLD_LOCAL, so libmpi, its dependency, is not in the
 * global scope; Open MPI dlopens its components (mca_*.so) and some use
 * libmpi's symbols without linking it (mca_pml_ob1.so in Debian 12's
 * 4.1.4). Before MPI_Init, libmpi is therefore reopened RTLD_GLOBAL |
 * RTLD_NOLOAD (mpi4py does the same). Debian's build happens to work
 * without it, because components that do link libmpi (mca_bml_r2.so) are
 * opened RTLD_GLOBAL first, but that depends on the build and load order. */
#define _GNU_SOURCE
#include "bench/backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define EXPORT __attribute__((visibility("default")))

/* Page-aligned buffers, like the device allocations of the GPU backends. */
#define MPI_BUF_ALIGN 4096

EXPORT int gpuready_backend_mpi_create(struct backend **ret, char **err);
EXPORT extern const int gpuready_backend_abi;

const int gpuready_backend_abi = BACKEND_ABI;

/* The 2-byte types reduce on the host. MPI's user function gets no context
 * but the datatype (one 2-byte type serves both), so each (type, op) pair
 * has its own function. acc = in OP acc, as MPI asks. */
#define HOST_OP(fn, t, op)                                                     \
	static void fn(void *in, void *inout, int *len, MPI_Datatype *dt)      \
	{                                                                      \
		(void)dt;                                                      \
		host_reduce(t, op, inout, in, (size_t)*len);                   \
	}
HOST_OP(half_sum, DT_HALF, OP_SUM)
HOST_OP(half_prod, DT_HALF, OP_PROD)
HOST_OP(half_max, DT_HALF, OP_MAX)
HOST_OP(half_min, DT_HALF, OP_MIN)
HOST_OP(bf16_sum, DT_BFLOAT16, OP_SUM)
HOST_OP(bf16_prod, DT_BFLOAT16, OP_PROD)
HOST_OP(bf16_max, DT_BFLOAT16, OP_MAX)
HOST_OP(bf16_min, DT_BFLOAT16, OP_MIN)

/* Indexed by [bfloat16?][op] for OP_SUM..OP_MIN (OP_AVG sums). */
#define HOST_OPS 4
static MPI_User_function *const host_op_fns[2][HOST_OPS] = {
	{ [OP_SUM] = half_sum, [OP_PROD] = half_prod, [OP_MAX] = half_max, [OP_MIN] = half_min },
	{ [OP_SUM] = bf16_sum, [OP_PROD] = bf16_prod, [OP_MAX] = bf16_max, [OP_MIN] = bf16_min },
};

struct mpi_backend {
	struct backend base;
	bool started;            /* MPI is up and the fields below are set */
	bool own_init;           /* we called MPI_Init_thread, so we finalize */
	bool aborted;            /* abort() was called: no more MPI calls */
	int rank, nprocs, local_rank;
	MPI_Datatype two_bytes;  /* half and bfloat16; MPI_DATATYPE_NULL until made */
	MPI_Op host_ops[2][HOST_OPS]; /* MPI_OP_NULL until made */
	double t0;               /* timer_begin's MPI_Wtime() */
	MPI_Comm comm;           /* the collectives' communicator: MPI_COMM_WORLD, or a split's */
	bool child;              /* made by split(): fini frees comm and itself, nothing shared */
	char version[MPI_MAX_LIBRARY_VERSION_STRING];
};

/* One collective call, translated: counts as MPI takes them. */
struct mpi_call {
	void *send, *recv;
	int count;               /* elements of `type` per rank (paramcount) */
	size_t bytes;            /* count elements in bytes */
	enum dtype t;
	MPI_Datatype type;
	MPI_Op op;               /* MPI_OP_NULL for data movement */
	bool avg;                /* OP_AVG: sum, then host_avg_finish() */
	int root;
};

static struct mpi_backend *to_mpi(struct backend *b)
{
	return (struct mpi_backend *)b;
}

/* Turns a failed MPI call into b->error; returns -ENOMEM or -EIO. */
static int mpi_fail(struct mpi_backend *m, int rc, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING] = "";
	int len = 0, cls = MPI_ERR_OTHER;

	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS || len <= 0)
		snprintf(msg, sizeof(msg), "error code %d", rc);
	backend_set_error(&m->base, "%s failed: %s", what, msg);
	MPI_Error_class(rc, &cls);
	return cls == MPI_ERR_NO_MEM ? -ENOMEM : -EIO;
}

/* 0 for MPI_SUCCESS, else mpi_fail(). */
static int mpi_ok(struct mpi_backend *m, int rc, const char *what)
{
	return rc == MPI_SUCCESS ? 0 : mpi_fail(m, rc, what);
}

/* "Open MPI v4.1.4, package: ..." -> "Open MPI 4.1.4"; other libraries:
 * their first line, trimmed. Callable before MPI_Init (MPI-3). */
static void mpi_read_version(char *out, size_t size)
{
	char s[MPI_MAX_LIBRARY_VERSION_STRING] = "";
	int len = 0;

	if (MPI_Get_library_version(s, &len) != MPI_SUCCESS || len <= 0) {
		snprintf(out, size, "MPI (unknown version)");
		return;
	}
	s[strcspn(s, "\r\n")] = '\0';
	if (!strncmp(s, "Open MPI v", 10))
		snprintf(out, size, "Open MPI %.*s", (int)strcspn(s + 10, ", \t"), s + 10);
	else {
		size_t n = strlen(s);
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			s[--n] = '\0';
		snprintf(out, size, "%s", s + strspn(s, " \t"));
	}
}

/* The 2-byte datatype and the host-reducing ops. */
static int mpi_make_host_types(struct mpi_backend *m)
{
	int r = mpi_ok(m, MPI_Type_contiguous(2, MPI_BYTE, &m->two_bytes), "MPI_Type_contiguous");
	if (r < 0)
		return r;
	r = mpi_ok(m, MPI_Type_commit(&m->two_bytes), "MPI_Type_commit");
	for (int t = 0; t < 2 && r == 0; t++)
		for (int o = 0; o < HOST_OPS && r == 0; o++)
			r = mpi_ok(m, MPI_Op_create(host_op_fns[t][o], 1, &m->host_ops[t][o]), "MPI_Op_create");
	return r;
}

/* Rank, size and node-local rank of this process. */
static int mpi_identity(struct mpi_backend *m)
{
	MPI_Comm node = MPI_COMM_NULL;
	int r = mpi_ok(m, MPI_Comm_rank(MPI_COMM_WORLD, &m->rank), "MPI_Comm_rank");
	if (r == 0)
		r = mpi_ok(m, MPI_Comm_size(MPI_COMM_WORLD, &m->nprocs), "MPI_Comm_size");
	if (r == 0)
		r = mpi_ok(m, MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node),
			   "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
	if (r == 0)
		r = mpi_ok(m, MPI_Comm_rank(node, &m->local_rank), "MPI_Comm_rank(node)");
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	return r;
}

/* Puts the library that defines MPI_Init_thread (libmpi) and its
 * dependencies into the global scope, for Open MPI's components (see the
 * top of this file). The extra reference is never dropped. A failure is
 * left to MPI_Init, which then names the component it could not load. */
static void mpi_make_global(void)
{
	Dl_info info;

	if (dladdr((void *)MPI_Init_thread, &info) && info.dli_fname)
		dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

/* Brings MPI up once (init, proc_info and bcast may each come first). */
static int mpi_start(struct mpi_backend *m)
{
	int inited = 0, finalized = 0, provided = MPI_THREAD_SINGLE, r;

	if (m->started)
		return 0;
	if (m->aborted) {
		backend_set_error(&m->base, "MPI backend used after abort");
		return -ECANCELED;
	}
	MPI_Initialized(&inited);
	MPI_Finalized(&finalized);
	if (finalized) {
		backend_set_error(&m->base, "MPI was already finalized in this process and cannot start again");
		return -EALREADY;
	}
	if (!inited) {
		mpi_make_global();
		/* MPI_THREAD_SINGLE, as nccl-tests' MPI_Init and a plain MPI
		 * loop ask for: only this (main) thread ever calls MPI; the
		 * control plane's thread (src/job/) and the abort path never
		 * do. Any higher level makes Open MPI take its internal locks
		 * on every fragment (ompi_mpi_init.c: opal_set_using_threads
		 * when the level is not MPI_THREAD_SINGLE; in a profile,
		 * ompi_sync_wait_mt and pthread_mutex_lock in
		 * mca_btl_vader_send), a cost per byte the anchor does not
		 * pay: docs/benchmarks.md. */
		r = mpi_ok(m, MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
		if (r < 0)
			return r;
		m->own_init = true;
	}
	m->started = true; /* from here on fini() finalizes */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	r = mpi_identity(m);
	return r < 0 ? r : mpi_make_host_types(m);
}

static int mpi_init(struct backend *b, struct backend_env *env, double deadline)
{
	struct mpi_backend *m = to_mpi(b);

	(void)deadline; /* MPI_Init cannot be interrupted; the harness's watchdog covers a hang */
	if (env->local > 1) {
		backend_set_error(b, "the MPI backend runs one rank per process; %d ranks per process (-g) "
				  "need the NCCL backend", env->local);
		return -EINVAL;
	}
	int r = mpi_start(m);
	if (r < 0)
		return r;
	env->local = 1;
	env->nprocs = m->nprocs;
	env->nranks = m->nprocs;
	env->proc_rank = m->rank;
	b->env = *env;
	return 0;
}

static int mpi_proc_info(struct backend *b, int *proc_rank, int *nprocs, int *local_rank)
{
	struct mpi_backend *m = to_mpi(b);
	int r = mpi_start(m);

	if (r < 0)
		return r;
	*proc_rank = m->rank;
	*nprocs = m->nprocs;
	*local_rank = m->local_rank;
	return 0;
}

static int mpi_bcast(struct backend *b, void *buf, size_t len)
{
	struct mpi_backend *m = to_mpi(b);
	int r = mpi_start(m);

	if (r < 0)
		return r;
	if (len > INT_MAX) {
		backend_set_error(b, "broadcast of %zu bytes exceeds MPI's int count", len);
		return -EOVERFLOW;
	}
	return mpi_ok(m, MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast (bootstrap)");
}

static int mpi_alloc(struct backend *b, int l, size_t bytes, void **ret)
{
	void *p = NULL;
	int r;

	(void)l;
	r = posix_memalign(&p, MPI_BUF_ALIGN, bytes ? bytes : 1);
	if (r) {
		backend_set_error(b, "allocating %zu bytes of host memory: %s", bytes, strerror(r));
		return -r;
	}
	memset(p, 0, bytes ? bytes : 1); /* the warm-up sends it before any data is written */
	*ret = p;
	return 0;
}

static void mpi_free(struct backend *b, int l, void *p)
{
	(void)b;
	(void)l;
	free(p);
}

static int mpi_copy_in(struct backend *b, int l, void *dst, const void *host, size_t bytes)
{
	(void)b;
	(void)l;
	if (bytes)
		memcpy(dst, host, bytes);
	return 0;
}

static int mpi_copy_out(struct backend *b, int l, void *host, const void *src, size_t bytes)
{
	(void)b;
	(void)l;
	if (bytes)
		memcpy(host, src, bytes);
	return 0;
}

static MPI_Datatype mpi_dtype(const struct mpi_backend *m, enum dtype t)
{
	switch (t) {
	case DT_INT8: return MPI_INT8_T;
	case DT_UINT8: return MPI_UINT8_T;
	case DT_INT32: return MPI_INT32_T;
	case DT_UINT32: return MPI_UINT32_T;
	case DT_INT64: return MPI_INT64_T;
	case DT_UINT64: return MPI_UINT64_T;
	case DT_FLOAT: return MPI_FLOAT;
	case DT_DOUBLE: return MPI_DOUBLE;
	case DT_HALF:
	case DT_BFLOAT16: return m->two_bytes;
	case DT__COUNT: break;
	}
	return MPI_DATATYPE_NULL;
}

/* OP_AVG sums (the caller divides afterwards). */
static MPI_Op mpi_redop(const struct mpi_backend *m, enum dtype t, enum redop op)
{
	if (op == OP_AVG)
		op = OP_SUM;
	if (op >= HOST_OPS)
		return MPI_OP_NULL;
	if (t == DT_HALF || t == DT_BFLOAT16)
		return m->host_ops[t == DT_BFLOAT16][op];
	switch (op) {
	case OP_SUM: return MPI_SUM;
	case OP_PROD: return MPI_PROD;
	case OP_MAX: return MPI_MAX;
	case OP_MIN: return MPI_MIN;
	default: return MPI_OP_NULL;
	}
}

static void finish_avg(const struct mpi_backend *m, const struct mpi_call *k, void *buf)
{
	if (k->avg)
		host_avg_finish(k->t, buf, (size_t)k->count, m->nprocs);
}

static int run_all_reduce(struct mpi_backend *m, const struct mpi_call *k)
{
	const void *src = k->send == k->recv ? MPI_IN_PLACE : k->send;
	int r = mpi_ok(m, MPI_Allreduce(src, k->recv, k->count, k->type, k->op, m->comm), "MPI_Allreduce");
	if (r == 0)
		finish_avg(m, k, k->recv);
	return r;
}

/* In place (NCCL): send = recv + rank*count, which is where MPI_IN_PLACE
 * takes this rank's contribution from. */
static int run_all_gather(struct mpi_backend *m, const struct mpi_call *k)
{
	if ((char *)k->send == (char *)k->recv + (size_t)m->rank * k->bytes)
		return mpi_ok(m, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, k->recv, k->count, k->type,
					       m->comm), "MPI_Allgather (in place)");
	return mpi_ok(m, MPI_Allgather(k->send, k->count, k->type, k->recv, k->count, k->type, m->comm),
		      "MPI_Allgather");
}

/* In place (NCCL): recv = send + rank*count; MPI_IN_PLACE leaves the
 * result at the start of the buffer, so it moves to recv. */
static int run_reduce_scatter(struct mpi_backend *m, const struct mpi_call *k)
{
	bool in_place = (char *)k->recv == (char *)k->send + (size_t)m->rank * k->bytes;
	int r;

	if (in_place) {
		r = mpi_ok(m, MPI_Reduce_scatter_block(MPI_IN_PLACE, k->send, k->count, k->type, k->op, m->comm),
			   "MPI_Reduce_scatter_block (in place)");
		if (r == 0 && k->recv != k->send && k->bytes)
			memmove(k->recv, k->send, k->bytes);
	} else {
		r = mpi_ok(m, MPI_Reduce_scatter_block(k->send, k->recv, k->count, k->type, k->op, m->comm),
			   "MPI_Reduce_scatter_block");
	}
	if (r == 0)
		finish_avg(m, k, k->recv);
	return r;
}

/* NCCL broadcasts from the root's send buffer into everyone's recv. */
static int run_broadcast(struct mpi_backend *m, const struct mpi_call *k)
{
	if (m->rank == k->root && k->send != k->recv && k->bytes)
		memcpy(k->recv, k->send, k->bytes);
	return mpi_ok(m, MPI_Bcast(k->recv, k->count, k->type, k->root, m->comm), "MPI_Bcast");
}

/* MPI_IN_PLACE is the root's only; other ranks just send. */
static int run_reduce(struct mpi_backend *m, const struct mpi_call *k)
{
	bool root = m->rank == k->root;
	const void *src = root && k->send == k->recv ? MPI_IN_PLACE : k->send;
	int r = mpi_ok(m, MPI_Reduce(src, k->recv, k->count, k->type, k->op, k->root, m->comm), "MPI_Reduce");
	if (r == 0 && root)
		finish_avg(m, k, k->recv);
	return r;
}

static int run_alltoall(struct mpi_backend *m, const struct mpi_call *k)
{
	if (k->send == k->recv)
		return mpi_ok(m, MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, k->recv, k->count, k->type,
					      m->comm), "MPI_Alltoall (in place)");
	return mpi_ok(m, MPI_Alltoall(k->send, k->count, k->type, k->recv, k->count, k->type, m->comm),
		      "MPI_Alltoall");
}

/* Ring exchange: send to rank+1, receive from rank-1. */
static int run_sendrecv(struct mpi_backend *m, const struct mpi_call *k)
{
	int next = (m->rank + 1) % m->nprocs, prev = (m->rank - 1 + m->nprocs) % m->nprocs;

	if (k->send == k->recv)
		return mpi_ok(m, MPI_Sendrecv_replace(k->recv, k->count, k->type, next, 0, prev, 0, m->comm,
						      MPI_STATUS_IGNORE), "MPI_Sendrecv_replace");
	return mpi_ok(m, MPI_Sendrecv(k->send, k->count, k->type, next, 0, k->recv, k->count, k->type, prev, 0,
				      m->comm, MPI_STATUS_IGNORE), "MPI_Sendrecv");
}

/* Checks the arguments and fills k; 0 or -EINVAL/-EOVERFLOW. */
static int mpi_prepare(struct mpi_backend *m, enum coll c, size_t count, enum dtype t, enum redop op, int root,
		       struct mpi_call *k)
{
	bool reducing = c == COLL_ALL_REDUCE || c == COLL_REDUCE_SCATTER || c == COLL_REDUCE;
	bool rooted = c == COLL_BROADCAST || c == COLL_REDUCE;
	int size = 0;

	if ((unsigned)c >= COLL__COUNT || (unsigned)t >= DT__COUNT || (reducing && (unsigned)op >= OP__COUNT)) {
		backend_set_error(&m->base, "MPI backend: unknown collective %d, type %d or op %d", c, t, op);
		return -EINVAL;
	}
	if (count > INT_MAX) {
		backend_set_error(&m->base, "MPI backend: count %zu exceeds MPI's int count (%d)", count, INT_MAX);
		return -EOVERFLOW;
	}
	if (rooted && (root < 0 || root >= m->nprocs)) {
		backend_set_error(&m->base, "MPI backend: root %d outside 0..%d", root, m->nprocs - 1);
		return -EINVAL;
	}
	*k = (struct mpi_call){
		.count = (int)count,
		.t = t,
		.type = mpi_dtype(m, t),
		.op = reducing ? mpi_redop(m, t, op) : MPI_OP_NULL,
		.avg = reducing && op == OP_AVG,
		.root = root,
	};
	int r = mpi_ok(m, MPI_Type_size(k->type, &size), "MPI_Type_size");
	k->bytes = count * (size_t)size;
	return r;
}

static int mpi_run(struct backend *b, enum coll c, void *const *send, void *const *recv, size_t count, enum dtype t,
		   enum redop op, int root)
{
	struct mpi_backend *m = to_mpi(b);
	struct mpi_call k;
	int r;

	if (!m->started || m->aborted) {
		backend_set_error(b, "MPI backend: run() %s", m->aborted ? "after abort" : "before init");
		return -EINVAL;
	}
	r = mpi_prepare(m, c, count, t, op, root, &k);
	if (r < 0)
		return r;
	k.send = send[0];
	k.recv = recv[0];
	switch (c) {
	case COLL_ALL_REDUCE: return run_all_reduce(m, &k);
	case COLL_ALL_GATHER: return run_all_gather(m, &k);
	case COLL_REDUCE_SCATTER: return run_reduce_scatter(m, &k);
	case COLL_BROADCAST: return run_broadcast(m, &k);
	case COLL_REDUCE: return run_reduce(m, &k);
	case COLL_ALLTOALL: return run_alltoall(m, &k);
	case COLL_SENDRECV: return run_sendrecv(m, &k);
	case COLL__COUNT: break;
	}
	return -EINVAL;
}

/* MPI calls return when they are done: nothing is outstanding. */
static int mpi_wait(struct backend *b, double deadline)
{
	(void)b;
	(void)deadline;
	return 0;
}

/* Blocks until every rank arrives; a missing peer is the watchdog's. */
static int mpi_barrier(struct backend *b, double deadline)
{
	struct mpi_backend *m = to_mpi(b);

	(void)deadline;
	if (!m->started || m->aborted) {
		backend_set_error(b, "MPI backend: barrier %s", m->aborted ? "after abort" : "before init");
		return -EINVAL;
	}
	return mpi_ok(m, MPI_Barrier(m->comm), "MPI_Barrier");
}

static int mpi_timer_begin(struct backend *b)
{
	to_mpi(b)->t0 = MPI_Wtime();
	return 0;
}

static int mpi_timer_end(struct backend *b, double deadline, double *seconds)
{
	(void)deadline;
	*seconds = MPI_Wtime() - to_mpi(b)->t0;
	return 0;
}

static void mpi_device(struct backend *b, int l, struct backend_device *out)
{
	(void)b;
	(void)l;
	*out = (struct backend_device){ .ordinal = -1, .bus_id = "", .name = "host" };
}

static const char *mpi_version(struct backend *b)
{
	return to_mpi(b)->version;
}

/* The harness exits after this; MPI_Finalize would wait for peers that
 * may be gone, so later calls (fini included) leave MPI alone. */
static void mpi_abort(struct backend *b)
{
	if (b)
		to_mpi(b)->aborted = true;
}

static void mpi_fini(struct backend *b)
{
	struct mpi_backend *m = to_mpi(b);
	int finalized = 0;

	if (!m)
		return;
	if (m->child) {
		if (!m->aborted)
			MPI_Comm_free(&m->comm);
		free(m);
		return;
	}
	if (m->started && !m->aborted) {
		for (int t = 0; t < 2; t++)
			for (int o = 0; o < HOST_OPS; o++)
				if (m->host_ops[t][o] != MPI_OP_NULL)
					MPI_Op_free(&m->host_ops[t][o]);
		if (m->two_bytes != MPI_DATATYPE_NULL)
			MPI_Type_free(&m->two_bytes);
		MPI_Finalized(&finalized);
		if (m->own_init && !finalized)
			MPI_Finalize();
	}
	free(m);
}

static int mpi_split(struct backend *b, const struct backend_split *how, double deadline, struct backend **child);

static const struct backend_ops mpi_ops = {
	.name = "mpi",
	.init = mpi_init,
	.alloc = mpi_alloc,
	.free = mpi_free,
	.copy_in = mpi_copy_in,
	.copy_out = mpi_copy_out,
	.run = mpi_run,
	.wait = mpi_wait,
	.barrier = mpi_barrier,
	.timer_begin = mpi_timer_begin,
	.timer_end = mpi_timer_end,
	.device = mpi_device,
	.version = mpi_version,
	.abort = mpi_abort,
	.fini = mpi_fini,
	.proc_info = mpi_proc_info,
	.bcast = mpi_bcast,
	.split = mpi_split,
};

/* MPI_Comm_split (MPI 4.0 §7.4.2): the processes of one color in a
 * communicator of their own, ordered by key; MPI_UNDEFINED for none. The
 * child shares the parent's datatypes and ops. how->ring and the socket
 * fields do not apply: MPI picks its own algorithms. */
static int mpi_split(struct backend *b, const struct backend_split *how, double deadline, struct backend **child)
{
	struct mpi_backend *m = to_mpi(b), *c;
	MPI_Comm comm = MPI_COMM_NULL;

	(void)deadline; /* MPI cannot be interrupted; the caller's watchdog covers a hang */
	*child = NULL;
	int r = mpi_ok(m, MPI_Comm_split(m->comm, how->color < 0 ? MPI_UNDEFINED : how->color, how->key, &comm),
		       "MPI_Comm_split");
	if (r < 0 || comm == MPI_COMM_NULL)
		return r;
	if (!(c = malloc(sizeof(*c)))) {
		MPI_Comm_free(&comm);
		backend_set_error(b, "MPI backend: out of memory");
		return -ENOMEM;
	}
	*c = *m;
	c->child = true;
	c->own_init = false;
	c->comm = comm;
	MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
	r = mpi_ok(c, MPI_Comm_rank(comm, &c->rank), "MPI_Comm_rank (split)");
	if (r == 0)
		r = mpi_ok(c, MPI_Comm_size(comm, &c->nprocs), "MPI_Comm_size (split)");
	if (r < 0) {
		backend_set_error(b, "%s", c->base.error);
		mpi_fini(&c->base);
		return r;
	}
	c->base.env.proc_rank = c->rank;
	c->base.env.nprocs = c->base.env.nranks = c->nprocs;
	*child = &c->base;
	return 0;
}

/* The module's entry point (BACKEND_MPI_SYMBOL): a backend that has not
 * touched MPI yet (init, proc_info or bcast start it). *ret is the
 * caller's; ops->fini frees it. On failure *err is a malloc'd message. */
int gpuready_backend_mpi_create(struct backend **ret, char **err)
{
	struct mpi_backend *m = calloc(1, sizeof(*m));

	if (!m) {
		if (err)
			*err = strdup("MPI backend: out of memory");
		return -ENOMEM;
	}
	m->base.ops = &mpi_ops;
	m->comm = MPI_COMM_WORLD;
	m->two_bytes = MPI_DATATYPE_NULL;
	for (int t = 0; t < 2; t++)
		for (int o = 0; o < HOST_OPS; o++)
			m->host_ops[t][o] = MPI_OP_NULL;
	mpi_read_version(m->version, sizeof(m->version));
	*ret = &m->base;
	return 0;
}
