/* The NCCL backend: the collectives on GPUs through libnccl.so.2 and the
 * CUDA driver API, both loaded at run time (lib/nccl_api.h,
 * lib/cuda_api.h), the way nccl-tests runs them with -g N.
 *
 * A process drives `local` GPUs, ordinals first_gpu .. first_gpu+local-1,
 * one rank and one communicator each. Every local rank gets its device's
 * primary context (made current before each call for that rank: NCCL's
 * CUDA runtime takes the calling thread's current context as "the device")
 * and a non-blocking stream of its own. Communicators are created inside
 * one ncclGroupStart/End, rank proc_rank*local + l, from a unique id that
 * process 0 creates and the harness's out-of-band broadcast hands out.
 *
 * Deadlines: NCCL 2.14+ can create communicators without blocking
 * (ncclCommInitRankConfig, blocking = 0): init then polls
 * ncclCommGetAsyncError until no rank is in progress, and aborts the
 * communicators at the deadline, naming the ranks that never finished.
 * Older NCCL blocks in ncclGroupEnd, and the harness's watchdog covers a
 * peer that never arrives. Completion is polled the way nccl-tests polls
 * (common.cu testStreamSynchronize): cuStreamQuery on every stream,
 * ncclCommGetAsyncError while one is pending, sched_yield when idle.
 *
 * Timing follows nccl-tests (common.cu BenchTime), the number users
 * compare: a host monotonic clock from timer_begin (after the harness's
 * barrier) until every stream has completed the loop.
 *
 * CUDA graphs (-G, nccl-tests common.cu BenchTime): capture_begin starts a
 * capture on every local rank's stream, run() then records NCCL's work
 * instead of launching it, capture_end ends the captures and instantiates
 * one graph per rank, graph_launch launches each on its rank's stream.
 * While capturing nothing runs, so wait() and timer_end() return at once
 * without querying the streams (cuStreamQuery on a capturing stream is an
 * error that invalidates the capture), and alloc, the copies and barrier()
 * are refused with -EBUSY (calls a capture forbids, or that it would
 * record); free() is never called during a capture (the harness frees
 * after graph_free). capture_begin and capture_end come from one thread
 * (thread-local capture mode, below). The driver's graph entry points are
 * loaded as optional: without them -G fails at init, not the backend.
 *
 * No stdout guard (core/stdout_guard.h) here, unlike the inventory probes:
 * this stdout is the nccl-tests table, where NCCL_DEBUG=INFO puts NCCL's
 * own log lines, as nccl-tests users expect (test-nccl sends them to
 * NCCL_DEBUG_FILE instead); the guard is process-wide while the control
 * plane's threads run by init; and neither the driver's libcuda.so.1 nor
 * the toolkit's stub libcuda.so prints (the stub fails cuInit with
 * CUDA_ERROR_STUB_LIBRARY, which cuda_api_format names). */
#define _GNU_SOURCE
#include "backend_nccl_int.h"
#include "core/cleanup.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool past(double deadline)
{
	return deadline > 0 && now_s() > deadline;
}

/* Sets b->error to "what: <CUDA error>" and returns -EIO. */
int nccl_cu_fail(struct nccl_backend *n, const char *what, CUresult r)
{
	char msg[256];
	cuda_api_format(&n->cu, what, r, msg, sizeof(msg));
	backend_set_error(&n->base, "%s", msg);
	return -EIO;
}

/* Sets b->error to "what: <NCCL error>; NCCL's last error: ..." (see
 * nccl_api_format) and returns -EIO. */
int nccl_fail(struct nccl_backend *n, ncclComm_t comm, const char *what, ncclResult_t r)
{
	char msg[sizeof(n->base.error)];
	nccl_api_format(&n->nccl, comm, what, r, msg, sizeof(msg));
	backend_set_error(&n->base, "%s", msg);
	return -EIO;
}

int nccl_set_ctx(struct nccl_backend *n, int l)
{
	CUresult r = n->cu.ctx_set_current(n->r[l].ctx);
	return r == CUDA_SUCCESS ? 0 : nccl_cu_fail(n, "cuCtxSetCurrent", r);
}

