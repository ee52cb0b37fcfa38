/* A stand-in for libnccl.so.2 (soname libnccl.so.2), for tests on machines
 * without GPUs, paired with fake_cuda.c: "device" buffers are host memory.
 *
 * What it does: every rank of a communicator lives in this one process
 * (nccl-tests -g N). Calls made between ncclGroupStart and the outermost
 * ncclGroupEnd are queued and run at ncclGroupEnd; a call outside a group
 * is a group of its own. Collectives are matched across the ranks of a
 * communicator in issue order, send/recv pairs by (sender, receiver) in
 * issue order; what matched is computed exactly (fake_nccl_math.c: every
 * ncclDataType_t up to bfloat16, every ncclRedOp_t up to avg, which is the
 * sum divided by the rank count), reading all inputs before writing any
 * output. What did not match leaves its stream hung, as a real collective
 * waiting for a peer would. Ranks must sit on distinct devices (the current
 * CUDA context at init, read from libcuda.so.1 as NCCL's runtime does), and
 * each call's stream must belong to its rank's device.
 *
 * CUDA graphs: a group whose calls are issued on capturing streams (the
 * fake libcuda's captures) does not run; it is recorded into those
 * streams' graphs and replayed, as one group exactly as ncclGroupEnd would
 * run it, once every stream it used has launched its graph
 * (fake_nccl_graph.c). Until then the launched streams hang, as a real
 * NCCL kernel waits for its peers. A group mixing capturing and other
 * streams is refused (ncclInvalidUsage).
 *
 * Buffer registration and ncclMemAlloc: fake_nccl_reg.c.
 *
 * Environment:
 *   FAKE_NCCL_VERSION   version code ncclGetVersion reports (default 22105)
 *   FAKE_NCCL_HANG      "init": communicators never finish initialising
 *                       (non-blocking ones stay ncclInProgress; a blocking
 *                       ncclGroupEnd never returns); "coll": collectives
 *                       never complete (their streams stay hung until
 *                       ncclCommAbort/Destroy)
 *   FAKE_NCCL_SCENARIO  what the INFO log claims: ib-gdr (default), socket,
 *                       p2p-single-node
 *   FAKE_NCCL_INIT_FAIL TEXT: ncclCommInitRank(Config) WARNs TEXT and fails
 *                       with ncclSystemError; ncclGetLastError then answers
 *                       TEXT (it answers the last WARN's text, as NCCL's)
 *   NCCL_DEBUG, NCCL_DEBUG_SUBSYS, NCCL_DEBUG_FILE as NCCL reads them
 *                       (fake_nccl_log.c); the lines use NCCL's formats
 *                       (NCCL documentation, Environment Variables)
 * A unique id from another process is refused ("fake NCCL: single process
 * only"). Process-wide state sits in file-scope variables under one mutex,
 * as NCCL keeps its own; group state is per thread, as in NCCL. */
#define _GNU_SOURCE
#include "fake_nccl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The exported functions are NCCL's ABI, declared by nccl.h, which this
 * build does not have: no prototypes to precede them. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define FAKE_API __attribute__((visibility("default")))
#define COMM_MAGIC 0xfa4ec033u

struct clique {
	ncclUniqueId id;
	int nranks;
	int joined;
	struct ncclComm **ranks;
	int ready;             /* all joined and checked */
	struct split_call *splits; /* ncclCommSplit calls of this round, one per rank (NULL: none) */
	int nsplits;
	char algo[32];         /* NCCL_ALGO when it was made ("" unset) */
	ncclResult_t error;    /* set when the clique failed to form */
	struct clique *next;
};

struct ncclComm {
	unsigned magic;
	struct clique *cl;
	int rank;
	int dev;
	int blocking;
	int connected;         /* a first grouped call was reported ncclInProgress */
	int settling;          /* ncclInProgress once more from GetAsyncError */
	/* a non-blocking ncclCommSplit of this (parent) communicator: as NCCL,
	 * *split_out is written only when the split completed, and the
	 * parent is in progress until then (ncclCommGetAsyncError) */
	int split_pending;
	ncclComm_t *split_out;
	struct ncclComm *split_child;
	ncclResult_t async;
	struct op *colls;      /* queued collectives, issue order */
	struct op *p2p;        /* queued sends and receives, issue order */
	CUstream hung[64];     /* streams this comm left hung */
	int nhung;
};

struct split_call {
	int color, key;
	struct ncclComm *child; /* NULL for NCCL_SPLIT_NOCOLOR */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct clique *cliques;
static int id_counter;
static __thread int group_depth;
static __thread struct ncclComm *group_comms[256];
static __thread int group_ncomms;
static __thread int group_has_init;
static __thread struct op *group_captured; /* this group's ops on capturing streams */
static __thread int group_plain;           /* ... and whether it has others */

/* ---- libcuda hooks ---- */

void *fake_cuda_sym(const char *name)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h)
		return NULL;
	void *p = dlsym(h, name);
	dlclose(h);
	return p;
}

