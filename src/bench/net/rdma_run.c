/* net_rdma_run() (rdma.h) and what both kinds of test share: the
 * control messages of a run, posting work requests and taking receive
 * completions, and the data patterns that check every byte. The loops
 * themselves are in rdma_kernels.c. */
#define _GNU_SOURCE
#include "rdma_int.h"

#include "core/cleanup.h"
#include "core/tcp.h"
#include "core/strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* ---- data patterns ---- */

uint64_t nr_qp_seed(uint64_t seed, int q)
{
	uint64_t z = seed + (uint64_t)(q + 1) * 0x9e3779b97f4a7c15ull; /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

/* xorshift64 bytes from seed (its complement with invert). */
static void pattern_fill(uint8_t *dst, size_t n, uint64_t seed, bool invert)
{
	uint64_t s = seed;
	for (size_t i = 0; i < n; i += 8) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint64_t v = invert ? ~s : s;
		memcpy(dst + i, &v, n - i < 8 ? n - i : 8);
	}
}

static uint64_t pattern_wrong(const uint8_t *src, size_t n, uint64_t seed)
{
	uint64_t s = seed, wrong = 0;
	for (size_t i = 0; i < n; i += 8) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		uint8_t want[8];
		size_t k = n - i < 8 ? n - i : 8;
		memcpy(want, &s, sizeof(want));
		for (size_t j = 0; j < k; j++)
			wrong += src[i + j] != want[j];
	}
	return wrong;
}

/* Fills n bytes at the buffer address addr (host or GPU). */
int nr_region_fill(struct net_rdma *e, uint64_t addr, size_t n, uint64_t seed, bool invert, char **err)
{
	if (e->host) {
		pattern_fill(e->host + (addr - e->base), n, seed, invert);
		return 0;
	}
	pattern_fill(e->scratch, n, seed, invert);
	CUresult c = e->cu.memcpy_htod_v2((CUdeviceptr)addr, e->scratch, n);
	/* from pageable memory the copy may still be in flight when the call
	 * returns (CUDA's "API synchronization behavior"): the NIC must not
	 * see the buffer before it lands */
	if (c == CUDA_SUCCESS && e->cu.ctx_synchronize)
		c = e->cu.ctx_synchronize();
	return c == CUDA_SUCCESS ? 0 : nr_cuda_fail(e, err, "cuMemcpyHtoD_v2", c);
}

int nr_region_check(struct net_rdma *e, uint64_t addr, size_t n, uint64_t seed, uint64_t *wrong, char **err)
{
	const uint8_t *src = e->host ? e->host + (addr - e->base) : e->scratch;
	if (!e->host) {
		CUresult c = e->cu.memcpy_dtoh_v2(e->scratch, (CUdeviceptr)addr, n);
		if (c != CUDA_SUCCESS)
			return nr_cuda_fail(e, err, "cuMemcpyDtoH_v2", c);
	}
	*wrong += pattern_wrong(src, n, seed);
	return 0;
}

/* ---- one run: the control messages ---- */


static const char *sync_name(uint32_t t)
{
	static const char *const n[] = { "?", "START", "READY", "DONE", "RESULT" };
	return t <= NET_RDMA_SYNC_RESULT ? n[t] : "?";
}

static int sync_send(struct run *r, struct net_rdma_sync *m)
{
	uint8_t buf[NET_RDMA_SYNC_BYTES];
	m->test = (uint32_t)r->test;
	net_rdma_sync_encode(m, buf);
	int rc = r->ctrl->send(r->ctrl, buf, sizeof(buf), r->deadline);
	if (rc < 0)
		return nr_fail(r->err, rc, "sending %s to the peer: %s", sync_name(m->type),
			    rc == -ETIMEDOUT ? "the deadline passed" : nr_errtext(rc));
	return 0;
}

/* The next message, which must be of type want; 0 means it arrived (its
 * status may still say the peer failed). */