/* -EBUSY for a call that a capture forbids or would record. */
int nccl_capture_busy(struct nccl_backend *n, const char *op)
{
	if (!capturing(n))
		return 0;
	backend_set_error(&n->base, "nccl: %s during a CUDA graph capture (between capture_begin and capture_end "
				    "only collectives may be issued)", op);
	return -EBUSY;
}

/* ---- init ---- */

static int check_env(struct nccl_backend *n, const struct backend_env *e)
{
	if (e->local < 1 || e->nprocs < 1 || e->proc_rank < 0 || e->proc_rank >= e->nprocs || e->first_gpu < 0) {
		backend_set_error(&n->base, "nccl: invalid layout (process %d of %d, %d local rank(s), first GPU %d)",
				  e->proc_rank, e->nprocs, e->local, e->first_gpu);
		return -EINVAL;
	}
	if (e->nranks != e->nprocs * e->local) {
		backend_set_error(&n->base, "nccl: %d ranks do not fit %d process(es) x %d GPU(s)", e->nranks,
				  e->nprocs, e->local);
		return -EINVAL;
	}
	if (e->nprocs > 1 && !e->oob_bcast) {
		backend_set_error(&n->base, "nccl: %d processes but no out-of-band exchange for the NCCL unique id",
				  e->nprocs);
		return -EINVAL;
	}
	return 0;
}

/* cuInit, then enough devices for this process's ranks. */
static int check_devices(struct nccl_backend *n, const struct backend_env *e)
{
	int need = e->first_gpu + e->local, count = 0;
	char msg[256];
	CUresult r = n->cu.init(0);

	if (r == CUDA_ERROR_NO_DEVICE) {
		cuda_api_format(&n->cu, "cuInit", r, msg, sizeof(msg));
		backend_set_error(&n->base, "CUDA sees 0 GPUs (%s)", msg);
		return -ENODEV;
	}
	if (r != CUDA_SUCCESS)
		return nccl_cu_fail(n, "cuInit", r);
	n->cuda_ready = true;
	r = n->cu.device_get_count(&count);
	if (r != CUDA_SUCCESS)
		return nccl_cu_fail(n, "cuDeviceGetCount", r);
	if (count < need) {
		backend_set_error(&n->base, "CUDA sees %d GPU%s; this process needs GPUs %d..%d (%d local rank%s from GPU %d)",
				  count, count == 1 ? "" : "s", e->first_gpu, need - 1, e->local,
				  e->local == 1 ? "" : "s", e->first_gpu);
		return -ENODEV;
	}
	return 0;
}

/* Device, primary context, stream and barrier word of local rank l. */
static int setup_rank(struct nccl_backend *n, int l)
{
	struct nccl_rank *k = &n->r[l];
	CUresult r = n->cu.device_get(&k->dev, n->base.env.first_gpu + l);

	if (r != CUDA_SUCCESS)
		return nccl_cu_fail(n, "cuDeviceGet", r);
	r = n->cu.primary_ctx_retain(&k->ctx, k->dev);
	if (r != CUDA_SUCCESS) {
		k->ctx = NULL;
		return nccl_cu_fail(n, "cuDevicePrimaryCtxRetain", r);
	}
	if (nccl_set_ctx(n, l) < 0)
		return -EIO;
	r = n->cu.stream_create(&k->stream, CU_STREAM_NON_BLOCKING);
	if (r != CUDA_SUCCESS) {
		k->stream = NULL;
		return nccl_cu_fail(n, "cuStreamCreate", r);
	}
	r = n->cu.mem_alloc_v2(&k->barrier, sizeof(int));
	if (r != CUDA_SUCCESS) {
		k->barrier = 0;
		return nccl_cu_fail(n, "cuMemAlloc_v2(barrier)", r);
	}
	return 0;
}

