/* The NCCL backend's split() for `cluster nccl`: ncclCommSplit (NCCL
 * 2.18+, nccl.h and NCCL's documentation, "ncclCommSplit") on every
 * local rank's communicator, in one group as NCCL requires when a thread
 * drives several ranks. The child keeps the parent's libraries, contexts,
 * streams and barrier words and owns only its communicators.
 *
 * how->ring forces the ring algorithm in the child: NCCL reads NCCL_ALGO
 * when it tunes a new communicator (src/graph/tuning.cc,
 * ncclTopoTuneModel), so it is set while the child is made and put back
 * once every rank's setup has finished (setenv while NCCL's own threads
 * run: glibc does not order it with their getenv calls, so a thread that
 * reads NCCL_ALGO at that moment may see either value; NCCL reads its
 * environment at communicator setup, which is what runs here). Two nodes'
 * tree all_reduce can
 * report a bus bandwidth above what the link carries (NCCL's tree
 * pipelines the two directions), which would hide a slow link. */
#define _GNU_SOURCE
#include "backend_nccl_int.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* NCCL_ALGO=Ring while the child is made; the old value back after. */
struct algo_env {
	bool set;
	char *old;
};

static void ring_begin(struct algo_env *a, bool ring)
{
	*a = (struct algo_env){ .set = ring };
	if (!ring)
		return;
	const char *v = getenv("NCCL_ALGO");
	a->old = v ? xstrdup(v) : NULL;
	setenv("NCCL_ALGO", "Ring", 1);
}

static void ring_end(struct algo_env *a)
{
	if (!a->set)
		return;
	if (a->old)
		setenv("NCCL_ALGO", a->old, 1);
	else
		unsetenv("NCCL_ALGO");
	free(a->old);
	a->set = false;
}

/* The child's state: the parent's, with its own communicators. */
static struct nccl_backend *child_of(struct nccl_backend *n)
{
	struct nccl_backend *c = xcalloc(1, sizeof(*c));
	*c = *n;
	c->parent = n;
	c->base.mem_init = 0;
	c->base.error[0] = 0;
	c->r = xcalloc((size_t)n->n, sizeof(*c->r));
	for (int l = 0; l < n->n; l++)
		c->r[l] = (struct nccl_rank){ .rank = -1, .dev = n->r[l].dev, .ctx = n->r[l].ctx,
					      .stream = n->r[l].stream, .barrier = n->r[l].barrier,
					      .free_before_init = n->r[l].free_before_init };
	return c;
}

/* Every local rank's ncclCommSplit, in one group. */
static int split_all(struct nccl_backend *n, struct nccl_backend *c, int color, int key)
{
	ncclResult_t r = n->nccl.group_start();
	if (r != ncclSuccess)
		return nccl_fail(n, NULL, "ncclGroupStart (split)", r);
	for (int l = 0; l < n->n; l++) {
		if (nccl_set_ctx(n, l) < 0) {
			n->nccl.group_end();
			return -EIO;
		}
		/* the local ranks keep their order within the process */
		r = n->nccl.comm_split(n->r[l].comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key * n->n + l,
				       &c->r[l].comm, NULL);
		if (r != ncclSuccess && r != ncclInProgress) {
			nccl_fail(n, n->r[l].comm, "ncclCommSplit", r);
			n->nccl.group_end();
			return -EIO;
		}
	}
	r = n->nccl.group_end();
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(n, NULL, "ncclGroupEnd (split)", r);
	return 0;
}

/* The child's ranks and size as NCCL numbered them. */
static int child_ranks(struct nccl_backend *c)
{
	int count = 0;
	for (int l = 0; l < c->n; l++) {
		ncclResult_t r = c->nccl.comm_user_rank(c->r[l].comm, &c->r[l].rank);
		if (r == ncclSuccess)
			r = c->nccl.comm_count(c->r[l].comm, &count);
		if (r != ncclSuccess)
			return nccl_fail(c, c->r[l].comm, "ncclCommUserRank/ncclCommCount", r);
	}
	c->base.env.nranks = count;
	c->base.env.nprocs = count / c->n;
	c->base.env.proc_rank = c->r[0].rank / c->n;
	return 0;
}

int nccl_split(struct backend *b, const struct backend_split *how, double deadline, struct backend **child)
{
	struct nccl_backend *n = nb(b);

	*child = NULL;
	if (!n->nccl.comm_split || !n->nccl.comm_count || !n->nccl.comm_user_rank) {
		backend_set_error(b, "%s has no ncclCommSplit: splitting a job's ranks needs NCCL 2.18 or newer",
				  n->nccl.version[0] ? n->nccl.version : "this NCCL");
		return -ENOTSUP;
	}
	if (nccl_capture_busy(n, "split") < 0)
		return -EBUSY;
	struct nccl_backend *c = child_of(n);
	struct algo_env a;
	ring_begin(&a, how->ring && how->color >= 0);
	/* with the parent's non-blocking configuration (which the child
	 * inherits) the split goes on in NCCL's threads: the parent is in
	 * progress until it is done, and only then are the new communicators
	 * written (init.cc, ncclCommSplit) */
	int r = split_all(n, c, how->color, how->key);
	if (r == 0 && (r = nccl_poll_init(n, deadline)) < 0) {
		_cleanup_free_ char *why = xstrdup(b->error);
		backend_set_error(b, "ncclCommSplit did not complete: %s", why);
	}
	for (int l = 0; r == 0 && how->color >= 0 && l < c->n; l++)
		if (!c->r[l].comm) {
			backend_set_error(b, "ncclCommSplit completed without a communicator for local rank %d", l);
			r = -EIO;
		}
	if (r == 0 && how->color >= 0 && (r = nccl_poll_init(c, deadline)) < 0)
		backend_set_error(b, "%s", c->base.error);
	ring_end(&a);
	if (r < 0)
		nccl_abort_comms(c);
	else if (how->color >= 0 && (r = child_ranks(c)) < 0)
		backend_set_error(b, "%s", c->base.error);
	if (r < 0 || how->color < 0) {
		nccl_split_fini(c);
		return r;
	}
	*child = &c->base;
	return 0;
}

void nccl_split_fini(struct nccl_backend *c)
{
	for (int l = 0; l < c->n; l++)
		if (c->r[l].comm) {
			c->cu.ctx_set_current(c->r[l].ctx);
			c->nccl.comm_destroy(c->r[l].comm);
		}
	free(c->r);
	free(c);
}