static int sync_recv(struct run *r, uint32_t want, struct net_rdma_sync *m)
{
	uint8_t buf[NET_RDMA_SYNC_BYTES];
	_cleanup_free_ char *why = NULL;
	int rc = r->ctrl->recv(r->ctrl, buf, sizeof(buf), r->deadline);
	if (rc < 0)
		return nr_fail(r->err, rc, "waiting for %s from the peer: %s", sync_name(want),
			    rc == -ETIMEDOUT ? "the deadline passed" : nr_errtext(rc));
	if ((rc = net_rdma_sync_decode(buf, sizeof(buf), m, &why)) < 0)
		return nr_fail(r->err, rc, "waiting for %s from the peer: %s", sync_name(want), why);
	if (m->type != want)
		return nr_fail(r->err, -EPROTO, "expected %s from the peer, got %s", sync_name(want), sync_name(m->type));
	return 0;
}

static int peer_failed(struct run *r, const struct net_rdma_sync *m)
{
	return nr_fail(r->err, m->status, "the peer failed: %s", m->text[0] ? m->text : nr_errtext(m->status));
}

static void sync_status(struct net_rdma_sync *m, int rc, char **err)
{
	m->status = rc < 0 ? rc : 0;
	if (rc < 0) {
		const char *why = err && *err ? *err : nr_errtext(rc);
		size_t n = sizeof(m->text);
		/* the message is fixed-size: a longer reason ends in "..." */
		if ((size_t)snprintf(m->text, n, "%s", why) >= n)
			memcpy(m->text + n - 4, "...", 4);
	}
}

/* Initiator, prepared with result rc: START, then READY. */
int nr_run_start(struct run *r, int rc)
{
	struct net_rdma_sync m = { .type = NET_RDMA_SYNC_START, .size = r->size, .iters = r->iters,
				   .duration = r->duration, .seed = r->seed, .flags = r->bidir ? NET_RDMA_SYNC_BIDIR : 0 };
	sync_status(&m, rc, r->err);
	int s = sync_send(r, &m);
	if (rc < 0 || s < 0)
		return rc < 0 ? rc : s;
	if ((s = sync_recv(r, NET_RDMA_SYNC_READY, &m)) < 0)
		return s;
	return m.status < 0 ? peer_failed(r, &m) : 0;
}

/* Target: START; if both ends run the same, prepare(); READY. */
int nr_run_accept(struct run *r, int (*prepare)(struct run *))
{
	struct net_rdma_sync m;
	int rc = sync_recv(r, NET_RDMA_SYNC_START, &m);
	if (rc < 0)
		return rc;
	if (m.status < 0)
		return peer_failed(r, &m);
	r->seed = m.seed;
	if (m.test != (uint32_t)r->test || m.size != r->size || fabs(m.duration - r->duration) > 1e-9 ||
	    (r->duration <= 0 && m.iters != r->iters) || !(m.flags & NET_RDMA_SYNC_BIDIR) != !r->bidir)
		rc = nr_fail(r->err, -EPROTO,
			  "the peer runs test %u with %llu B x %llu (%g s), this side test %d with %llu B x %llu (%g s): "
			  "both ends must run the same",
			  m.test, (unsigned long long)m.size, (unsigned long long)m.iters, m.duration, (int)r->test,
			  (unsigned long long)r->size, (unsigned long long)r->iters, r->duration);
	else
		rc = prepare ? prepare(r) : 0;
	struct net_rdma_sync ready = { .type = NET_RDMA_SYNC_READY };
	sync_status(&ready, rc, r->err);
	int s = sync_send(r, &ready);
	return rc < 0 ? rc : s;
}

/* Initiator, done with result rc: DONE (*done holds its counts), then
 * RESULT into *res. */
int nr_run_finish(struct run *r, int rc, struct net_rdma_sync *done, struct net_rdma_sync *res)
{
	done->type = NET_RDMA_SYNC_DONE;
	sync_status(done, rc, r->err);
	int s = sync_send(r, done);
	if (s == 0 && r->have_early)
		*res = r->early; /* the target's RESULT came during the loop */
	else if (s == 0)
		s = sync_recv(r, NET_RDMA_SYNC_RESULT, res);
	if (rc < 0 || s < 0)
		return rc < 0 ? rc : s;
	return res->status < 0 ? peer_failed(r, res) : 0;
}

/* Target, done with result rc: DONE; the peer's failure becomes rc. A
 * target whose loop failed sends its RESULT first, so that an initiator
 * still in its loop (waiting for an answer that will not come) hears it
 * at its next nr_watch_peer rather than at its deadline. */