static int current_device(void)
{
	CUresult (*get)(CUdevice *) = (CUresult (*)(CUdevice *))fake_cuda_sym("cuCtxGetDevice");
	CUdevice d = 0;
	if (!get || get(&d) != CUDA_SUCCESS)
		return 0; /* the runtime's default: device 0 */
	return d;
}

static int stream_device(CUstream s)
{
	int (*f)(CUstream) = (int (*)(CUstream))fake_cuda_sym("fake_cuda_stream_device");
	return f ? f(s) : -1;
}

static void stream_hang(CUstream s, int hung)
{
	int (*f)(CUstream, int) = (int (*)(CUstream, int))fake_cuda_sym("fake_cuda_stream_hang");
	if (f)
		f(s, hung);
}

/* ---- version ---- */

static int version_code(void)
{
	const char *s = getenv("FAKE_NCCL_VERSION");
	return s && *s ? atoi(s) : 22105;
}

static void version_string(char *out, size_t size)
{
	int c = version_code();
	if (c >= 20900)
		snprintf(out, size, "%d.%d.%d+cuda12.4", c / 10000, c % 10000 / 100, c % 100);
	else
		snprintf(out, size, "%d.%d.%d+cuda12.4", c / 1000, c % 1000 / 100, c % 100);
}

FAKE_API ncclResult_t ncclGetVersion(int *v)
{
	if (!v)
		return ncclInvalidArgument;
	*v = version_code();
	return ncclSuccess;
}

FAKE_API const char *ncclGetErrorString(ncclResult_t r)
{
	switch ((int)r) {
	case ncclSuccess: return "no error";
	case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
	case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	case ncclRemoteError: return "remote process exited or there was a network error";
	case ncclInProgress: return "NCCL operation in progress";
	default: return "unknown result code";
	}
}

/* NCCL 2.13+: the last WARN's text, comm unused (NCCL's documentation). */
FAKE_API const char *ncclGetLastError(ncclComm_t comm)
{
	(void)comm;
	return fake_last_error();
}

FAKE_API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	memset(id, 0, sizeof(*id));
	pthread_mutex_lock(&lock);
	int n = ++id_counter;
	pthread_mutex_unlock(&lock);
	int pid = (int)getpid();
	memcpy(id->internal, "FAKENCCL", 8);
	memcpy(id->internal + 8, &pid, sizeof(pid));
	memcpy(id->internal + 12, &n, sizeof(n));
	return ncclSuccess;
}

/* ---- communicators ---- */

static int hang_mode(const char *what)
{
	const char *s = getenv("FAKE_NCCL_HANG");
	return s && !strcmp(s, what);
}

static const char *scenario(void)
{
	const char *s = getenv("FAKE_NCCL_SCENARIO");
	return s && *s ? s : "ib-gdr";
}

static int bad_comm(ncclComm_t c)
{
	return !c || c->magic != COMM_MAGIC;
}

/* Once per process: NCCL initialises its network transport once. */
static void log_net(int dev)
{
	static int done;
	char vs[64];

	if (done++)
		return;
	version_string(vs, sizeof(vs));
	fake_log_version(dev, vs);
	if (!strcmp(scenario(), "socket")) {
		fake_info(dev, SUB_INIT | SUB_NET, "NET/IB : No device found.");
		fake_info(dev, SUB_INIT | SUB_NET, "NET/Socket : Using [0]eth0:10.0.0.1<0>");
	} else if (!strcmp(scenario(), "p2p-single-node")) {
		fake_info(dev, SUB_INIT | SUB_NET, "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>");
	} else {
		fake_info(dev, SUB_INIT | SUB_NET,
		     "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>");
	}
}

static void log_channels(const struct ncclComm *c, int n)
{
	const struct clique *cl = c->cl;
	int next = (c->rank + 1) % n, prev = (c->rank - 1 + n) % n;
	int dnext = cl->ranks[next]->dev, dprev = cl->ranks[prev]->dev;
	const char *s = scenario();

	for (int ch = 0; ch < 2 && n > 1; ch++) {
		if (!strcmp(s, "p2p-single-node")) {
			fake_info(c->dev, SUB_INIT | SUB_P2P, "Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read", ch,
			     c->rank, c->dev, next, dnext);
			continue;
		}
		const char *via = !strcmp(s, "socket") ? "Socket/0" : ch ? "IB/1/GDRDMA" : "IB/0/GDRDMA";
		fake_info(c->dev, SUB_INIT | SUB_NET, "Channel %02d/0 : %d[%d] -> %d[%d] [receive] via NET/%s", ch, prev,
		     dprev, c->rank, c->dev, via);
		fake_info(c->dev, SUB_INIT | SUB_NET, "Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/%s", ch, c->rank,
		     c->dev, next, dnext, via);
	}
}

