/* The loops of the RDMA tests (perftest's run_iter_bw, run_iter_lat_*):
 * bandwidth with up to NET_RDMA_TX_DEPTH requests in flight per QP and a
 * completion every NET_RDMA_CQ_MOD, the completions' timeline cut into
 * NET_WINDOWS slices; latency as a ping-pong on QP 0 (write_lat polls the
 * last byte of the receive region for the iteration number, send_lat
 * waits for receives) or a read's round trip. Streams end in band (a
 * STOP_IMM send, the LAT_STOP byte), so no side waits on the control
 * connection while it polls. Every loop checks the run's deadline, and
 * (nr_watch_peer) whether the peer has closed the control connection. */
#define _GNU_SOURCE
#include "rdma_int.h"

#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAT_STOP 0xff          /* write_lat: the last write of the stream */
#define POLL_BATCH 32
#define SEED_PEER 0x9e3779b97f4a7c15ull /* the target's pattern: the run's seed ^ this */

/* ---- completion timeline -> windows ---- */

/* (completions, time) points, at least every `step` completions; when
 * full, every other point is dropped and the step doubles, so a run of
 * any length keeps at most TL_CAP points. */
#define TL_CAP 4096
struct timeline {
	uint64_t n[TL_CAP];
	double t[TL_CAP];
	size_t len;
	uint64_t step, next;
};

static void tl_start(struct timeline *tl, double t0)
{
	tl->n[0] = 0;
	tl->t[0] = t0;
	tl->len = 1;
	tl->step = tl->next = 1;
}

static void tl_note(struct timeline *tl, uint64_t count, double t, bool force)
{
	if (count < tl->next && !force)
		return;
	if (tl->n[tl->len - 1] == count) {
		tl->t[tl->len - 1] = t;
		return;
	}
	if (tl->len == TL_CAP) {
		size_t k = 0;
		for (size_t i = 0; i < tl->len; i += 2, k++) {
			tl->n[k] = tl->n[i];
			tl->t[k] = tl->t[i];
		}
		tl->len = k;
		tl->step *= 2;
	}
	tl->n[tl->len] = count;
	tl->t[tl->len++] = t;
	tl->next = count + tl->step;
}

/* The time the count-th completion arrived, interpolated. */
static double tl_at(const struct timeline *tl, double count)
{
	size_t lo = 0, hi = tl->len - 1;
	if (count <= (double)tl->n[0])
		return tl->t[0];
	if (count >= (double)tl->n[hi])
		return tl->t[hi];
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if ((double)tl->n[mid] <= count)
			lo = mid;
		else
			hi = mid;
	}
	double f = (count - (double)tl->n[lo]) / (double)(tl->n[hi] - tl->n[lo]);
	return tl->t[lo] + f * (tl->t[hi] - tl->t[lo]);
}

/* NET_WINDOWS equal slices of the completions (one when fewer). */
static void tl_windows(const struct timeline *tl, uint64_t total, double *w, uint32_t *n)
{
	if (total < NET_WINDOWS) {
		*n = total ? 1 : 0;
		w[0] = total ? tl->t[tl->len - 1] - tl->t[0] : 0;
		return;
	}
	for (int k = 0; k < NET_WINDOWS; k++)
		w[k] = tl_at(tl, (double)total * (k + 1) / NET_WINDOWS) - tl_at(tl, (double)total * k / NET_WINDOWS);
	*n = NET_WINDOWS;
}

/* ---- bandwidth: write_bw, read_bw, send_bw ---- */

struct bw {
	struct run *r;
	bool sends, recvs;         /* this side initiates / consumes receives (send_bw) */
	bool stopping;             /* -D: the time is up */
	double t0, t_end;
	uint64_t posted[NET_RDMA_MAX_QPS], done[NET_RDMA_MAX_QPS];
	uint32_t unsig[NET_RDMA_MAX_QPS];
	bool last[NET_RDMA_MAX_QPS], stopped[NET_RDMA_MAX_QPS];
	int n_stopped;
	uint64_t completed, bad_len;
	struct timeline tl;
};

/* Where data lands on this side: the initiator's receive regions take
 * what it reads, the target's what it is written or sent; with -b both. */
static bool takes_data(const struct run *r)
{
	bool read = r->test == NET_READ_BW;
	return r->bidir || (r->initiator ? read : !read);
}