static int share_id(struct nccl_backend *n, ncclUniqueId *id, double deadline)
{
	const struct backend_env *e = &n->base.env;

	memset(id, 0, sizeof(*id));
	if (e->proc_rank == 0) {
		ncclResult_t r = n->nccl.get_unique_id(id);
		if (r != ncclSuccess)
			return nccl_fail(n, NULL, "ncclGetUniqueId", r);
	}
	if (e->nprocs == 1)
		return 0;
	int r = e->oob_bcast(e->oob_ctx, id, sizeof(*id), deadline);
	if (r < 0)
		backend_set_error(&n->base, "nccl: sharing the NCCL unique id failed: %s", strerror(-r));
	return r;
}

/* "rank 4 (local 0, GPU 0), rank 5 (local 1, GPU 1)" for the ranks still busy. */
static void busy_ranks(struct nccl_backend *n, bool (*busy)(struct nccl_backend *, int), struct strbuf *out)
{
	for (int l = 0; l < n->n; l++)
		if (busy(n, l))
			strbuf_addf(out, "%srank %d (local %d, GPU %d)", out->len ? ", " : "", n->r[l].rank, l,
				    n->base.env.first_gpu + l);
}

static bool init_busy(struct nccl_backend *n, int l)
{
	ncclResult_t st = ncclInProgress;
	return n->r[l].comm && n->nccl.comm_get_async_error(n->r[l].comm, &st) == ncclSuccess &&
	       st == ncclInProgress;
}

void nccl_abort_comms(struct nccl_backend *n)
{
	for (int l = 0; l < n->n; l++)
		if (n->r[l].comm) {
			n->cu.ctx_set_current(n->r[l].ctx);
			n->nccl.comm_abort(n->r[l].comm);
			n->r[l].comm = NULL;
		}
}

/* Non-blocking init: until no communicator is in progress, or the deadline. */
int nccl_poll_init(struct nccl_backend *n, double deadline)
{
	for (;;) {
		bool busy = false;
		for (int l = 0; l < n->n; l++) {
			ncclResult_t st = ncclSuccess;
			ncclResult_t r = n->nccl.comm_get_async_error(n->r[l].comm, &st);
			if (r == ncclSuccess && st == ncclInProgress) {
				busy = true;
			} else if (r != ncclSuccess || st != ncclSuccess) {
				nccl_fail(n, n->r[l].comm, r != ncclSuccess ? "ncclCommGetAsyncError" : "ncclCommInitRankConfig",
					  r != ncclSuccess ? r : st);
				nccl_abort_comms(n);
				return -EIO;
			}
		}
		if (!busy)
			return 0;
		if (past(deadline)) {
			_cleanup_strbuf_ struct strbuf who = STRBUF_INIT;
			busy_ranks(n, init_busy, &who);
			backend_set_error(&n->base,
					  "NCCL communicator setup did not finish by the deadline: %s still initialising "
					  "(a rank on another host never joined? its log, and NCCL_SOCKET_IFNAME, say why)",
					  who.buf);
			nccl_abort_comms(n);
			return -ETIMEDOUT;
		}
		sched_yield();
	}
}

static int init_comms(struct nccl_backend *n, const ncclUniqueId *id, double deadline)
{
	const struct backend_env *e = &n->base.env;
	bool nonblocking = nccl_api_has_nonblocking_init(&n->nccl);
	ncclResult_t r = n->nccl.group_start();

	if (r != ncclSuccess)
		return nccl_fail(n, NULL, "ncclGroupStart", r);
	for (int l = 0; l < n->n; l++) {
		ncclConfig_v21400 cfg = NCCL_CONFIG_V21400_INITIALIZER;
		cfg.blocking = 0;
		if (nccl_set_ctx(n, l) < 0) {
			n->nccl.group_end();
			nccl_abort_comms(n);
			return -EIO;
		}
		r = nonblocking ? n->nccl.comm_init_rank_config(&n->r[l].comm, e->nranks, *id, n->r[l].rank, &cfg)
				: n->nccl.comm_init_rank(&n->r[l].comm, e->nranks, *id, n->r[l].rank);
		if (r != ncclSuccess && r != ncclInProgress) {
			nccl_fail(n, n->r[l].comm, nonblocking ? "ncclCommInitRankConfig" : "ncclCommInitRank", r);
			n->nccl.group_end();
			nccl_abort_comms(n);
			return -EIO;
		}
	}
	r = n->nccl.group_end();
	if (r != ncclSuccess && r != ncclInProgress) {
		nccl_fail(n, NULL, "ncclGroupEnd (communicator setup)", r);
		nccl_abort_comms(n);
		return -EIO;
	}
	return nonblocking ? nccl_poll_init(n, deadline) : 0;
}