/* The lines one rank logs while its communicator comes up. */
static void log_rank(const struct ncclComm *c, int n)
{
	int socket = !strcmp(scenario(), "socket");

	fake_info(c->dev, SUB_INIT | SUB_NET, "Using network %s", socket ? "Socket" : "IB");
	if (!socket) {
		fake_info(c->dev, SUB_INIT, "DMA-BUF is available on GPU device %d", c->dev);
		for (int h = 0; h < 2; h++)
			fake_info(c->dev, SUB_NET, "NET/IB : GPU Direct RDMA Enabled for HCA %d 'mlx5_%d'", h, h);
	}
	fake_info(c->dev, SUB_INIT, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0", (void *)c,
	     c->rank, n, 1, n, c->rank);
	log_channels(c, n);
	fake_info(c->dev, SUB_INIT,
	     "ncclCommInitRank comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%llx - Init "
	     "COMPLETE",
	     (void *)c, c->rank, n, c->dev, c->dev, 0x18 + 0x11 * c->dev,
	     (unsigned long long)(uintptr_t)c->cl);
}

/* Called with the lock held when the last rank joined: checks the ranks'
 * devices (NCCL: "Duplicate GPU detected") and logs the setup. */
static void form_clique(struct clique *cl)
{
	for (int i = 0; i < cl->nranks; i++)
		for (int j = i + 1; j < cl->nranks; j++)
			if (cl->ranks[i]->dev == cl->ranks[j]->dev) {
				WARN(cl->ranks[j]->dev, "Duplicate GPU detected : rank %d and rank %d both on CUDA device %x",
				     i, j, cl->ranks[i]->dev);
				cl->error = ncclInvalidUsage;
				return;
			}
	log_net(cl->ranks[0]->dev);
	for (int i = 0; i < cl->nranks; i++)
		log_rank(cl->ranks[i], cl->nranks);
	cl->ready = 1;
}

/* The communicator's state as ncclCommGetAsyncError reports it. */
static ncclResult_t comm_state(struct ncclComm *c)
{
	if (c->async == ncclInProgress && c->cl) {
		if (c->cl->error)
			c->async = c->cl->error;
		else if (c->cl->ready && !hang_mode("init"))
			c->async = ncclSuccess;
	}
	return c->async;
}

static struct clique *find_clique(const ncclUniqueId *id, int nranks)
{
	for (struct clique *cl = cliques; cl; cl = cl->next)
		if (!memcmp(cl->id.internal, id->internal, 16))
			return cl;
	struct clique *cl = calloc(1, sizeof(*cl));
	cl->id = *id;
	cl->nranks = nranks;
	cl->ranks = calloc((size_t)nranks, sizeof(*cl->ranks));
	cl->next = cliques;
	cliques = cl;
	return cl;
}

static void group_add(struct ncclComm *c)
{
	for (int i = 0; i < group_ncomms; i++)
		if (group_comms[i] == c)
			return;
	if (group_ncomms < (int)(sizeof(group_comms) / sizeof(group_comms[0])))
		group_comms[group_ncomms++] = c;
}

static ncclResult_t group_finish(void);

static ncclResult_t check_id(const ncclUniqueId *id, int nranks, int rank)
{
	int pid;
	if (memcmp(id->internal, "FAKENCCL", 8) || nranks < 1 || rank < 0 || rank >= nranks) {
		WARN(current_device(), "Invalid rank requested : %d/%d", rank, nranks);
		return ncclInvalidArgument;
	}
	memcpy(&pid, id->internal + 8, sizeof(pid));
	if (pid != (int)getpid()) {
		WARN(current_device(), "fake NCCL: single process only (this unique id comes from process %d, this is %d)",
		     pid, (int)getpid());
		return ncclInvalidUsage;
	}
	return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank, int blocking)
{
	const char *fail = getenv("FAKE_NCCL_INIT_FAIL");
	if (fail && *fail) {
		/* as NCCL fails in its bootstrap: a WARN, then ncclSystemError */
		WARN(current_device(), "%s", fail);
		return ncclSystemError;
	}
	ncclResult_t r = check_id(&id, nranks, rank);
	if (r != ncclSuccess)
		return r;
	struct ncclComm *c = calloc(1, sizeof(*c));
	*c = (struct ncclComm){ .magic = COMM_MAGIC, .rank = rank, .dev = current_device(), .blocking = blocking,
				.async = ncclInProgress };
	pthread_mutex_lock(&lock);
	struct clique *cl = find_clique(&id, nranks);
	if (cl->nranks != nranks || cl->ranks[rank]) {
		pthread_mutex_unlock(&lock);
		WARN(c->dev, "fake NCCL: rank %d of %d joined twice, or with another size", rank, nranks);
		free(c);
		return ncclInvalidUsage;
	}
	c->cl = cl;
	cl->ranks[rank] = c;
	if (++cl->joined == cl->nranks && !hang_mode("init"))
		form_clique(cl);
	pthread_mutex_unlock(&lock);
	*out = c;
	group_add(c);
	group_has_init = 1;
	if (group_depth > 0)
		return ncclSuccess;
	return group_finish();
}

