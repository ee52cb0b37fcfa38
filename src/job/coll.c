/* The job's small collectives over the control connections (job.h):
 * broadcast, gather, scatter, allgather, barrier and an allreduce of a few
 * doubles, main thread only, each by a deadline. */
#define _GNU_SOURCE
#include "job_int.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- data exchanges (main thread) ---- */

enum { OP_BCAST = 1, OP_GATHER, OP_SCATTER, OP_BARRIER, OP_ALLREDUCE, OP_GATHERV };

static const char *op_name(uint32_t op)
{
	static const char *const names[] = { "?", "broadcast", "gather", "scatter", "barrier", "allreduce", "gather" };
	return op < ARRAY_SIZE(names) ? names[op] : "?";
}

static int send_data(struct job *c, int i, uint32_t op, const void *buf, size_t len, double deadline,
		     char **err)
{
	uint8_t dh[JOB_DATA_HDR_LEN];
	job_data_hdr_encode(dh, op, c->op_seq);
	int r = job_send_frame(c, i, MSG_DATA, dh, sizeof(dh), buf, len, deadline);
	if (r < 0) {
		char d[128];
		job_describe(c, c->o.proc == 0 ? i : 0, d, sizeof(d));
		*err = xasprintf("%s: sending to %s: %s", op_name(op), d,
				 r == -ETIMEDOUT ? "timed out (it stopped reading)" : strerror(-r));
	}
	return r;
}

/* Takes the next DATA frame from peer i, waiting until the deadline:
 * 0 and *ret, -ETIMEDOUT, or -ECONNRESET when the peer is gone. */
static int take_frame(struct job *c, int i, double deadline, struct frame **ret)
{
	struct peer *p = &c->peers[i];
	int r = 0;
	*ret = NULL;
	pthread_mutex_lock(&c->m);
	while (!p->head && !p->dead) {
		if (deadline > 0 && clock_now() >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&c->cv, &c->m, &ts);
	}
	if (p->head) {
		*ret = p->head;
		p->head = (*ret)->next;
		if (!p->head)
			p->tail = &p->head;
		p->queued--;
		p->queued_bytes -= (*ret)->len;
		r = 0;
	} else if (!r) {
		r = -ECONNRESET;
	}
	pthread_mutex_unlock(&c->m);
	return r;
}

static void frame_free(struct frame *f)
{
	if (f)
		free(f->buf);
	free(f);
}

/* Why frame f (of peer description d) is not this exchange's: NULL when
 * it is (op and sequence number match, and the body is len bytes, or any
 * length when len is SIZE_MAX). */
static char *frame_mismatch(const struct job *c, const struct frame *f, uint32_t op, size_t len, const char *d)
{
	struct data_hdr dh;
	bool whole = job_data_hdr_decode(f->buf, f->len, &dh);
	if (whole && dh.op == op && dh.seq == c->op_seq && (len == SIZE_MAX || f->len == JOB_DATA_HDR_LEN + len))
		return NULL;
	if (len == SIZE_MAX)
		return xasprintf("%s: %s sent a %s (#%llu) where this process expected a %s (#%llu): the ranks run "
				 "different gpuready versions or options",
				 op_name(op), d, whole ? op_name(dh.op) : "malformed frame", (unsigned long long)dh.seq,
				 op_name(op), (unsigned long long)c->op_seq);
	return xasprintf("%s: %s sent a %s of %zu bytes (#%llu) where this process expected %zu bytes (#%llu): "
			 "the ranks run different gpuready versions or options",
			 op_name(op), d, whole ? op_name(dh.op) : "?", whole ? f->len - JOB_DATA_HDR_LEN : 0,
			 (unsigned long long)dh.seq, len, (unsigned long long)c->op_seq);
}

/* Waits for the next DATA frame from peer i and copies its body to buf. */
static int recv_data(struct job *c, int i, uint32_t op, void *buf, size_t len, double deadline, char **err)
{
	struct frame *f = NULL;
	char d[128];
	job_describe(c, c->o.proc == 0 ? i : 0, d, sizeof(d));
	int r = take_frame(c, i, deadline, &f);
	if (r < 0) {
		*err = xasprintf("%s: waiting for %s: %s", op_name(op), d,
				 r == -ETIMEDOUT ? "timed out" : "it disconnected");
		return r;
	}
	if ((*err = frame_mismatch(c, f, op, len, d)))
		r = -EPROTO;
	else if (len)
		memcpy(buf, f->buf + JOB_DATA_HDR_LEN, len);
	frame_free(f);
	return r;
}