int nr_run_done(struct run *r, int rc, struct net_rdma_sync *done)
{
	int s = 0;
	if (rc < 0 && !r->have_early) {
		struct net_rdma_sync res = { .type = NET_RDMA_SYNC_RESULT };
		sync_status(&res, rc, r->err);
		r->result_sent = sync_send(r, &res) == 0;
	}
	if (r->have_early)
		*done = r->early; /* the initiator's DONE came during the loop */
	else
		s = sync_recv(r, NET_RDMA_SYNC_DONE, done);
	if (rc < 0 || s < 0)
		return rc < 0 ? rc : s;
	return done->status < 0 ? peer_failed(r, done) : 0;
}

/* Target: RESULT with its status and *res's counts (unless nr_run_done
 * sent it already). */
int nr_run_result(struct run *r, int rc, struct net_rdma_sync *res)
{
	if (r->result_sent)
		return rc;
	res->type = NET_RDMA_SYNC_RESULT;
	sync_status(res, rc, r->err);
	int s = sync_send(r, res);
	return rc < 0 ? rc : s;
}

/* A run refused before it started: tell the peer where it waits. */
static int run_refuse(struct run *r, int rc)
{
	if (r->initiator)
		return nr_run_start(r, rc);
	struct net_rdma_sync m;
	/* a START that already fails is not answered */
	if (sync_recv(r, NET_RDMA_SYNC_START, &m) == 0 && m.status == 0) {
		struct net_rdma_sync ready = { .type = NET_RDMA_SYNC_READY };
		sync_status(&ready, rc, r->err);
		sync_send(r, &ready);
	}
	return rc;
}

/* ---- work requests and completions ---- */

int nr_watch_peer(struct run *r, double now)
{
	if (!r->ctrl->state || now < r->next_watch)
		return 0;
	r->next_watch = now + NET_RDMA_WATCH_S;
	int st = r->ctrl->state(r->ctrl);
	if (st == TCP_PEER_GONE)
		return nr_fail(r->err, -EPIPE, "%s: the peer closed the control connection during the %s run "
					       "(its process exited or was killed)", r->e->desc.dev, net_test_name(r->test));
	if (st != TCP_PEER_DATA || r->have_early) /* its last message read, only a close can follow */
		return 0;
	/* the only message that can come now is the peer's last: take it */
	int rc = sync_recv(r, r->initiator ? NET_RDMA_SYNC_RESULT : NET_RDMA_SYNC_DONE, &r->early);
	if (rc < 0)
		return rc;
	r->have_early = true;
	return r->early.status < 0 ? peer_failed(r, &r->early) : 0;
}

int nr_wc_fail(struct run *r, const struct ibv_wc *wc)
{
	char nb[24];
	const char *hint = "";
	switch (wc->status) {
	case IBV_WC_RETRY_EXC_ERR:
		hint = ": the peer did not answer (not reachable with this GID/LID, a lossy path, or gone)";
		break;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		hint = ": the peer had no receive posted";
		break;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
		hint = ": the NIC could not reach the local buffer (with GPU memory: often ACS or the IOMMU in the way)";
		break;
	case IBV_WC_REM_ACCESS_ERR:
		hint = ": the peer refused the access (rkey, address or permissions)";
		break;
	case IBV_WC_WR_FLUSH_ERR:
		hint = ": the QP was already in error";
		break;
	default:
		break;
	}
	return nr_fail(r->err, -EIO, "%s: work completion %s on QP 0x%x (vendor error 0x%x)%s", r->e->desc.dev,
		    verbs_wc_status_name((int)wc->status, nb, sizeof(nb)), wc->qp_num, wc->vendor_err, hint);
}

int nr_post_send(struct run *r, struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp, wr, &bad);
	if (rc != 0)
		return nr_fail(r->err, -nr_verb_errno(rc), "ibv_post_send(%s QP 0x%x): %s", r->e->desc.dev, qp->qp_num,
			    nr_errtext(nr_verb_errno(rc)));
	return 0;
}

/* Tops QP q's receive queue up to its depth (receives left over from a
 * run stay posted for the next). */
