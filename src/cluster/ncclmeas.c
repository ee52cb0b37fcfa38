/* One stage of `gpuready cluster nccl` on this process (ncclmeas.h). */
#include "cluster/ncclmeas.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (4u << 20)      /* bytes filled or checked per copy */
#define CHECK_BYTES 65536u    /* checked at the start, the middle and the end */
#define BARRIER_SLACK_S 30.0  /* the barrier before the timed loops, after the setup deadline */

struct bufs {
	void *send[64], *recv[64];
	int n;
};

static void failf(struct ncs_part *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(struct ncs_part *p, const char *fmt, ...)
{
	if (p->failed)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->failed = 1;
}

/* Every local rank's buffers, the send buffers all 1.0f. */
static int prepare(struct backend *c, uint64_t bytes, struct bufs *B, struct ncs_part *p)
{
	size_t n = CHUNK / sizeof(float);
	_cleanup_free_ float *ones = xcalloc(n, sizeof(float));
	for (size_t i = 0; i < n; i++)
		ones[i] = 1.0f;
	B->n = c->env.local;
	for (int l = 0; l < B->n; l++) {
		if (c->ops->alloc(c, l, bytes, &B->send[l]) < 0 || c->ops->alloc(c, l, bytes, &B->recv[l]) < 0) {
			failf(p, "allocating 2 x %llu bytes: %s", (unsigned long long)bytes, c->error);
			return -ENOMEM;
		}
		for (uint64_t off = 0; off < bytes; off += CHUNK) {
			size_t len = bytes - off < CHUNK ? (size_t)(bytes - off) : CHUNK;
			if (c->ops->copy_in(c, l, (char *)B->send[l] + off, ones, len) < 0) {
				failf(p, "filling the send buffer: %s", c->error);
				return -EIO;
			}
		}
	}
	return 0;
}

static void release(struct backend *c, struct bufs *B)
{
	for (int l = 0; l < B->n; l++) {
		if (B->send[l])
			c->ops->free(c, l, B->send[l]);
		if (B->recv[l])
			c->ops->free(c, l, B->recv[l]);
	}
}

/* One all_reduce of every local rank (not waited for). */
static int launch(struct backend *c, const struct bufs *B, uint64_t bytes)
{
	return c->ops->run(c, COLL_ALL_REDUCE, B->send, B->recv, bytes / sizeof(float), DT_FLOAT, OP_SUM, -1);
}

/* Elements of the result that are not the group's rank count, at the
 * start, the middle and the end of every local rank's buffer. */
static int64_t check(struct backend *c, const struct bufs *B, uint64_t bytes, struct ncs_part *p)
{
	uint64_t len = bytes < CHECK_BYTES ? bytes : CHECK_BYTES, at[3] = { 0, (bytes / 2) & ~(uint64_t)3, bytes - len };
	_cleanup_free_ float *got = xcalloc(len / sizeof(float) + 1, sizeof(float));
	int64_t wrong = 0;
	float want = (float)c->env.nranks;
	for (int l = 0; l < B->n; l++)
		for (int k = 0; k < 3; k++) {
			uint64_t off = at[k] + len > bytes ? bytes - len : at[k];
			if (c->ops->copy_out(c, l, got, (char *)B->recv[l] + off, len) < 0) {
				failf(p, "reading the result: %s", c->error);
				return 0;
			}
			for (size_t i = 0; i < len / sizeof(float); i++)
				wrong += got[i] != want;
		}
	return wrong;
}

/* Warm-up on the group by the setup deadline, then every process meets
 * (within BARRIER_SLACK_S of it: a member that gave up at the setup
 * deadline still arrives in time), then the timed loop by its own. */
static void measure(const struct ncs_meas *M, struct backend *c, double setup, struct ncs_part *p)
{
	struct bufs B = { 0 };
	_cleanup_free_ char *err = NULL;
	int r = c ? prepare(c, M->bytes, &B, p) : 0;
	for (int i = 0; c && r == 0 && i < M->warmup; i++)
		if ((r = launch(c, &B, M->bytes)) < 0 || (r = c->ops->wait(c, setup)) < 0)
			failf(p, "warm-up all_reduce: %s", c->error);
	/* every group starts its timed loop together: they share the fabric */
	if ((r = job_barrier(M->ss->cl, setup + BARRIER_SLACK_S, &err)) < 0)
		session_fail(M->ss, err, r);
	double t = 0, loop = clock_now() + M->timeout;
	if (c && !p->failed) {
		r = c->ops->timer_begin(c);
		for (int i = 0; r == 0 && i < M->iters; i++)
			r = launch(c, &B, M->bytes);
		if (r == 0)
			r = c->ops->timer_end(c, loop, &t);
		if (r < 0)
			failf(p, "timed all_reduce (%d of %llu bytes within %.0f s): %s", M->iters,
			      (unsigned long long)M->bytes, M->timeout, c->error);
		else
			p->seconds = t / M->iters;
		if (r == 0)
			p->wrong = (double)check(c, &B, M->bytes, p);
	}
	if (c)
		release(c, &B);
}

double ncs_stage_budget(const struct ncs_meas *M)
{
	return 2 * M->timeout + BARRIER_SLACK_S + 30;
}

void ncs_measure(const struct ncs_meas *M, const char *desc, int color, bool split, bool ring, struct ncs_part *part)
{
	struct backend *b = M->ss->b, *c = NULL;
	double start = clock_now(), setup = start + M->timeout;
	*part = (struct ncs_part){ .color = color };
	/* the watchdog names a rank still inside when the stage's budget is
	 * spent: one stuck where nothing can be interrupted (MPI) */
	job_phase(M->ss->cl, desc, start + ncs_stage_budget(M));
	if (split) {
		struct backend_split how = { .color = color, .key = M->ss->proc, .ring = ring, .addr = M->addr,
					     .timeout = M->timeout };
		if (!b->ops->split)
			failf(part, "the %s backend cannot split its ranks into groups", b->ops->name);
		else if (b->ops->split(b, &how, setup, &c) < 0)
			failf(part, "making its group: %s", b->error);
		else if (color >= 0 && !c)
			failf(part, "making its group: the backend made none");
	} else if (color >= 0) {
		c = b;
	}
	part->ranks = c ? c->env.nranks : 0;
	measure(M, part->failed ? NULL : c, setup, part);
	if (c && c != b && part->failed)
		c->ops->abort(c); /* a collective may still wait for a peer: never wait for it */
	if (c && c != b)
		c->ops->fini(c);
	job_phase_done(M->ss->cl);
}