static uint64_t own_seed(const struct run *r)
{
	return r->initiator ? r->seed : r->seed ^ SEED_PEER;
}

static uint64_t peer_seed(const struct run *r)
{
	return r->initiator ? r->seed ^ SEED_PEER : r->seed;
}

/* Fills what the peer will take, poisons what this side will get, posts
 * the receives a send_bw target needs. */
static int bw_prepare(struct run *r)
{
	struct net_rdma *e = r->e;
	bool gives = r->bidir || (r->initiator ? r->test != NET_READ_BW : r->test == NET_READ_BW);
	bool recvs = r->test == NET_SEND_BW && (r->bidir || !r->initiator);
	int rc = 0;
	for (int q = 0; q < e->n_qps && rc == 0; q++) {
		if (gives)
			rc = nr_region_fill(e, e->qps[q].tx, r->size, nr_qp_seed(own_seed(r), q), false, r->err);
		if (rc == 0 && takes_data(r))
			rc = nr_region_fill(e, e->qps[q].rx, r->size, nr_qp_seed(peer_seed(r), q), true, r->err);
		if (rc == 0 && recvs)
			rc = nr_post_recvs(e, q, r->err);
	}
	return rc;
}

static int bw_check(struct run *r, uint64_t *wrong)
{
	int rc = 0;
	for (int q = 0; q < r->e->n_qps && rc == 0; q++)
		rc = nr_region_check(r->e, r->e->qps[q].rx, r->size, nr_qp_seed(peer_seed(r), q), wrong, r->err);
	return rc;
}