FAKE_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	return init_rank(comm, nranks, id, rank, 1);
}

FAKE_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
					     ncclConfig_v21400 *config)
{
	int blocking = 1;
	if (config) {
		if (config->size < sizeof(ncclConfig_v21400) || config->magic != NCCL_API_MAGIC) {
			WARN(current_device(), "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
			return ncclInvalidArgument;
		}
		if (config->version >= 21400 && config->blocking != NCCL_CONFIG_UNDEF_INT) {
			if (config->blocking != 0 && config->blocking != 1) {
				WARN(current_device(), "Invalid config blocking attribute value %d", config->blocking);
				return ncclInvalidArgument;
			}
			blocking = config->blocking;
		}
	}
	return init_rank(comm, nranks, id, rank, blocking);
}

FAKE_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *state)
{
	if (bad_comm(comm) || !state)
		return ncclInvalidArgument;
	pthread_mutex_lock(&lock);
	if (comm->split_pending == 1) {
		*state = ncclInProgress;
	} else if (comm->split_pending == 2) {
		*comm->split_out = comm->split_child;
		comm->split_pending = 0;
		*state = ncclSuccess;
	} else if (comm->settling) {
		comm->settling = 0;
		*state = ncclInProgress;
	} else {
		*state = comm_state(comm);
	}
	pthread_mutex_unlock(&lock);
	return ncclSuccess;
}

/* ---- groups and execution ---- */

static void remember_hung(struct ncclComm *c, CUstream s)
{
	for (int i = 0; i < c->nhung; i++)
		if (c->hung[i] == s)
			return;
	if (c->nhung < (int)(sizeof(c->hung) / sizeof(c->hung[0]))) {
		c->hung[c->nhung++] = s;
		stream_hang(s, 1);
	}
}

static void release_hung(struct ncclComm *c)
{
	for (int i = 0; i < c->nhung; i++)
		stream_hang(c->hung[i], 0);
	c->nhung = 0;
}

static struct op *pop(struct op **list)
{
	struct op *o = *list;
	if (o)
		*list = o->next;
	return o;
}

static void append(struct op **list, struct op *o)
{
	while (*list)
		list = &(*list)->next;
	*list = o;
}

/* acc (op)= in for one rank's contribution; floating-point averages are
 * pre-multiplied as NCCL does (fake_avg_prescale). */
static void accumulate(const struct op *o, void *acc, const void *in, bool first, int n)
{
	size_t bytes = o->count * fake_type_size(o->t);
	bool pre = o->op == ncclAvg && fake_avg_prescales(o->t);
	void *tmp = pre ? malloc(bytes ? bytes : 1) : NULL;
	if (pre) {
		memcpy(tmp, in, bytes);
		fake_avg_prescale(o->t, tmp, o->count, n);
		in = tmp;
	}
	if (first)
		memcpy(acc, in, bytes);
	else
		fake_reduce(o->t, pre ? ncclSum : o->op, acc, in, o->count);
	free(tmp);
}

/* Runs one matched collective: all inputs are read into scratch before any
 * output is written, so in-place calls come out right. */