/* 0, or -ENOTSUP naming what this driver or NCCL lacks for -G (asked by
 * init when -G is given, so the run stops before its header). */
static int nccl_init(struct backend *b, struct backend_env *env, double deadline)
{
	struct nccl_backend *n = nb(b);
	_cleanup_free_ char *err = NULL;
	ncclUniqueId id;

	b->env = *env;
	int r = check_env(n, env);
	if (r < 0)
		return r;
	r = nccl_api_load(&n->nccl, env->nccl_lib, &err);
	n->nccl_loaded = true;
	if (n->nccl.file[0])
		snprintf(n->library, sizeof(n->library), "%s (%s)",
			 n->nccl.version[0] ? n->nccl.version : "NCCL, version unknown", n->nccl.file);
	if (r < 0) {
		/* say what else is missing: on a node without the driver or
		 * GPUs, installing NCCL alone would not be enough */
		if (check_devices(n, env) < 0) {
			_cleanup_free_ char *cuda = xstrdup(b->error);
			backend_set_error(b, "%s; and %s", cuda, err);
		} else {
			backend_set_error(b, "%s", err);
		}
		return r;
	}
	r = check_devices(n, env);
	if (r < 0)
		return r;
	if ((env->memory && (r = nccl_mem_supported(n)) < 0) || (env->reg && (r = nccl_reg_supported(n, env->reg)) < 0))
		return r;
	if (env->graph > 0) {
		if ((r = nccl_graph_supported(n)) < 0)
			return r;
		nccl_graph_mixing(env);
	}
	n->r = xcalloc((size_t)env->local, sizeof(*n->r));
	n->n = env->local;
	for (int l = 0; l < n->n; l++) {
		n->r[l].rank = env->proc_rank * env->local + l;
		r = setup_rank(n, l);
		if (r < 0)
			return r;
	}
	r = share_id(n, &id, deadline);
	if (r < 0 || (env->memory && (r = nccl_mem_init_note(n, false)) < 0))
		return r;
	r = init_comms(n, &id, deadline);
	if (r == 0 && env->memory)
		r = nccl_mem_init_note(n, true);
	return r;
}

/* ---- memory ---- */

/* The synchronous copy runs on the legacy stream, which the ranks'
 * non-blocking streams do not wait for: finish it before returning. */
static int nccl_copy_in(struct backend *b, int l, void *dst, const void *host, size_t bytes)
{
	struct nccl_backend *n = nb(b);

	if (nccl_capture_busy(n, "copy_in") < 0)
		return -EBUSY;
	if (nccl_set_ctx(n, l) < 0)
		return -EIO;
	CUresult r = n->cu.memcpy_htod_v2((CUdeviceptr)(uintptr_t)dst, host, bytes);
	if (r != CUDA_SUCCESS)
		return nccl_cu_fail(n, "cuMemcpyHtoD_v2", r);
	r = n->cu.ctx_synchronize();
	return r == CUDA_SUCCESS ? 0 : nccl_cu_fail(n, "cuCtxSynchronize (after cuMemcpyHtoD_v2)", r);
}

static int nccl_copy_out(struct backend *b, int l, void *host, const void *src, size_t bytes)
{
	struct nccl_backend *n = nb(b);

	if (nccl_capture_busy(n, "copy_out") < 0)
		return -EBUSY;
	if (nccl_set_ctx(n, l) < 0)
		return -EIO;
	CUresult r = n->cu.memcpy_dtoh_v2(host, (CUdeviceptr)(uintptr_t)src, bytes);
	return r == CUDA_SUCCESS ? 0 : nccl_cu_fail(n, "cuMemcpyDtoH_v2", r);
}