static int bw_post(struct bw *b, int q, bool last)
{
	struct run *r = b->r;
	struct ep_qp *p = &r->e->qps[q];
	bool signal = last || b->unsig[q] + 1 >= NET_RDMA_CQ_MOD;
	struct ibv_sge sge = { .addr = r->test == NET_READ_BW ? p->rx : p->tx, .length = (uint32_t)r->size,
			       .lkey = r->e->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	if (r->test == NET_SEND_BW) {
		wr.opcode = last ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr.imm_data = htonl(STOP_IMM);
	} else {
		wr.opcode = r->test == NET_READ_BW ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = r->test == NET_READ_BW ? p->peer.tx_addr : p->peer.rx_addr;
		wr.wr.rdma.rkey = r->e->peer_rkey;
	}
	if (signal) {
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr_id = (uint64_t)q << 32 | (b->unsig[q] + 1);
	}
	int rc = nr_post_send(r, p->qp, &wr);
	if (rc < 0)
		return rc;
	b->posted[q]++;
	b->unsig[q] = signal ? 0 : b->unsig[q] + 1;
	b->last[q] = last;
	return 0;
}

/* Fills every QP's send queue up to the depth. With -D, once the time is
 * up each QP ends with a signalled request (a send_bw stream with its
 * STOP), so that everything posted is seen to complete. */
static int bw_post_all(struct bw *b)
{
	const struct run *r = b->r;
	for (int q = 0; q < r->e->n_qps; q++) {
		while (!b->last[q] && b->posted[q] - b->done[q] < NET_RDMA_TX_DEPTH) {
			bool last = r->duration > 0 ? b->stopping : b->posted[q] + 1 >= r->iters;
			if (last && r->duration > 0 && r->test != NET_SEND_BW && b->unsig[q] == 0) {
				b->last[q] = true;
				break;
			}
			int rc = bw_post(b, q, last);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int bw_completion(struct bw *b, const struct ibv_wc *wc, double now)
{
	struct run *r = b->r;
	if (wc->status != IBV_WC_SUCCESS)
		return nr_wc_fail(r, wc);
	if (wc->wr_id & WR_RECV) {
		bool stop = false;
		int rc = nr_took_recv(r, wc, &stop, &b->bad_len);
		int q = (int)(wc->wr_id & 0xffff);
		if (rc == 0 && stop && !b->stopped[q]) {
			b->stopped[q] = true;
			b->n_stopped++;
		}
		return rc;
	}
	int q = (int)(wc->wr_id >> 32);
	uint32_t n = (uint32_t)wc->wr_id;
	if (q >= r->e->n_qps || n == 0 || n > b->posted[q] - b->done[q])
		return nr_fail(r->err, -EPROTO, "%s: a send completion for no posted request", r->e->desc.dev);
	b->done[q] += n;
	b->completed += n;
	b->t_end = now;
	tl_note(&b->tl, b->completed, now, false);
	return 0;
}

static bool bw_finished(const struct bw *b)
{
	for (int q = 0; b->sends && q < b->r->e->n_qps; q++)
		if (!b->last[q] || b->done[q] != b->posted[q])
			return false;
	return !b->recvs || b->n_stopped == b->r->e->n_qps;
}

static int bw_loop(struct bw *b)
{
	struct run *r = b->r;
	struct ibv_wc wc[POLL_BATCH];
	b->t0 = b->t_end = clock_now();
	tl_start(&b->tl, b->t0);
	for (;;) {
		double now = clock_now();
		int rc = nr_watch_peer(r, now);
		if (rc < 0)
			return rc;
		if (now > r->deadline)
			return nr_fail(r->err, -ETIMEDOUT,
				    "%s: the deadline passed with %llu messages complete and %d of %d incoming streams ended",
				    r->e->desc.dev, (unsigned long long)b->completed, b->n_stopped, b->recvs ? r->e->n_qps : 0);
		if (r->duration > 0 && now - b->t0 >= r->duration)
			b->stopping = true;
		rc = b->sends ? bw_post_all(b) : 0;
		if (rc < 0)
			return rc;
		int n = ibv_poll_cq(r->e->cq, POLL_BATCH, wc);
		if (n < 0)
			return nr_fail(r->err, -EIO, "ibv_poll_cq(%s) failed (%d)", r->e->desc.dev, n);
		if (n > 0)
			now = clock_now();
		for (int i = 0; i < n; i++)
			if ((rc = bw_completion(b, &wc[i], now)) < 0)
				return rc;
		if (bw_finished(b))
			return 0;
	}
}

/* This side's counts, for its DONE or RESULT. */
static void bw_counts(struct bw *b, struct net_rdma_sync *m)
{
	if (!b->sends)
		return;
	tl_note(&b->tl, b->completed, b->t_end, true);
	m->msgs = b->completed;
	m->bytes = b->completed * b->r->size;
	m->seconds = b->t_end - b->t0;
	tl_windows(&b->tl, b->completed, m->window_s, &m->n_windows);
}

static struct bw *bw_new(struct run *r)
{
	struct bw *b = xcalloc(1, sizeof(*b));
	b->r = r;
	b->sends = r->initiator || r->bidir;
	b->recvs = r->test == NET_SEND_BW && (r->bidir || !r->initiator);
	return b;
}

/* perftest's --perform_warm_up (perform_warm_up(), perftest_resources.c):
 * a send queue's depth of requests on each QP, untimed and waited for,
 * before the measured loop; write_bw and read_bw only, which the peer
 * takes no part in. They move the pattern the measured loop moves, so
 * the data check after the run holds. */
static int bw_warm_up(struct run *r)
{
	if (!r->e->p.warm_up || (r->test != NET_WRITE_BW && r->test != NET_READ_BW))
		return 0;
	struct run w = *r;
	w.iters = NET_RDMA_TX_DEPTH;
	w.duration = 0;
	_cleanup_free_ struct bw *b = bw_new(&w);
	b->sends = true;
	b->recvs = false;
	int rc = bw_loop(b);
	/* what the peer said meanwhile belongs to the run */
	r->early = w.early;
	r->have_early = w.have_early;
	r->result_sent = w.result_sent;
	r->next_watch = w.next_watch;
	return rc;
}

/* The initiator's samples: its counts, with -b plus the target's (the
 * slices ran side by side: each takes the slower side's time). */
static void bw_samples(const struct net_rdma_sync *mine, const struct net_rdma_sync *peer, bool bidir,
		       struct net_samples *out)
{
	out->msgs = mine->msgs + (bidir ? peer->msgs : 0);
	out->bytes = mine->bytes + (bidir ? peer->bytes : 0);
	out->seconds = bidir && peer->seconds > mine->seconds ? peer->seconds : mine->seconds;
	out->n_windows = (int)mine->n_windows;
	for (uint32_t k = 0; k < mine->n_windows; k++) {
		double w = mine->window_s[k];
		if (bidir && peer->n_windows == mine->n_windows && peer->window_s[k] > w)
			w = peer->window_s[k];
		out->window_s[k] = w;
	}
}

int nr_bw_initiator(struct run *r, struct net_samples *out)
{
	_cleanup_free_ struct bw *b = bw_new(r);
	struct net_rdma_sync done = { .type = 0 }, res = { .type = 0 };
	uint64_t wrong = 0;
	int rc = nr_run_start(r, bw_prepare(r));
	if (rc < 0)
		return rc;
	rc = bw_warm_up(r);
	if (rc == 0)
		rc = bw_loop(b);
	bw_counts(b, &done);
	rc = nr_run_finish(r, rc, &done, &res);
	if (rc == 0 && takes_data(r))
		rc = bw_check(r, &wrong);
	if (rc < 0)
		return rc;
	bw_samples(&done, &res, r->bidir, out);
	out->errors = wrong + b->bad_len * r->size + res.errors;
	return 0;
}

int nr_bw_target(struct run *r, struct net_samples *out)
{
	_cleanup_free_ struct bw *b = bw_new(r);
	struct net_rdma_sync done, res = { .type = 0 };
	uint64_t wrong = 0;
	int rc = nr_run_accept(r, bw_prepare);
	if (rc < 0)
		return rc;
	if (b->sends)
		rc = bw_warm_up(r);
	if (rc == 0 && (b->sends || b->recvs))
		rc = bw_loop(b);
	rc = nr_run_done(r, rc, &done);
	if (rc == 0 && takes_data(r))
		rc = bw_check(r, &wrong);
	bw_counts(b, &res);
	res.errors = wrong + b->bad_len * r->size;
	out->errors = res.errors;
	return nr_run_result(r, rc, &res);
}

/* ---- latency: write_lat, send_lat, read_lat ---- */

/* Time stamps of one side: when each message left (and, for the
 * initiator, when the last answer came back). */
struct stamps {
	double *t;
	size_t n, cap;
	size_t max;                /* samples kept at most (net_rdma.lat_max) */
};

/* A -D run keeps at most the endpoint's lat_max samples (memory, on both
 * ends; NET_LAT_MAX_SAMPLES unless the options lower it): the initiator
 * stops there (pp_enough, rlat_loop) and says so (capped); the target
 * follows its STOP. The guard is for the target. */
static void stamp(struct stamps *s, double t)
{
	if (s->n > s->max)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->t = xreallocarray(s->t, s->cap, sizeof(*s->t));
	}
	s->t[s->n++] = t;
}

/* Ping-pong samples, perftest's: half the time between consecutive
 * messages of this side, microseconds. */
static void pingpong_samples(const struct stamps *s, struct net_samples *out)
{
	if (s->n < 2)
		return;
	out->n_lat = s->n - 1;
	out->lat_us = xcalloc(out->n_lat, sizeof(double));
	for (size_t i = 0; i + 1 < s->n; i++)
		out->lat_us[i] = (s->t[i + 1] - s->t[i]) / 2 * 1e6;
}

/* The write_lat counter of message i: 1 .. 254, never LAT_STOP or the
 * poison 0. */
static uint8_t lat_counter(uint64_t i)
{
	return (uint8_t)(1 + i % 254);
}

/* The state of a ping-pong: requests in flight on QP 0, the poll batch. */
struct pp {
	struct run *r;
	struct stamps st;
	int inflight;
	uint64_t got, bad_len;     /* send_lat: receives taken */
	bool stop;                 /* send_lat: the peer's STOP arrived */
	double t0;
};

/* -ETIMEDOUT or -EPIPE (with the error set, the deadline's naming what)
 * when the loop must stop; 0 to go on. */
__attribute__((format(printf, 2, 3))) static int pp_check(struct pp *pp, const char *what, ...)
{
	struct run *r = pp->r;
	double now = clock_now();
	int rc = nr_watch_peer(r, now);

	if (rc < 0 || now <= r->deadline)
		return rc;
	char buf[160];
	va_list ap;
	va_start(ap, what);
	vsnprintf(buf, sizeof(buf), what, ap);
	va_end(ap);
	return nr_fail(r->err, -ETIMEDOUT, "%s: the deadline passed waiting for %s", r->e->desc.dev, buf);
}

/* Reaps completions on the CQ (sends done; send_lat receives). */
static int pp_reap(struct pp *pp)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = ibv_poll_cq(pp->r->e->cq, POLL_BATCH, wc);
	if (n < 0)
		return nr_fail(pp->r->err, -EIO, "ibv_poll_cq(%s) failed (%d)", pp->r->e->desc.dev, n);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			return nr_wc_fail(pp->r, &wc[i]);
		if (!(wc[i].wr_id & WR_RECV)) {
			pp->inflight--;
			continue;
		}
		bool stop = false;
		int rc = nr_took_recv(pp->r, &wc[i], &stop, &pp->bad_len);
		if (rc < 0)
			return rc;
		if (stop)
			pp->stop = true;
		else
			pp->got++;
	}
	return n;
}

/* Posts one message of the ping-pong on QP 0 (inline when it fits). */
static int pp_post(struct pp *pp, enum ibv_wr_opcode op, bool stop)
{
	struct run *r = pp->r;
	struct ep_qp *p = &r->e->qps[0];
	struct ibv_sge sge = { .addr = op == IBV_WR_RDMA_READ ? p->rx : p->tx, .length = (uint32_t)r->size,
			       .lkey = r->e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };
	if (op == IBV_WR_SEND && stop) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(STOP_IMM);
	}
	if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = op == IBV_WR_RDMA_READ ? p->peer.tx_addr : p->peer.rx_addr;
		wr.wr.rdma.rkey = r->e->peer_rkey;
	}
	if (op != IBV_WR_RDMA_READ && r->e->max_inline && r->size <= r->e->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	while (pp->inflight >= NET_RDMA_TX_DEPTH) {
		int rc = pp_reap(pp);
		if (rc < 0)
			return rc;
		if ((rc = pp_check(pp, "a send to complete")) < 0)
			return rc;
	}
	int rc = nr_post_send(r, p->qp, &wr);
	if (rc == 0)
		pp->inflight++;
	return rc;
}

