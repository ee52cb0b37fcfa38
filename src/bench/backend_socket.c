/* The socket backend: host memory, every collective through process 0
 * over the job's own control connections (sync.h; src/job/).
 *
 * It exists to run the whole harness — sweep, validation, output, the
 * launchers, deadlines and lost-rank reports — on any machine, without MPI
 * or GPUs. Each collective gathers what it needs at process 0, which
 * computes the result with host_reduce() and sends every process its part,
 * so its bandwidth measures loopback TCP through one hub and says nothing
 * about a fabric: use --backend mpi or nccl for that. One rank per
 * process. Waits are bounded by the harness's phase deadlines (the job
 * watchdog), not here. Its split() makes groups whose all_reduce moves
 * over direct TCP connections between the members instead
 * (backend_socket_group.c). */
#include "backend.h"
#include "backend_socket_group.h"
#include "sync.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct socket_backend {
	struct backend b;
	const struct bench_sync *sync;
	int rank, n;
	double t0;
};

static struct socket_backend *sb_of(struct backend *b)
{
	return (struct socket_backend *)b;
}

static int sock_init(struct backend *b, struct backend_env *env, double deadline)
{
	struct socket_backend *s = sb_of(b);
	(void)deadline;
	if (!env->sync || env->local != 1) {
		backend_set_error(b, "the socket backend runs one rank per process (-g 1)");
		return -EINVAL;
	}
	s->sync = env->sync;
	s->rank = env->proc_rank;
	s->n = env->nranks;
	b->env = *env;
	return 0;
}

static int sock_alloc(struct backend *b, int l, size_t bytes, void **ret)
{
	(void)l;
	void *p = NULL;
	if (posix_memalign(&p, 4096, bytes ? bytes : 1)) {
		backend_set_error(b, "cannot allocate %zu bytes of host memory", bytes);
		return -ENOMEM;
	}
	memset(p, 0, bytes ? bytes : 1); /* the warm-up sends it before any data is written */
	*ret = p;
	return 0;
}

static void sock_free(struct backend *b, int l, void *p)
{
	(void)b;
	(void)l;
	free(p);
}

static int sock_copy(struct backend *b, int l, void *dst, const void *src, size_t bytes)
{
	(void)b;
	(void)l;
	memmove(dst, src, bytes);
	return 0;
}

/* A job error becomes the backend's. */
static int fail(struct backend *b, int r, char *err)
{
	backend_set_error(b, "%s", err ? err : strerror(-r));
	free(err);
	return r;
}

/* Process 0 reduces n blocks of `count` elements at all into all[0..count). */
static void reduce_blocks(void *all, int n, size_t count, enum dtype t, enum redop op)
{
	size_t bytes = count * dtype_size(t);
	for (int p = 1; p < n; p++)
		host_reduce(t, op, all, (char *)all + (size_t)p * bytes, count);
	if (op == OP_AVG)
		host_avg_finish(t, all, count, n);
}

/* all_reduce, reduce, broadcast: gather whole buffers, process 0 computes
 * one result, everyone gets it; reduce's non-root ranks keep theirs. */
static int run_whole(struct socket_backend *s, enum coll c, const void *send, void *recv, size_t count, enum dtype t,
		     enum redop op, int root)
{
	size_t bytes = count * dtype_size(t);
	_cleanup_free_ char *all = xcalloc((size_t)(s->rank == 0 ? s->n : 1), bytes ? bytes : 1);
	char *err = NULL;
	int r = s->sync->ops->gather(s->sync->ctx, send, bytes, all, 0, &err);
	if (r == 0 && s->rank == 0) {
		if (c == COLL_BROADCAST)
			memmove(all, all + (size_t)root * bytes, bytes);
		else
			reduce_blocks(all, s->n, count, t, op);
	}
	if (r == 0)
		r = s->sync->ops->bcast(s->sync->ctx, all, bytes, 0, &err);
	if (r < 0)
		return fail(&s->b, r, err);
	if (c != COLL_REDUCE || s->rank == root)
		memcpy(recv, all, bytes);
	return 0;
}

/* all_gather, reduce_scatter, alltoall, sendrecv: gather every send
 * buffer, build each process's receive buffer at process 0, scatter. */