/* ---- collectives ---- */

struct coll_args {
	enum coll c;
	const void *send;
	void *recv;
	size_t count;
	ncclDataType_t t;
	ncclRedOp_t op;
	int root;
	size_t elem;           /* bytes per element */
};

/* alltoall and sendrecv as nccl-tests spells them (alltoall.cu,
 * sendrecv.cu): grouped ncclSend/ncclRecv, chunk r of the buffers to and
 * from rank r; sendrecv sends to rank+1 and receives from rank-1. */
static ncclResult_t run_p2p(struct nccl_backend *n, const struct nccl_rank *k, const struct coll_args *a)
{
	int nranks = n->base.env.nranks;
	ncclResult_t r = n->nccl.group_start();

	for (int p = 0; p < nranks && r == ncclSuccess; p++) {
		int to = a->c == COLL_SENDRECV ? (k->rank + 1) % nranks : p;
		int from = a->c == COLL_SENDRECV ? (k->rank - 1 + nranks) % nranks : p;
		size_t off = a->c == COLL_SENDRECV ? 0 : (size_t)p * a->count * a->elem;
		r = n->nccl.send((const char *)a->send + off, a->count, a->t, to, k->comm, k->stream);
		if (r == ncclSuccess || r == ncclInProgress)
			r = n->nccl.recv((char *)a->recv + off, a->count, a->t, from, k->comm, k->stream);
		if (r == ncclInProgress)
			r = ncclSuccess;
		if (a->c == COLL_SENDRECV)
			break;
	}
	ncclResult_t e = n->nccl.group_end();
	return r != ncclSuccess ? r : e == ncclInProgress ? ncclSuccess : e;
}

static ncclResult_t run_one(struct nccl_backend *n, const struct nccl_rank *k, const struct coll_args *a)
{
	const struct nccl_api *x = &n->nccl;

	switch (a->c) {
	case COLL_ALL_REDUCE:
		return x->all_reduce(a->send, a->recv, a->count, a->t, a->op, k->comm, k->stream);
	case COLL_ALL_GATHER:
		return x->all_gather(a->send, a->recv, a->count, a->t, k->comm, k->stream);
	case COLL_REDUCE_SCATTER:
		return x->reduce_scatter(a->send, a->recv, a->count, a->t, a->op, k->comm, k->stream);
	case COLL_BROADCAST:
		return x->broadcast(a->send, a->recv, a->count, a->t, a->root, k->comm, k->stream);
	case COLL_REDUCE:
		return x->reduce(a->send, a->recv, a->count, a->t, a->op, a->root, k->comm, k->stream);
	case COLL_ALLTOALL:
	case COLL_SENDRECV:
		return run_p2p(n, k, a);
	default:
		return ncclInvalidArgument;
	}
}

/* A non-blocking communicator may still be enqueueing after ncclGroupEnd
 * (ncclInProgress); NCCL forbids the next call on it until that is over.
 * No deadline here: a peer missing at this point stalls the blocking API
 * the same way, and the harness's watchdog reports it. */
static int settle(struct nccl_backend *n)
{
	for (int l = 0; l < n->n; l++) {
		ncclResult_t st = ncclInProgress;
		while (st == ncclInProgress) {
			ncclResult_t r = n->nccl.comm_get_async_error(n->r[l].comm, &st);
			if (r != ncclSuccess)
				return nccl_fail(n, n->r[l].comm, "ncclCommGetAsyncError", r);
			if (st == ncclInProgress)
				sched_yield();
		}
		if (st != ncclSuccess)
			return nccl_fail(n, n->r[l].comm, "NCCL asynchronous error", st);
	}
	return 0;
}

/* The NCCL calls behind each collective, for messages. */
static const char *const nccl_call[COLL__COUNT] = {
	[COLL_ALL_REDUCE] = "ncclAllReduce",
	[COLL_ALL_GATHER] = "ncclAllGather",
	[COLL_REDUCE_SCATTER] = "ncclReduceScatter",
	[COLL_BROADCAST] = "ncclBroadcast",
	[COLL_REDUCE] = "ncclReduce",
	[COLL_ALLTOALL] = "ncclSend/ncclRecv (alltoall)",
	[COLL_SENDRECV] = "ncclSend/ncclRecv (sendrecv)",
};