int nr_post_recvs(struct net_rdma *e, int q, char **err)
{
	struct ep_qp *p = &e->qps[q];
	uint32_t depth = NET_RDMA_RX_DEPTH;
	if (e->dattr.max_qp_wr > 0 && depth > (uint32_t)e->dattr.max_qp_wr)
		depth = (uint32_t)e->dattr.max_qp_wr;
	while (p->recvs < depth) {
		struct ibv_sge sge = { .addr = p->rx, .length = (uint32_t)e->region, .lkey = e->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = WR_RECV | (uint64_t)q, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
		int rc = ibv_post_recv(p->qp, &wr, &bad);
		if (rc != 0)
			return nr_fail(err, -nr_verb_errno(rc), "ibv_post_recv(%s QP 0x%x): %s", e->desc.dev, p->qp->qp_num,
				    nr_errtext(nr_verb_errno(rc)));
		p->recvs++;
	}
	return 0;
}

/* A receive completion on QP q: counts it, tops the queue up; *stop when
 * it was the stream's last. */
int nr_took_recv(struct run *r, const struct ibv_wc *wc, bool *stop, uint64_t *bad_len)
{
	int q = (int)(wc->wr_id & 0xffff);
	if (q >= r->e->n_qps || !r->e->qps[q].recvs)
		return nr_fail(r->err, -EPROTO, "%s: a receive completion for no posted receive", r->e->desc.dev);
	r->e->qps[q].recvs--;
	*stop = (wc->wc_flags & IBV_WC_WITH_IMM) && ntohl(wc->imm_data) == STOP_IMM;
	if (wc->byte_len != r->size)
		++*bad_len;
	return nr_post_recvs(r->e, q, r->err);
}

/* ---- net_rdma_run ---- */

static uint64_t random64(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (uint64_t)(clock_now() * 1e9) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return v;
}

static int run_check(struct run *r)
{
	struct net_rdma *e = r->e;
	uint64_t max = e->region < e->peer_region ? e->region : e->peer_region;
	if (r->size == 0 || r->size > max)
		return nr_fail(r->err, -EINVAL, "a message of %llu bytes: the buffers hold 1 .. %llu bytes per message",
			    (unsigned long long)r->size, (unsigned long long)max);
	if (!(r->duration >= 0) || !isfinite(r->duration) || (r->duration == 0 && r->iters == 0))
		return nr_fail(r->err, -EINVAL, "neither iterations nor a duration to run for");
	if (nr_test_is_lat(r->test) && r->duration == 0 && r->iters > e->lat_max)
		return nr_fail(r->err, -EINVAL, "-n %llu: a latency run keeps at most %u samples",
			    (unsigned long long)r->iters, e->lat_max);
	if (e->cu_loaded) {
		CUresult c = e->cu.ctx_set_current(e->cuctx);
		if (c != CUDA_SUCCESS)
			return nr_cuda_fail(e, r->err, "cuCtxSetCurrent", c);
	}
	return 0;
}

int net_rdma_run(struct net_rdma *e, bool initiator, uint64_t size, uint64_t iters, double duration,
		 struct net_ctrl *ctrl, double deadline, struct net_samples *out, char **err)
{
	if (!out)
		return nr_fail(err, -EINVAL, "net_rdma_run: no samples to fill");
	memset(out, 0, sizeof(*out));
	if (!e || !ctrl || !ctrl->send || !ctrl->recv)
		return nr_fail(err, -EINVAL, "net_rdma_run: no endpoint or control connection");
	if (!e->connected)
		return nr_fail(err, -ENOTCONN, "%s: net_rdma_run before net_rdma_connect", e->desc.dev);
	struct run r = { .e = e, .initiator = initiator, .bidir = e->p.bidir && !nr_test_is_lat(e->p.test),
			 .test = e->p.test, .size = size, .iters = iters, .duration = duration, .deadline = deadline,
			 .ctrl = ctrl, .err = err };
	if (initiator)
		r.seed = random64();
	int rc = run_check(&r);
	if (rc < 0)
		return run_refuse(&r, rc);
	if (nr_test_is_lat(r.test))
		return nr_lat_run(&r, out);
	return initiator ? nr_bw_initiator(&r, out) : nr_bw_target(&r, out);
}