/* Waits until every request posted has completed. */
static int pp_drain(struct pp *pp)
{
	while (pp->inflight > 0) {
		int rc = pp_reap(pp);
		if (rc < 0)
			return rc;
		if ((rc = pp_check(pp, "the last completions")) < 0)
			return rc;
	}
	return 0;
}

/* Has this side sent what the run asks for (iterations, or -D time, or
 * as many ping-pong samples as it keeps: *capped then)? */
static bool pp_enough(const struct pp *pp, uint64_t i, double now, bool *capped)
{
	if (pp->r->duration > 0 && pp->st.n > pp->st.max && now - pp->t0 < pp->r->duration) {
		*capped = true;
		return true;
	}
	return pp->r->duration > 0 ? now - pp->t0 >= pp->r->duration : i >= pp->r->iters;
}

/* write_lat: waits until the last byte of the receive region holds want
 * (the target also stops at LAT_STOP); *got is what it held. */
static int wlat_wait(struct pp *pp, uint8_t want, uint8_t *got)
{
	struct run *r = pp->r;
	const volatile uint8_t *flag = r->e->host + (r->e->qps[0].rx - r->e->base) + r->size - 1;
	for (unsigned spin = 1;; spin++) {
		uint8_t v = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
		if (v == want || (!r->initiator && v == LAT_STOP)) {
			*got = v;
			return 0;
		}
		if (pp->inflight > 0) {
			int rc = pp_reap(pp);
			if (rc < 0)
				return rc;
		}
		int rc;
		if (!(spin & 255) && (rc = pp_check(pp, "write_lat message %u", want)) < 0)
			return rc;
	}
}