/* The harness's types and reductions in NCCL's enums (lib/nccl_api.h);
 * 0, or -ENOTSUP with *err set (bfloat16 and avg need NCCL 2.10). */
static int nccl_map(const struct nccl_api *api, enum dtype t, enum redop op, ncclDataType_t *ret_t, ncclRedOp_t *ret_op,
		    char **err)
{
	static const ncclDataType_t types[DT__COUNT] = {
		[DT_INT8] = ncclInt8,     [DT_UINT8] = ncclUint8,     [DT_INT32] = ncclInt32,
		[DT_UINT32] = ncclUint32, [DT_INT64] = ncclInt64,     [DT_UINT64] = ncclUint64,
		[DT_HALF] = ncclFloat16,  [DT_FLOAT] = ncclFloat32,   [DT_DOUBLE] = ncclFloat64,
		[DT_BFLOAT16] = ncclBfloat16,
	};
	static const ncclRedOp_t ops[OP__COUNT] = {
		[OP_SUM] = ncclSum, [OP_PROD] = ncclProd, [OP_MAX] = ncclMax, [OP_MIN] = ncclMin, [OP_AVG] = ncclAvg,
	};
	bool old = api->code < NCCL_VERSION_CODE(2, 10, 0);

	if ((unsigned)t >= DT__COUNT || (unsigned)op >= OP__COUNT) {
		*err = xasprintf("unknown data type %d or reduction %d", (int)t, (int)op);
		return -EINVAL;
	}
	if (old && (t == DT_BFLOAT16 || op == OP_AVG)) {
		*err = xasprintf("%s needs NCCL 2.10 or newer; this is %s", t == DT_BFLOAT16 ? "bfloat16" : "avg",
				 api->version);
		return -ENOTSUP;
	}
	*ret_t = types[t];
	*ret_op = ops[op];
	return 0;
}

static int nccl_run(struct backend *b, enum coll c, void *const *send, void *const *recv, size_t count, enum dtype t,
		    enum redop op, int root)
{
	struct nccl_backend *n = nb(b);
	struct coll_args a = { .c = c, .count = count, .root = root };
	_cleanup_free_ char *why = NULL;

	if ((unsigned)c >= COLL__COUNT) {
		backend_set_error(b, "nccl: unknown collective %d", (int)c);
		return -EINVAL;
	}
	if (nccl_map(&n->nccl, t, op, &a.t, &a.op, &why) < 0) {
		backend_set_error(b, "nccl: %s", why);
		return -ENOTSUP;
	}
	a.elem = dtype_size(t);
	ncclResult_t r = n->nccl.group_start();
	if (r != ncclSuccess)
		return nccl_fail(n, NULL, "ncclGroupStart", r);
	for (int l = 0; l < n->n && r == ncclSuccess; l++) {
		if (nccl_set_ctx(n, l) < 0) {
			n->nccl.group_end();
			return -EIO;
		}
		a.send = send[l];
		a.recv = recv[l];
		n->r[l].done = false;
		r = run_one(n, &n->r[l], &a);
		if (r == ncclInProgress)
			r = ncclSuccess;
	}
	ncclResult_t e = n->nccl.group_end();
	if (r != ncclSuccess)
		return nccl_fail(n, NULL, nccl_call[c], r);
	if (e != ncclSuccess && e != ncclInProgress)
		return nccl_fail(n, NULL, "ncclGroupEnd", e);
	return e == ncclInProgress ? settle(n) : 0;
}

/* -m: one ncclGroupStart/End around the aggregated launches, as
 * nccl-tests' BenchTime; run()'s own groups nest inside (NCCL counts the
 * depth and issues everything at the outermost ncclGroupEnd). */
static int nccl_group_begin(struct backend *b)
{
	struct nccl_backend *n = nb(b);
	ncclResult_t r = n->nccl.group_start();

	return r == ncclSuccess ? 0 : nccl_fail(n, NULL, "ncclGroupStart", r);
}