static void exec_coll(struct op **h, int n)
{
	const struct op *o = h[0];
	size_t ts = fake_type_size(o->t), bytes = o->count * ts;
	size_t total = o->kind == K_ALL_GATHER || o->kind == K_REDUCE_SCATTER ? bytes * (size_t)n : bytes;
	char *acc = calloc(1, total ? total : 1);

	switch (o->kind) {
	case K_ALL_REDUCE:
	case K_REDUCE:
		for (int r = 0; r < n; r++)
			accumulate(o, acc, h[r]->send, r == 0, n);
		if (o->op == ncclAvg && !fake_avg_prescales(o->t))
			fake_avg_finish(o->t, acc, o->count, n);
		for (int r = 0; r < n; r++)
			if (o->kind == K_ALL_REDUCE || r == o->root)
				memcpy(h[r]->recv, acc, bytes);
		break;
	case K_BROADCAST:
		memcpy(acc, h[o->root]->send, bytes);
		for (int r = 0; r < n; r++)
			memcpy(h[r]->recv, acc, bytes);
		break;
	case K_ALL_GATHER:
		for (int r = 0; r < n; r++)
			memcpy(acc + (size_t)r * bytes, h[r]->send, bytes);
		for (int r = 0; r < n; r++)
			memcpy(h[r]->recv, acc, total);
		break;
	case K_REDUCE_SCATTER:
		for (int r = 0; r < n; r++) {
			char *out = acc + (size_t)r * bytes;
			for (int q = 0; q < n; q++)
				accumulate(o, out, (const char *)h[q]->send + (size_t)r * bytes, q == 0, n);
			if (o->op == ncclAvg && !fake_avg_prescales(o->t))
				fake_avg_finish(o->t, out, o->count, n);
		}
		for (int r = 0; r < n; r++)
			memcpy(h[r]->recv, acc + (size_t)r * bytes, bytes);
		break;
	default:
		break;
	}
	free(acc);
}

static int same_coll(const struct op *a, const struct op *b)
{
	return a->kind == b->kind && a->count == b->count && a->t == b->t && a->op == b->op && a->root == b->root;
}

/* Matches the heads of every rank's collective queue, in issue order. */
static void run_colls(struct clique *cl)
{
	int n = cl->nranks;
	struct op **h = calloc((size_t)n, sizeof(*h));

	for (;;) {
		int all = 1;
		for (int r = 0; r < n; r++)
			all &= cl->ranks[r] && cl->ranks[r]->colls != NULL;
		if (!all)
			break;
		for (int r = 0; r < n; r++)
			h[r] = pop(&cl->ranks[r]->colls);
		int ok = 1;
		for (int r = 1; r < n; r++)
			ok &= same_coll(h[0], h[r]);
		if (!ok || h[0]->root < -1 || h[0]->root >= n) {
			WARN(h[0]->comm->dev, "fake NCCL: ranks called different collectives (or a bad root %d)",
			     h[0]->root);
			for (int r = 0; r < n; r++) {
				cl->ranks[r]->async = ncclInvalidUsage;
				remember_hung(cl->ranks[r], h[r]->stream);
			}
		} else if (hang_mode("coll")) {
			for (int r = 0; r < n; r++)
				remember_hung(cl->ranks[r], h[r]->stream);
		} else {
			exec_coll(h, n);
		}
		for (int r = 0; r < n; r++)
			free(h[r]);
	}
	free(h);
}

/* Takes from to's queue the first receive posted for a send from src. */
static struct op *take_recv(struct ncclComm *to, int src)
{
	for (struct op **p = &to->p2p; *p; p = &(*p)->next)
		if ((*p)->kind == K_RECV && (*p)->peer == src)
			return pop(p);
	return NULL;
}

struct match {
	struct op *send, *recv;
	void *copy;
};

/* Pairs every send with its receive, copies all payloads, then delivers. */
static void run_p2p(struct clique *cl)
{
	int n = cl->nranks, nm = 0, cap = 16;
	struct match *m = calloc((size_t)cap, sizeof(*m));

	for (int r = 0; r < n; r++) {
		struct ncclComm *c = cl->ranks[r];
		for (struct op **p = c ? &c->p2p : NULL; p && *p;) {
			struct op *s = *p;
			struct op *rv = NULL;
			if (s->kind == K_SEND && s->peer >= 0 && s->peer < n && cl->ranks[s->peer])
				rv = take_recv(cl->ranks[s->peer], r);
			if (!rv) {
				p = &(*p)->next;
				continue;
			}
			*p = s->next;
			if (nm == cap)
				m = realloc(m, sizeof(*m) * (size_t)(cap *= 2));
			m[nm++] = (struct match){ .send = s, .recv = rv };
		}
	}
	for (int i = 0; i < nm; i++) {
		size_t bytes = m[i].send->count * fake_type_size(m[i].send->t);
		m[i].copy = malloc(bytes ? bytes : 1);
		memcpy(m[i].copy, m[i].send->send, bytes);
	}
	for (int i = 0; i < nm; i++) {
		if (hang_mode("coll")) {
			remember_hung(m[i].send->comm, m[i].send->stream);
			remember_hung(m[i].recv->comm, m[i].recv->stream);
		} else {
			size_t sb = m[i].send->count * fake_type_size(m[i].send->t);
			size_t rb = m[i].recv->count * fake_type_size(m[i].recv->t);
			if (sb != rb)
				WARN(m[i].recv->comm->dev, "fake NCCL: send of %zu bytes matched a receive of %zu", sb, rb);
			memcpy(m[i].recv->recv, m[i].copy, sb < rb ? sb : rb);
		}
		free(m[i].copy);
		free(m[i].send);
		free(m[i].recv);
	}
	free(m);
}