static int wlat_write(struct pp *pp, uint8_t v)
{
	struct run *r = pp->r;
	r->e->host[r->e->qps[0].tx - r->e->base + r->size - 1] = v;
	return pp_post(pp, IBV_WR_RDMA_WRITE, false);
}

/* write_lat prepare: the CPU polls host memory only; the counter byte
 * starts at the poison 0. */
static int wlat_prepare(struct run *r)
{
	if (!r->e->host)
		return nr_fail(r->err, -ENOTSUP,
			    "write_lat polls the receive buffer from the CPU, which cannot poll GPU memory: use host "
			    "memory for write_lat (send_lat and read_lat take GPU memory)");
	memset(r->e->host + (r->e->qps[0].rx - r->e->base), 0, r->size);
	memset(r->e->host + (r->e->qps[0].tx - r->e->base), 0, r->size);
	return 0;
}

static int wlat_loop(struct pp *pp, bool *capped)
{
	struct run *r = pp->r;
	uint8_t got = 0;
	int rc = 0;
	pp->t0 = clock_now();
	for (uint64_t i = 0; rc == 0; i++) {
		if (r->initiator) {
			double now = clock_now();
			if (pp_enough(pp, i, now, capped)) {
				stamp(&pp->st, now);
				return wlat_write(pp, LAT_STOP);
			}
			stamp(&pp->st, now);
			if ((rc = wlat_write(pp, lat_counter(i))) == 0)
				rc = wlat_wait(pp, lat_counter(i), &got);
		} else {
			if ((rc = wlat_wait(pp, lat_counter(i), &got)) < 0 || got == LAT_STOP)
				return rc;
			stamp(&pp->st, clock_now());
			rc = wlat_write(pp, got);
		}
	}
	return rc;
}