int job_bcast(struct job *c, void *buf, size_t len, double deadline, char **err)
{
	int r = 0;
	c->op_seq++;
	if (c->o.proc != 0)
		return recv_data(c, 0, OP_BCAST, buf, len, deadline, err);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = send_data(c, i, OP_BCAST, buf, len, deadline, err);
	return r;
}

int job_gather(struct job *c, const void *mine, size_t len, void *all, double deadline, char **err)
{
	int r = 0;
	c->op_seq++;
	if (c->o.proc != 0)
		return send_data(c, 0, OP_GATHER, mine, len, deadline, err);
	if (len)
		memmove(all, mine, len);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = recv_data(c, i, OP_GATHER, (char *)all + (size_t)i * len, len, deadline, err);
	return r;
}

int job_gatherv(struct job *c, const void *mine, size_t len, struct job_part *parts, double deadline, char **err)
{
	c->op_seq++;
	if (c->o.proc != 0)
		return send_data(c, 0, OP_GATHERV, mine, len, deadline, err);
	parts[0] = (struct job_part){ .buf = xcalloc(1, len + 1), .len = len };
	memcpy(parts[0].buf, mine, len);
	double start = clock_now();
	for (int i = 1; i < c->o.nprocs; i++) {
		struct frame *f = NULL;
		int r = take_frame(c, i, deadline, &f);
		parts[i] = (struct job_part){ 0 };
		if (r < 0) {
			parts[i].timed_out = r == -ETIMEDOUT;
			parts[i].err = r == -ETIMEDOUT ? xasprintf("sent nothing by the deadline (%.0f s after the gather began)",
								   deadline - start)
						       : xstrdup("disconnected");
		} else if (!(parts[i].err = frame_mismatch(c, f, OP_GATHERV, SIZE_MAX, "it"))) {
			parts[i].len = f->len - JOB_DATA_HDR_LEN;
			parts[i].buf = xcalloc(1, parts[i].len + 1);
			memcpy(parts[i].buf, f->buf + JOB_DATA_HDR_LEN, parts[i].len);
		}
		frame_free(f);
	}
	return 0;
}

int job_scatter(struct job *c, const void *all, void *mine, size_t len, double deadline, char **err)
{
	int r = 0;
	c->op_seq++;
	if (c->o.proc != 0)
		return recv_data(c, 0, OP_SCATTER, mine, len, deadline, err);
	for (int i = 1; i < c->o.nprocs && r == 0; i++)
		r = send_data(c, i, OP_SCATTER, (const char *)all + (size_t)i * len, len, deadline, err);
	if (r == 0 && len)
		memmove(mine, all, len);
	return r;
}

int job_allgather(struct job *c, const void *mine, size_t len, void *all, double deadline, char **err)
{
	int r = job_gather(c, mine, len, all, deadline, err);
	return r < 0 ? r : job_bcast(c, all, len * (size_t)c->o.nprocs, deadline, err);
}

int job_barrier(struct job *c, double deadline, char **err)
{
	int r = job_gather(c, NULL, 0, NULL, deadline, err);
	return r < 0 ? r : job_bcast(c, NULL, 0, deadline, err);
}

int job_allreduce_f64(struct job *c, double *v, size_t n, enum job_op op, double deadline, char **err)
{
	size_t len = n * sizeof(double);
	_cleanup_free_ double *all = c->o.proc == 0 ? xcalloc((size_t)c->o.nprocs, len ? len : 1) : NULL;
	int r = job_gather(c, v, len, all, deadline, err);
	if (r < 0)
		return r;
	if (c->o.proc == 0) {
		for (int p = 1; p < c->o.nprocs; p++)
			for (size_t i = 0; i < n; i++) {
				double x = all[(size_t)p * n + i];
				if (op == JOB_SUM)
					all[i] += x;
				else if (op == JOB_MIN ? x < all[i] : x > all[i])
					all[i] = x;
			}
		memcpy(v, all, len);
	}
	return job_bcast(c, v, len, deadline, err);
}