/* What is left queued waits for a peer forever: its stream hangs. */
static void settle_streams(struct clique *cl)
{
	for (int r = 0; r < cl->nranks; r++) {
		struct ncclComm *c = cl->ranks[r];
		if (!c)
			continue;
		if (!c->colls && !c->p2p && !hang_mode("coll") && c->async == ncclSuccess)
			release_hung(c);
		for (struct op *o = c->colls; o; o = o->next)
			remember_hung(c, o->stream);
		for (struct op *o = c->p2p; o; o = o->next)
			remember_hung(c, o->stream);
	}
}

/* The outermost ncclGroupEnd (or an ungrouped call): finishes
 * communicator setup, runs what matched, reports like NCCL would. */
static ncclResult_t group_finish(void)
{
	ncclResult_t ret = ncclSuccess;
	int nonblocking = 0, stuck_blocking = 0, had_init = group_has_init;

	if (group_captured && (ret = fake_capture_group(group_captured)) != ncclSuccess)
		WARN(current_device(), "Cuda failure 'operation not permitted when stream is capturing'");
	group_captured = NULL;
	group_plain = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < group_ncomms; i++) {
		struct ncclComm *c = group_comms[i];
		ncclResult_t st = comm_state(c);
		if (st != ncclSuccess && st != ncclInProgress)
			ret = st;
		if (st == ncclInProgress && c->blocking)
			stuck_blocking = 1;
		if (!c->blocking && (had_init || !c->connected)) {
			nonblocking = 1;
			if (!had_init) {
				c->connected = 1;
				c->settling = 1;
			}
		}
		if (c->cl->ready) {
			run_colls(c->cl);
			run_p2p(c->cl);
			settle_streams(c->cl);
		}
	}
	group_ncomms = 0;
	group_has_init = 0;
	pthread_mutex_unlock(&lock);
	if (stuck_blocking && hang_mode("init")) {
		for (;;)
			pause(); /* what a blocking init whose peer never comes does */
	}
	if (stuck_blocking && ret == ncclSuccess) {
		WARN(current_device(), "fake NCCL: a blocking init of several ranks in one process must be grouped "
				       "with all of them (it would deadlock)");
		return ncclInvalidUsage;
	}
	return ret != ncclSuccess ? ret : nonblocking ? ncclInProgress : ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupStart(void)
{
	group_depth++;
	return ncclSuccess;
}

FAKE_API ncclResult_t ncclGroupEnd(void)
{
	if (group_depth == 0) {
		WARN(current_device(), "ncclGroupEnd: not in a group call.");
		return ncclInvalidUsage;
	}
	if (--group_depth > 0)
		return ncclSuccess;
	return group_finish();
}

static ncclResult_t enqueue(struct op o)
{
	struct ncclComm *c = o.comm;

	if (bad_comm(c))
		return ncclInvalidArgument;
	if (fake_type_size(o.t) == 0 || (unsigned)o.op > ncclAvg) {
		WARN(c->dev, "Invalid data type %d or reduction %d", (int)o.t, (int)o.op);
		return ncclInvalidArgument;
	}
	if (stream_device(o.stream) != c->dev) {
		WARN(c->dev, "fake NCCL: rank %d (device %d) was given a stream of device %d", c->rank, c->dev,
		     stream_device(o.stream));
		return ncclInvalidUsage;
	}
	int captured = fake_stream_capturing(o.stream);
	if (captured < 0) {
		WARN(c->dev, "Cuda failure 'operation failed due to a previous error during capture'");
		return ncclUnhandledCudaError;
	}
	if (captured ? group_plain : group_captured != NULL) {
		WARN(c->dev, "fake NCCL: a group mixes capturing and non-capturing streams");
		return ncclInvalidUsage;
	}
	pthread_mutex_lock(&lock);
	ncclResult_t st = comm_state(c);
	if (st == ncclSuccess) {
		struct op *p = malloc(sizeof(*p));
		*p = o;
		p->next = NULL;
		append(captured ? &group_captured : o.kind == K_SEND || o.kind == K_RECV ? &c->p2p : &c->colls, p);
		group_plain |= !captured;
	}
	pthread_mutex_unlock(&lock);
	if (st != ncclSuccess) {
		WARN(c->dev, "fake NCCL: communicator of rank %d is not ready (%d)", c->rank, (int)st);
		return ncclInvalidUsage;
	}
	group_add(c);
	return group_depth > 0 ? ncclSuccess : group_finish();
}