static int nccl_group_end(struct backend *b)
{
	struct nccl_backend *n = nb(b);
	ncclResult_t e = n->nccl.group_end();

	if (e != ncclSuccess && e != ncclInProgress)
		return nccl_fail(n, NULL, "ncclGroupEnd", e);
	return e == ncclInProgress ? settle(n) : 0;
}

static bool wait_busy(struct nccl_backend *n, int l)
{
	return !n->r[l].done;
}

/* One pass over the ranks still busy: 1 all done, 0 some pending, <0 error. */
static int poll_streams(struct nccl_backend *n, bool *progress)
{
	int pending = 0;

	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		if (k->done)
			continue;
		if (nccl_set_ctx(n, l) < 0)
			return -EIO;
		CUresult q = n->cu.stream_query(k->stream);
		if (q == CUDA_SUCCESS) {
			k->done = *progress = true;
			continue;
		}
		if (q != CUDA_ERROR_NOT_READY)
			return nccl_cu_fail(n, "cuStreamQuery", q);
		ncclResult_t st = ncclSuccess;
		ncclResult_t r = n->nccl.comm_get_async_error(k->comm, &st);
		if (r != ncclSuccess)
			return nccl_fail(n, k->comm, "ncclCommGetAsyncError", r);
		if (st != ncclSuccess && st != ncclInProgress) {
			char what[96];
			snprintf(what, sizeof(what), "rank %d (GPU %d): NCCL asynchronous error", k->rank,
				 n->base.env.first_gpu + l);
			return nccl_fail(n, k->comm, what, st);
		}
		pending++;
	}
	return pending == 0;
}

/* While capturing, nothing was launched: done at once (see the top). */
static int nccl_wait(struct backend *b, double deadline)
{
	struct nccl_backend *n = nb(b);

	if (capturing(n))
		return 0;
	for (;;) {
		bool progress = false;
		int r = poll_streams(n, &progress);
		if (r != 0)
			return r < 0 ? r : 0;
		if (past(deadline)) {
			_cleanup_strbuf_ struct strbuf who = STRBUF_INIT;
			busy_ranks(n, wait_busy, &who);
			backend_set_error(b, "NCCL operation not finished by the deadline: %s still running", who.buf);
			return -ETIMEDOUT;
		}
		if (!progress)
			sched_yield();
	}
}

/* An all-reduce of one int32 per rank, completed by the deadline. */
static int nccl_barrier(struct backend *b, double deadline)
{
	struct nccl_backend *n = nb(b);

	if (nccl_capture_busy(n, "barrier") < 0)
		return -EBUSY;
	_cleanup_free_ void **bufs = xcalloc((size_t)n->n, sizeof(*bufs));

	for (int l = 0; l < n->n; l++)
		bufs[l] = (void *)(uintptr_t)n->r[l].barrier;
	int r = nccl_run(b, COLL_ALL_REDUCE, bufs, bufs, 1, DT_INT32, OP_SUM, -1);
	if (r == 0)
		r = nccl_wait(b, deadline);
	if (r < 0) {
		char prev[sizeof(b->error)];
		memcpy(prev, b->error, sizeof(prev));
		backend_set_error(b, "barrier: %s", prev);
	}
	return r;
}

static int nccl_timer_begin(struct backend *b)
{
	nb(b)->t_begin = now_s();
	return 0;
}

static int nccl_timer_end(struct backend *b, double deadline, double *seconds)
{
	struct nccl_backend *n = nb(b);
	int r = nccl_wait(b, deadline);

	if (r < 0)
		return r;
	*seconds = now_s() - n->t_begin;
	return 0;
}

/* ---- description and teardown ---- */