static int run_parts(struct socket_backend *s, enum coll c, const void *send, void *recv, size_t count, enum dtype t,
		     enum redop op)
{
	size_t ts = dtype_size(t), n = (size_t)s->n, b = count * ts;
	size_t sbytes = c == COLL_REDUCE_SCATTER || c == COLL_ALLTOALL ? b * n : b;
	size_t rbytes = c == COLL_ALL_GATHER || c == COLL_ALLTOALL ? b * n : b;
	bool root = s->rank == 0;
	_cleanup_free_ char *all = xcalloc(root ? n : 1, sbytes ? sbytes : 1);
	_cleanup_free_ char *out = xcalloc(root ? n : 1, rbytes ? rbytes : 1);
	char *err = NULL;
	int r = s->sync->ops->gather(s->sync->ctx, send, sbytes, all, 0, &err);

	if (r == 0 && root) {
		for (size_t p = 0; p < n; p++) {
			char *o = out + p * rbytes;
			if (c == COLL_ALL_GATHER) {
				for (size_t q = 0; q < n; q++)
					memcpy(o + q * b, all + q * sbytes, b);
			} else if (c == COLL_ALLTOALL) {
				for (size_t q = 0; q < n; q++)
					memcpy(o + q * b, all + q * sbytes + p * b, b);
			} else if (c == COLL_SENDRECV) {
				memcpy(o, all + ((p + n - 1) % n) * sbytes, b);
			} else { /* reduce_scatter: block p of every process, reduced */
				memcpy(o, all + p * b, b);
				for (size_t q = 1; q < n; q++)
					host_reduce(t, op, o, all + q * sbytes + p * b, count);
				if (op == OP_AVG)
					host_avg_finish(t, o, count, (int)n);
			}
		}
	}
	if (r == 0)
		r = s->sync->ops->scatter(s->sync->ctx, out, recv, rbytes, 0, &err);
	return r < 0 ? fail(&s->b, r, err) : 0;
}

static int sock_run(struct backend *b, enum coll c, void *const *send, void *const *recv, size_t count, enum dtype t,
		    enum redop op, int root)
{
	struct socket_backend *s = sb_of(b);
	if (c == COLL_ALL_REDUCE || c == COLL_REDUCE || c == COLL_BROADCAST)
		return run_whole(s, c, send[0], recv[0], count, t, op, root);
	return run_parts(s, c, send[0], recv[0], count, t, op);
}

static int sock_wait(struct backend *b, double deadline)
{
	(void)b;
	(void)deadline;
	return 0; /* every call above completes before it returns */
}

static int sock_timer_begin(struct backend *b)
{
	sb_of(b)->t0 = clock_now();
	return 0;
}

static int sock_timer_end(struct backend *b, double deadline, double *seconds)
{
	(void)deadline;
	*seconds = clock_now() - sb_of(b)->t0;
	return 0;
}

static void sock_device(struct backend *b, int l, struct backend_device *out)
{
	(void)b;
	(void)l;
	*out = (struct backend_device){ .ordinal = -1, .name = "host memory (socket backend)" };
}

static const char *sock_version(struct backend *b)
{
	(void)b;
	return "gpuready TCP via rank 0";
}

static void sock_abort(struct backend *b)
{
	(void)b;
}

static void sock_fini(struct backend *b)
{
	free(b);
}

static const struct backend_ops socket_ops = {
	.name = "socket", .init = sock_init, .alloc = sock_alloc, .free = sock_free, .copy_in = sock_copy,
	.copy_out = sock_copy, .run = sock_run, .wait = sock_wait, .timer_begin = sock_timer_begin,
	.timer_end = sock_timer_end, .device = sock_device, .version = sock_version, .abort = sock_abort,
	.fini = sock_fini, .split = backend_socket_split,
};

int backend_socket_create(struct backend **ret, char **err)
{
	struct socket_backend *s = calloc(1, sizeof(*s));
	if (!s) {
		*err = xstrdup("out of memory");
		return -ENOMEM;
	}
	s->b.ops = &socket_ops;
	*ret = &s->b;
	return 0;
}