FAKE_API ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
				    ncclComm_t comm, CUstream stream)
{
	return enqueue((struct op){ .kind = K_ALL_REDUCE, .comm = comm, .send = send, .recv = recv, .count = count,
				    .t = t, .op = op, .root = -1, .stream = stream });
}

FAKE_API ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
				 int root, ncclComm_t comm, CUstream stream)
{
	return enqueue((struct op){ .kind = K_REDUCE, .comm = comm, .send = send, .recv = recv, .count = count,
				    .t = t, .op = op, .root = root, .stream = stream });
}

FAKE_API ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t t, int root,
				    ncclComm_t comm, CUstream stream)
{
	return enqueue((struct op){ .kind = K_BROADCAST, .comm = comm, .send = send, .recv = recv, .count = count,
				    .t = t, .root = root, .stream = stream });
}

FAKE_API ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t t, ncclComm_t comm,
				    CUstream stream)
{
	return enqueue((struct op){ .kind = K_ALL_GATHER, .comm = comm, .send = send, .recv = recv, .count = count,
				    .t = t, .root = -1, .stream = stream });
}

FAKE_API ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t t,
					ncclRedOp_t op, ncclComm_t comm, CUstream stream)
{
	return enqueue((struct op){ .kind = K_REDUCE_SCATTER, .comm = comm, .send = send, .recv = recv,
				    .count = count, .t = t, .op = op, .root = -1, .stream = stream });
}

FAKE_API ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
			       CUstream stream)
{
	return enqueue((struct op){ .kind = K_SEND, .comm = comm, .send = send, .count = count, .t = t, .root = -1,
				    .peer = peer, .stream = stream });
}

FAKE_API ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
			       CUstream stream)
{
	return enqueue((struct op){ .kind = K_RECV, .comm = comm, .recv = recv, .count = count, .t = t, .root = -1,
				    .peer = peer, .stream = stream });
}

/* ---- graph replay (fake_nccl_graph.c records) ---- */

static int comm_alive(const struct ncclComm *c)
{
	for (struct clique *cl = cliques; cl; cl = cl->next)
		for (int r = 0; r < cl->nranks; r++)
			if (cl->ranks[r] == c)
				return 1;
	return 0;
}

void fake_group_replay(const struct op *list)
{
	struct clique *run[256];
	int nrun = 0;

	pthread_mutex_lock(&lock);
	for (const struct op *o = list; o; o = o->next) {
		struct ncclComm *c = o->comm;
		if (!comm_alive(c)) {
			WARN(current_device(), "fake NCCL: a CUDA graph replays a call of a destroyed communicator; skipped");
			continue;
		}
		struct op *p = malloc(sizeof(*p));
		*p = *o;
		p->next = NULL;
		append(o->kind == K_SEND || o->kind == K_RECV ? &c->p2p : &c->colls, p);
		int seen = 0;
		for (int i = 0; i < nrun; i++)
			seen |= run[i] == c->cl;
		if (!seen && nrun < (int)(sizeof(run) / sizeof(run[0])))
			run[nrun++] = c->cl;
	}
	for (int i = 0; i < nrun; i++)
		if (run[i]->ready) {
			run_colls(run[i]);
			run_p2p(run[i]);
			settle_streams(run[i]);
		}
	pthread_mutex_unlock(&lock);
}

void fake_group_hold(const struct op *list, CUstream s)
{
	pthread_mutex_lock(&lock);
	for (const struct op *o = list; o; o = o->next)
		if (o->stream == s && comm_alive(o->comm))
			remember_hung(o->comm, s);
	pthread_mutex_unlock(&lock);
}

/* Abort and destroy both drop the rank at once: nothing runs on a GPU
 * here that would have to drain first. */
int fake_comm_invalid(ncclComm_t c)
{
	return bad_comm(c);
}

static ncclResult_t drop(ncclComm_t c)
{
	if (bad_comm(c))
		return ncclInvalidArgument;
	int left = fake_regs_left(c);
	if (left)
		WARN(c->dev, "communicator of rank %d destroyed with %d buffer registrations left", c->rank, left);
	pthread_mutex_lock(&lock);
	release_hung(c);
	for (struct op *o; (o = pop(&c->colls));)
		free(o);
	for (struct op *o; (o = pop(&c->p2p));)
		free(o);
	struct clique *cl = c->cl;
	if (cl)
		cl->ranks[c->rank] = NULL;
	if (cl && --cl->joined == 0) {
		for (struct clique **p = &cliques; *p; p = &(*p)->next)
			if (*p == cl) {
				*p = cl->next;
				break;
			}
		free(cl->ranks);
		free(cl);
	}
	for (int i = 0; i < group_ncomms; i++)
		if (group_comms[i] == c)
			group_comms[i] = group_comms[--group_ncomms];
	c->magic = 0;
	free(c);
	pthread_mutex_unlock(&lock);
	return ncclSuccess;
}