static void nccl_device(struct backend *b, int l, struct backend_device *out)
{
	struct nccl_backend *n = nb(b);
	int dom = 0, bus = 0, slot = 0;
	CUdevice dev = l < n->n ? n->r[l].dev : b->env.first_gpu + l;

	*out = (struct backend_device){ .ordinal = b->env.first_gpu + l };
	if (!n->cuda_ready)
		return;
	if (n->cu.device_get_attribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev) == CUDA_SUCCESS &&
	    n->cu.device_get_attribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev) == CUDA_SUCCESS &&
	    n->cu.device_get_attribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev) == CUDA_SUCCESS)
		snprintf(out->bus_id, sizeof(out->bus_id), "%04x:%02x:%02x", (unsigned)dom & 0xffff, (unsigned)bus & 0xff,
			 (unsigned)slot & 0xff);
	if (n->cu.device_get_name(out->name, (int)sizeof(out->name), dev) != CUDA_SUCCESS)
		out->name[0] = '\0';
}

/* The version with the file it came from, for the header and the JSON's
 * "library" (NCCL may come from the system, a CUDA toolkit, a pip wheel or
 * --nccl-lib); "" until NCCL is loaded. */
static const char *nccl_version(struct backend *b)
{
	struct nccl_backend *n = nb(b);
	return n->library;
}

static void nccl_abort(struct backend *b)
{
	struct nccl_backend *n = nb(b);
	if (n->r)
		nccl_abort_comms(n);
}

/* Destroys what init built, in reverse; accepts a half-built backend. */
static void nccl_fini(struct backend *b)
{
	struct nccl_backend *n = nb(b);

	nccl_graph_free(b);
	nccl_marks(b, 0);
	if (n->parent) {
		nccl_split_fini(n);
		return;
	}
	for (int l = 0; l < n->n; l++) {
		struct nccl_rank *k = &n->r[l];
		if (!k->ctx)
			continue;
		n->cu.ctx_set_current(k->ctx);
		if (k->comm)
			n->nccl.comm_destroy(k->comm);
		if (k->stream)
			n->cu.stream_destroy_v2(k->stream);
		if (k->barrier)
			n->cu.mem_free_v2(k->barrier);
		cuda_api_release(&n->cu, k->dev);
	}
	if (n->cuda_ready)
		n->cu.ctx_set_current(NULL);
	free(n->r);
	if (n->nccl_loaded)
		nccl_api_unload(&n->nccl);
	dl_close(&n->culib);
	free(n);
}

static const struct backend_ops nccl_ops = {
	.name = "nccl",
	.init = nccl_init,
	.alloc = nccl_alloc,
	.free = nccl_free,
	.copy_in = nccl_copy_in,
	.copy_out = nccl_copy_out,
	.run = nccl_run,
	.wait = nccl_wait,
	.barrier = nccl_barrier,
	.timer_begin = nccl_timer_begin,
	.timer_end = nccl_timer_end,
	.device = nccl_device,
	.version = nccl_version,
	.abort = nccl_abort,
	.fini = nccl_fini,
	.capture_begin = nccl_capture_begin,
	.capture_end = nccl_capture_end,
	.graph_launch = nccl_graph_launch,
	.graph_free = nccl_graph_free,
	.group_begin = nccl_group_begin,
	.group_end = nccl_group_end,
	.marks = nccl_marks,
	.mark = nccl_mark,
	.mark_elapsed = nccl_mark_elapsed,
	.mem_free = nccl_mem_free,
	.reg = nccl_reg,
	.split = nccl_split,
};

/* Loads the CUDA driver API now (no GPU work yet): a machine without the
 * NVIDIA driver is told so before anything else. NCCL is loaded by init,
 * which knows --nccl-lib. */
int backend_nccl_create(struct backend **ret, char **err)
{
	struct nccl_backend *n = xcalloc(1, sizeof(*n));

	n->base.ops = &nccl_ops;
	int r = cuda_api_load(&n->culib, &n->cu, NCCL_CUDA_NEED);
	if (r < 0) {
		*err = xasprintf("CUDA driver library (libcuda.so.1) could not be loaded: %s (the NVIDIA driver "
				 "installs it; is it installed, and is this a GPU machine?)",
				 n->culib.error ? n->culib.error : "unknown reason");
		dl_close(&n->culib);
		free(n);
		return r;
	}
	*ret = &n->base;
	return 0;
}