/* send_lat: waits for the next receive (or the peer's STOP). */
static int slat_wait(struct pp *pp, uint64_t want)
{
	for (unsigned spin = 1; pp->got < want && !pp->stop; spin++) {
		int rc = pp_reap(pp);
		if (rc < 0)
			return rc;
		if (!(spin & 255) && (rc = pp_check(pp, "send_lat message %llu", (unsigned long long)want)) < 0)
			return rc;
	}
	return 0;
}

static int slat_prepare(struct run *r)
{
	return nr_post_recvs(r->e, 0, r->err);
}

static int slat_loop(struct pp *pp, bool *capped)
{
	struct run *r = pp->r;
	int rc = 0;
	pp->t0 = clock_now();
	for (uint64_t i = 0; rc == 0; i++) {
		if (r->initiator) {
			double now = clock_now();
			if (pp_enough(pp, i, now, capped)) {
				stamp(&pp->st, now);
				return pp_post(pp, IBV_WR_SEND, true);
			}
			stamp(&pp->st, now);
			if ((rc = pp_post(pp, IBV_WR_SEND, false)) == 0)
				rc = slat_wait(pp, i + 1);
		} else {
			if ((rc = slat_wait(pp, i + 1)) < 0 || pp->stop)
				return rc;
			stamp(&pp->st, clock_now());
			rc = pp_post(pp, IBV_WR_SEND, false);
		}
	}
	return rc;
}

/* read_lat: each read's round trip (initiator only). */
static int rlat_loop(struct pp *pp, struct net_samples *out)
{
	struct stamps lat = { .t = NULL, .max = pp->r->e->lat_max };
	int rc = 0;
	pp->t0 = clock_now();
	for (uint64_t i = 0; rc == 0 && !pp_enough(pp, i, clock_now(), &out->capped); i++) {
		if (lat.n >= lat.max) { /* read_lat's own samples, not pp->st */
			out->capped = pp->r->duration > 0;
			break;
		}
		double t = clock_now();
		if ((rc = pp_post(pp, IBV_WR_RDMA_READ, false)) == 0 && (rc = pp_drain(pp)) == 0)
			stamp(&lat, (clock_now() - t) * 1e6);
	}
	out->lat_us = lat.t;
	out->n_lat = lat.n;
	return rc;
}

int nr_lat_run(struct run *r, struct net_samples *out)
{
	struct pp pp = { .r = r, .st = { .max = r->e->lat_max } };
	struct net_rdma_sync done = { .type = 0 }, res = { .type = 0 };
	int (*prepare)(struct run *) = r->test == NET_WRITE_LAT ? wlat_prepare
				       : r->test == NET_SEND_LAT ? slat_prepare : NULL;
	int rc = r->initiator ? nr_run_start(r, prepare ? prepare(r) : 0) : nr_run_accept(r, prepare);
	if (rc < 0)
		return rc;
	if (r->test == NET_READ_LAT)
		rc = r->initiator ? rlat_loop(&pp, out) : 0;
	else
		rc = r->test == NET_WRITE_LAT ? wlat_loop(&pp, &out->capped) : slat_loop(&pp, &out->capped);
	if (rc == 0)
		rc = pp_drain(&pp);
	/* the initiator's stamps end with the answer to its last message */
	pingpong_samples(&pp.st, out);
	free(pp.st.t);
	out->msgs = out->n_lat;
	out->bytes = out->msgs * r->size;
	out->errors = pp.bad_len * r->size;
	if (r->initiator) {
		rc = nr_run_finish(r, rc, &done, &res);
		out->errors += res.errors;
		return rc;
	}
	rc = nr_run_done(r, rc, &done);
	res.errors = out->errors;
	return nr_run_result(r, rc, &res);
}