/* ---- ncclCommSplit (2.18+), ncclCommCount, ncclCommUserRank ----
 * A split completes when every rank of the parent has called it: each
 * color's ranks, ordered by (key, parent rank), form a new clique, as
 * NCCL's split does (init.cc ncclCommSplit); until then the children are
 * in progress. NCCL_ALGO at that moment is logged and kept (the tests read
 * it through fake_nccl_split_algo). */

static char last_split_algo[32];

static int split_order(const void *a, const void *b)
{
	const struct split_call *x = a, *y = b;
	return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x < y ? -1 : x > y);
}

/* With the lock held, when the last rank of parent called split. */
static void split_finish(struct clique *parent)
{
	int n = parent->nranks;
	struct split_call *v = parent->splits;
	const char *algo = getenv("NCCL_ALGO");
	for (int i = 0; i < n; i++) {
		if (!v[i].child || v[i].child->cl)
			continue;
		struct split_call *m = calloc((size_t)n, sizeof(*m));
		int k = 0;
		for (int j = i; j < n; j++)
			if (v[j].child && !v[j].child->cl && v[j].color == v[i].color)
				m[k++] = v[j];
		qsort(m, (size_t)k, sizeof(*m), split_order);
		struct clique *cl = calloc(1, sizeof(*cl));
		int pid = (int)getpid(), id = ++id_counter;
		memcpy(cl->id.internal, "FAKENCCL", 8);
		memcpy(cl->id.internal + 8, &pid, sizeof(pid));
		memcpy(cl->id.internal + 12, &id, sizeof(id));
		cl->nranks = k;
		cl->ranks = calloc((size_t)k, sizeof(*cl->ranks));
		snprintf(cl->algo, sizeof(cl->algo), "%s", algo ? algo : "");
		snprintf(last_split_algo, sizeof(last_split_algo), "%s", cl->algo);
		for (int r = 0; r < k; r++) {
			m[r].child->rank = r;
			m[r].child->cl = cl;
			cl->ranks[r] = m[r].child;
		}
		cl->joined = k;
		cl->next = cliques;
		cliques = cl;
		if (algo)
			fake_info(cl->ranks[0]->dev, SUB_ENV, "NCCL_ALGO set by environment to %s", algo);
		form_clique(cl);
		free(m);
	}
	for (int i = 0; i < n; i++)
		if (parent->ranks[i] && parent->ranks[i]->split_pending)
			parent->ranks[i]->split_pending = 2; /* complete: *split_out is written when polled */
	free(parent->splits);
	parent->splits = NULL;
	parent->nsplits = 0;
}

FAKE_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_v21400 *config)
{
	if (bad_comm(comm) || !newcomm || color < NCCL_SPLIT_NOCOLOR || config)
		return ncclInvalidArgument; /* the fake takes the parent's configuration only */
	struct ncclComm *c = NULL;
	if (color != NCCL_SPLIT_NOCOLOR) {
		c = calloc(1, sizeof(*c));
		*c = (struct ncclComm){ .magic = COMM_MAGIC, .rank = -1, .dev = comm->dev, .blocking = comm->blocking,
					.async = ncclInProgress };
	}
	pthread_mutex_lock(&lock);
	if (comm->split_pending) {
		pthread_mutex_unlock(&lock);
		free(c);
		WARN(comm->dev, "Attempt to use communicator before the previous operation returned ncclSuccess");
		return ncclInvalidUsage;
	}
	struct clique *p = comm->cl;
	if (!p->splits)
		p->splits = calloc((size_t)p->nranks, sizeof(*p->splits));
	p->splits[comm->rank] = (struct split_call){ .color = color, .key = key, .child = c };
	if (!comm->blocking)
		comm->split_pending = 1, comm->split_out = newcomm, comm->split_child = c;
	if (++p->nsplits == p->nranks)
		split_finish(p);
	pthread_mutex_unlock(&lock);
	if (!comm->blocking) {
		*newcomm = NULL; /* NCCL_COMM_NULL until the split completes */
		return ncclInProgress;
	}
	*newcomm = c;
	return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	if (bad_comm(comm) || !count || !comm->cl)
		return ncclInvalidArgument;
	*count = comm->cl->nranks;
	return ncclSuccess;
}

FAKE_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (bad_comm(comm) || !rank || !comm->cl)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

/* Tests: NCCL_ALGO as it was when the last split completed ("" unset). */
FAKE_API const char *fake_nccl_split_algo(void)
{
	return last_split_algo;
}

FAKE_API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	return drop(comm);
}

FAKE_API ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	return drop(comm);
}
