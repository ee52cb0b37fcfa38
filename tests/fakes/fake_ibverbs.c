/* A stand-in for rdma-core's libibverbs.so.1 (soname libibverbs.so.1), for
 * tests on machines without RDMA hardware: the verbs subset gpuready
 * loads (src/lib/verbs_api.h), exported at rdma-core's symbol versions,
 * with an in-process device whose RC QPs, connected to each other in the
 * same process, move data with memcpy. Both ends of `gpuready bench net`
 * can then run in one process (two threads) and every test can be
 * checked end to end, data included.
 *
 * What it models of a real RC QP: the state machine (INIT -> RTR -> RTS
 * with the attribute masks verbs requires; a GRH is required on RoCE),
 * PSNs (the sender's sq_psn must be the receiver's rq_psn, else the
 * transfer ends in IBV_WC_RETRY_EXC_ERR as it would after the retries),
 * memory keys, bounds and access rights (IBV_WC_REM_ACCESS_ERR,
 * IBV_WC_LOC_PROT_ERR), receive-not-ready (a send waits for a receive, as
 * with rnr_retry 7), ordering per QP, signalled completions, inline data
 * copied at post time, and a QP moving to the error state (the rest
 * flushed with IBV_WC_WR_FLUSH_ERR, and so is
 * whatever is posted to it later). Work runs when any CQ is polled.
 * The ops are reached through ctx->ops as verbs.h's inline functions do;
 * ibv_query_port fills only the compat fields, as the real export.
 *
 * Settings (environment, read when the device list is taken):
 *   FAKE_IBVERBS_DEVICES=N   devices fake_ib0.. (default 1; 0 = none)
 *   FAKE_IBVERBS_LINK=eth    RoCE ports (GID table: fe80:: v1/v2 at 0/1,
 *                            ::ffff:10.0.0.<1+i> v1/v2 at 2/3); default IB
 *   FAKE_IBVERBS_STATE=down  ports DOWN instead of ACTIVE
 *   FAKE_IBVERBS_FAIL=N      as fake_ibverbs_set("fail", N) below
 *   FAKE_IBVERBS_NAMES=a,b   the devices' names instead of fake_ib0..
 *                            (as many devices as names, unless
 *                            FAKE_IBVERBS_DEVICES says otherwise)
 *   FAKE_IBVERBS_HANG=<fn>   ibv_get_device_list, ibv_open_device,
 *                            ibv_query_port, ibv_alloc_pd, ibv_reg_mr or
 *                            ibv_reg_dmabuf_mr never returns (read at the
 *                            call; tests/fakes/fake_hang.h)
 * fake_ibverbs_set(key, value) changes at run time: "fail" (the Nth
 * request from then on completes with IBV_WC_RETRY_EXC_ERR and moves its
 * QP to the error state, once: a link gone mid-run; 0 off), "corrupt" (flip a
 * byte of every Nth transfer; 0 off), and fake_ibverbs_live() counts the
 * objects not yet destroyed, for leak checks.
 *
 * Built as fake-ibverbs.so with the SONAME libibverbs.so.1: loaded by path
 * (tests/unit/test_net_rdma.c), or preloaded so that the program's own
 * dlopen("libibverbs.so.1") finds it:
 *   LD_PRELOAD=build/tests/fakes/fake-ibverbs.so gpuready bench net --loopback --test write_bw
 * (not with a sanitizer build: the ASan runtime must come first).
 *
 * Process-wide state (devices, the QP and MR tables) lives in file-scope
 * variables under one mutex: that is the library's own model.
 *
 * The version script (extracted by tests/fakes/meson.build from the lines
 * starting with "MAP:"):
 * MAP: IBVERBS_1.1 { global: ibv_get_device_list; ibv_free_device_list; ibv_get_device_name;
 * MAP:   ibv_open_device; ibv_close_device; ibv_query_device; ibv_query_port; ibv_query_gid;
 * MAP:   ibv_alloc_pd; ibv_dealloc_pd; ibv_reg_mr; ibv_dereg_mr; ibv_create_cq; ibv_destroy_cq;
 * MAP:   ibv_create_qp; ibv_modify_qp; ibv_destroy_qp; fake_ibverbs_set; fake_ibverbs_live;
 * MAP:   local: *; };
 * MAP: IBVERBS_1.12 { global: ibv_reg_dmabuf_mr; } IBVERBS_1.1;
 */
#define _GNU_SOURCE
#include "lib/verbs_api.h"
#include "fake_hang.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_API __attribute__((visibility("default")))
#define MAX_DEVS 4
#define MAX_QPS 1024
#define MAX_MRS 1024
#define MAX_INLINE 256
#define GID_TBL 8

/* The exported functions are libibverbs' ABI, declared by verbs.h, which
 * this build does not include: no prototypes to precede them. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

struct ibv_device {
	char name[64];
	int index;
};

struct fake_ctx {
	struct ibv_context ctx;    /* first: the library hands out &ctx */
	struct ibv_device *dev;
};

struct fake_mr {
	struct ibv_mr mr;
	int access;
};

struct fake_cq {
	struct ibv_cq cq;
	struct ibv_wc *ring;
	int cap, head, count;
	bool overrun;
};

struct fake_wr {
	struct ibv_send_wr wr;     /* next and sg_list not kept */
	struct ibv_sge sge;
	uint8_t data[MAX_INLINE];  /* inline data, copied at post time */
};

struct fake_qp {
	struct ibv_qp qp;
	struct fake_cq *scq, *rcq;
	struct ibv_qp_attr a;      /* what modify_qp set */
	uint32_t max_inline;
	struct fake_wr *sq;
	int sq_cap, sq_head, sq_count;
	struct ibv_recv_wr *rq;
	struct ibv_sge *rq_sge;
	int rq_cap, rq_head, rq_count;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_device devs[MAX_DEVS];
static int n_devs;
static bool eth, down;
static struct fake_qp *qps[MAX_QPS];
static struct fake_mr *mrs[MAX_MRS];
static uint32_t next_qpn = 0x100;
static long corrupt_every, transfers;
static long fail_after, attempts; /* "fail": the Nth request after it was set fails, once */
static int live;

static int err(int e)
{
	errno = e;
	return e;
}

static void read_env(void)
{
	const char *n = getenv("FAKE_IBVERBS_DEVICES"), *l = getenv("FAKE_IBVERBS_LINK"),
		   *s = getenv("FAKE_IBVERBS_STATE");
	const char *names = getenv("FAKE_IBVERBS_NAMES");
	int n_names = 0;
	for (const char *p = names; p && *p; p += strcspn(p, ","), p += *p == ',')
		n_names++;
	n_devs = n ? atoi(n) : names ? n_names : 1;
	if (n_devs < 0 || n_devs > MAX_DEVS)
		n_devs = MAX_DEVS;
	eth = l && !strcmp(l, "eth");
	down = s && !strcmp(s, "down");
	const char *f = getenv("FAKE_IBVERBS_FAIL");
	if (f) {
		fail_after = atol(f);
		attempts = 0;
	}
	const char *p = names;
	for (int i = 0; i < n_devs; i++) {
		size_t len = p ? strcspn(p, ",") : 0;
		if (len)
			snprintf(devs[i].name, sizeof(devs[i].name), "%.*s", (int)len, p);
		else
			snprintf(devs[i].name, sizeof(devs[i].name), "fake_ib%d", i);
		devs[i].index = i;
		if (p)
			p = p[len] == ',' ? p + len + 1 : NULL;
	}
}

FAKE_API struct ibv_device **ibv_get_device_list(int *num)
{
	fake_hang_if("FAKE_IBVERBS_HANG", "ibv_get_device_list");
	pthread_mutex_lock(&lock);
	read_env();
	struct ibv_device **l = calloc((size_t)n_devs + 1, sizeof(*l));
	for (int i = 0; l && i < n_devs; i++)
		l[i] = &devs[i];
	if (num)
		*num = l ? n_devs : 0;
	pthread_mutex_unlock(&lock);
	if (!l)
		errno = ENOMEM;
	return l;
}

FAKE_API void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

FAKE_API const char *ibv_get_device_name(struct ibv_device *dev)
{
	return dev->name;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

FAKE_API struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
	fake_hang_if("FAKE_IBVERBS_HANG", "ibv_open_device");
	struct fake_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->dev = dev;
	c->ctx.device = dev;
	c->ctx.cmd_fd = c->ctx.async_fd = -1;
	c->ctx.num_comp_vectors = 1;
	c->ctx.ops.poll_cq = fake_poll_cq;
	c->ctx.ops.post_send = fake_post_send;
	c->ctx.ops.post_recv = fake_post_recv;
	__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return &c->ctx;
}

FAKE_API int ibv_close_device(struct ibv_context *ctx)
{
	free(ctx);
	__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

FAKE_API int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	(void)ctx;
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "0.0.0 (fake)");
	a->max_qp = MAX_QPS;
	a->max_qp_wr = 16384;
	a->max_sge = 30;
	a->max_cq = 1024;
	a->max_cqe = 1 << 20;
	a->max_mr = MAX_MRS;
	a->max_pd = 1024;
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
	a->phys_port_cnt = 1;
	return 0;
}

/* The export fills the compat layout only (rdma-core libibverbs/verbs.h): up to `flags`. */
FAKE_API int ibv_query_port(struct ibv_context *ctx, uint8_t port, void *compat)
{
	fake_hang_if("FAKE_IBVERBS_HANG", "ibv_query_port");
	(void)ctx;
	if (port != 1)
		return err(EINVAL);
	struct ibv_port_attr a;
	memset(&a, 0, sizeof(a));
	a.state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
	a.max_mtu = a.active_mtu = IBV_MTU_4096;
	a.gid_tbl_len = GID_TBL;
	a.max_msg_sz = 1u << 30;
	a.pkey_tbl_len = 1;
	a.lid = eth ? 0 : (uint16_t)(1 + ((struct fake_ctx *)ctx)->dev->index);
	a.active_width = 2;   /* 4X */
	a.active_speed = 64;  /* HDR: 50 Gb/s per lane */
	a.phys_state = down ? 3 : 5;
	a.link_layer = eth ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
	memcpy(compat, &a, offsetof(struct ibv_port_attr, flags) + 1);
	return 0;
}

static bool gid_of(int dev, int index, union ibv_gid *g)
{
	memset(g, 0, sizeof(*g));
	if (index < 0 || index >= GID_TBL)
		return false;
	if (eth ? index < 2 : index == 0) {
		g->raw[0] = 0xfe;
		g->raw[1] = 0x80;
		g->raw[15] = (uint8_t)(1 + dev);
	} else if (eth && index < 4) {
		g->raw[10] = g->raw[11] = 0xff;
		g->raw[12] = 10;
		g->raw[15] = (uint8_t)(1 + dev);
	}
	return true;
}

FAKE_API int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1 || !gid_of(((struct fake_ctx *)ctx)->dev->index, index, gid)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

FAKE_API struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	fake_hang_if("FAKE_IBVERBS_HANG", "ibv_alloc_pd");
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = ctx;
	__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return pd;
}

FAKE_API int ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	if (!addr || !length || (access & ~0xf)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	int slot = -1;
	for (int i = 1; i < MAX_MRS && slot < 0; i++)
		if (!mrs[i])
			slot = i;
	struct fake_mr *m = slot > 0 ? calloc(1, sizeof(*m)) : NULL;
	if (m) {
		m->mr = (struct ibv_mr){ .context = pd->context, .pd = pd, .addr = addr, .length = length,
					 .handle = (uint32_t)slot, .lkey = (uint32_t)slot << 8 | 0x11,
					 .rkey = (uint32_t)slot << 8 | 0x22 };
		m->access = access;
		mrs[slot] = m;
		__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&lock);
	if (!m)
		errno = ENOMEM;
	return m ? &m->mr : NULL;
}

FAKE_API struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	fake_hang_if("FAKE_IBVERBS_HANG", "ibv_reg_mr");
	return reg(pd, addr, length, access);
}

/* The dma-buf itself cannot be followed in-process: the range is taken
 * at the iova given (the fake libcuda's device memory is host memory). */
FAKE_API struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
					  int access)
{
	fake_hang_if("FAKE_IBVERBS_HANG", "ibv_reg_dmabuf_mr");
	(void)offset;
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	return reg(pd, (void *)(uintptr_t)iova, length, access);
}

FAKE_API int ibv_dereg_mr(struct ibv_mr *mr)
{
	pthread_mutex_lock(&lock);
	mrs[mr->handle] = NULL;
	pthread_mutex_unlock(&lock);
	free(mr);
	__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

FAKE_API struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				      struct ibv_comp_channel *channel, int comp_vector)
{
	(void)comp_vector;
	struct fake_cq *c = cqe > 0 ? calloc(1, sizeof(*c)) : NULL;
	if (c)
		c->ring = calloc((size_t)cqe, sizeof(*c->ring));
	if (!c || !c->ring) {
		free(c);
		errno = cqe > 0 ? ENOMEM : EINVAL;
		return NULL;
	}
	c->cap = cqe;
	c->cq = (struct ibv_cq){ .context = ctx, .channel = channel, .cq_context = cq_context, .cqe = cqe };
	__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return &c->cq;
}

FAKE_API int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct fake_cq *c = (struct fake_cq *)cq;
	free(c->ring);
	free(c);
	__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

FAKE_API struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	if (a->qp_type != IBV_QPT_RC || !a->send_cq || !a->recv_cq || !a->cap.max_send_wr || a->cap.max_send_wr > 16384 ||
	    a->cap.max_recv_wr > 16384 || a->cap.max_send_sge > 1 || a->cap.max_recv_sge > 1 ||
	    a->cap.max_inline_data > MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	struct fake_qp *q = calloc(1, sizeof(*q));
	if (q) {
		q->sq = calloc(a->cap.max_send_wr, sizeof(*q->sq));
		q->rq = calloc(a->cap.max_recv_wr + 1, sizeof(*q->rq));
		q->rq_sge = calloc(a->cap.max_recv_wr + 1, sizeof(*q->rq_sge));
	}
	pthread_mutex_lock(&lock);
	uint32_t qpn = next_qpn++;
	bool ok = q && q->sq && q->rq && q->rq_sge && qpn < MAX_QPS;
	if (ok)
		qps[qpn] = q;
	pthread_mutex_unlock(&lock);
	if (!ok) {
		if (q) {
			free(q->sq);
			free(q->rq);
			free(q->rq_sge);
		}
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	q->scq = (struct fake_cq *)a->send_cq;
	q->rcq = (struct fake_cq *)a->recv_cq;
	q->sq_cap = (int)a->cap.max_send_wr;
	q->rq_cap = (int)a->cap.max_recv_wr;
	q->max_inline = a->cap.max_inline_data ? MAX_INLINE : 0;
	a->cap.max_inline_data = q->max_inline;
	q->qp = (struct ibv_qp){ .context = pd->context, .qp_context = a->qp_context, .pd = pd, .send_cq = a->send_cq,
				 .recv_cq = a->recv_cq, .qp_num = qpn, .state = IBV_QPS_RESET, .qp_type = IBV_QPT_RC };
	__atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return &q->qp;
}

FAKE_API int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	pthread_mutex_lock(&lock);
	qps[qp->qp_num] = NULL;
	pthread_mutex_unlock(&lock);
	free(q->sq);
	free(q->rq);
	free(q->rq_sge);
	free(q);
	__atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* The masks verbs requires for each RC transition (ibv_modify_qp(3)). */
static int check_transition(const struct fake_qp *q, const struct ibv_qp_attr *a, int mask)
{
	static const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
			 rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
			 rts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			       IBV_QP_MAX_QP_RD_ATOMIC;
	union ibv_gid g;
	int dev = ((struct fake_ctx *)q->qp.context)->dev->index;
	switch (a->qp_state) {
	case IBV_QPS_INIT:
		return q->qp.state == IBV_QPS_RESET && (mask & init) == init && a->port_num == 1 ? 0 : EINVAL;
	case IBV_QPS_RTR:
		if (q->qp.state != IBV_QPS_INIT || (mask & rtr) != rtr || a->path_mtu < IBV_MTU_256 ||
		    a->path_mtu > IBV_MTU_4096 || a->dest_qp_num > 0xffffff || a->rq_psn > 0xffffff ||
		    a->ah_attr.port_num != 1)
			return EINVAL;
		if (eth && !a->ah_attr.is_global)
			return EINVAL; /* RoCE addresses by GID only */
		if (!a->ah_attr.is_global)
			return a->ah_attr.dlid ? 0 : EINVAL;
		/* the source GID must be populated */
		return gid_of(dev, a->ah_attr.grh.sgid_index, &g) && (g.raw[0] || g.raw[10]) && a->ah_attr.grh.hop_limit
			       ? 0
			       : EINVAL;
	case IBV_QPS_RTS:
		return q->qp.state == IBV_QPS_RTR && (mask & rts) == rts && a->sq_psn <= 0xffffff && a->timeout &&
				       a->max_rd_atomic <= 16
			       ? 0
			       : EINVAL;
	case IBV_QPS_ERR:
		return 0;
	default:
		return EINVAL;
	}
}

FAKE_API int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	pthread_mutex_lock(&lock);
	int r = mask & IBV_QP_STATE ? check_transition(q, attr, mask) : EINVAL;
	if (r == 0) {
		if (attr->qp_state == IBV_QPS_INIT)
			q->a.qp_access_flags = attr->qp_access_flags;
		if (attr->qp_state == IBV_QPS_RTR) {
			q->a.dest_qp_num = attr->dest_qp_num;
			q->a.rq_psn = attr->rq_psn;
			q->a.path_mtu = attr->path_mtu;
			q->a.max_dest_rd_atomic = attr->max_dest_rd_atomic;
			q->a.ah_attr = attr->ah_attr;
		}
		if (attr->qp_state == IBV_QPS_RTS) {
			q->a.sq_psn = attr->sq_psn;
			q->a.max_rd_atomic = attr->max_rd_atomic;
		}
		qp->state = attr->qp_state;
	}
	pthread_mutex_unlock(&lock);
	return r ? err(r) : 0;
}

static struct fake_mr *mr_find(uint32_t key, bool remote, uint64_t addr, uint64_t len, int need)
{
	uint32_t slot = key >> 8;
	struct fake_mr *m = slot && slot < MAX_MRS ? mrs[slot] : NULL;
	if (!m || (remote ? m->mr.rkey : m->mr.lkey) != key)
		return NULL;
	uint64_t lo = (uint64_t)(uintptr_t)m->mr.addr;
	if (addr < lo || addr + len > lo + m->mr.length || addr + len < addr || (m->access & need) != need)
		return NULL;
	return m;
}

static bool cq_push(struct fake_cq *c, const struct ibv_wc *wc)
{
	if (c->count == c->cap) {
		c->overrun = true;
		return false;
	}
	c->ring[(c->head + c->count++) % c->cap] = *wc;
	return true;
}

/* Moves q to the error state: the failed request's completion, then every
 * queued one flushed. */
static void qp_error(struct fake_qp *q, enum ibv_wc_status st)
{
	for (int i = 0; i < q->sq_count; i++) {
		const struct fake_wr *w = &q->sq[(q->sq_head + i) % q->sq_cap];
		struct ibv_wc wc = { .wr_id = w->wr.wr_id, .status = i ? IBV_WC_WR_FLUSH_ERR : st, .qp_num = q->qp.qp_num };
		cq_push(q->scq, &wc);
	}
	q->sq_count = 0;
	for (int i = 0; i < q->rq_count; i++) {
		struct ibv_wc wc = { .wr_id = q->rq[(q->rq_head + i) % (q->rq_cap + 1)].wr_id,
				     .status = IBV_WC_WR_FLUSH_ERR, .opcode = IBV_WC_RECV, .qp_num = q->qp.qp_num };
		cq_push(q->rcq, &wc);
	}
	q->rq_count = 0;
	q->qp.state = IBV_QPS_ERR;
}

static void maybe_corrupt(uint8_t *dst, uint32_t len)
{
	if (corrupt_every > 0 && len > 0 && ++transfers % corrupt_every == 0)
		dst[len / 2] ^= 0x5a;
}

/* A send into the peer's next receive; false when none is posted (RNR:
 * try again later). */
static bool do_send(struct fake_qp *q, struct fake_qp *d, const struct fake_wr *w, const uint8_t *src,
		    enum ibv_wc_status *st)
{
	if (!d->rq_count)
		return false;
	int slot = d->rq_head;
	const struct ibv_sge *rs = &d->rq_sge[slot];
	uint32_t len = w->sge.length;
	struct ibv_wc wc = { .wr_id = d->rq[slot].wr_id, .opcode = IBV_WC_RECV, .byte_len = len, .qp_num = d->qp.qp_num,
			     .src_qp = q->qp.qp_num };
	d->rq_head = (d->rq_head + 1) % (d->rq_cap + 1);
	d->rq_count--;
	if (len > rs->length || !mr_find(rs->lkey, false, rs->addr, len, IBV_ACCESS_LOCAL_WRITE)) {
		wc.status = IBV_WC_LOC_LEN_ERR;
		cq_push(d->rcq, &wc);
		*st = IBV_WC_REM_INV_REQ_ERR;
		return true;
	}
	memcpy((void *)(uintptr_t)rs->addr, src, len);
	maybe_corrupt((uint8_t *)(uintptr_t)rs->addr, len);
	if (w->wr.opcode == IBV_WR_SEND_WITH_IMM) {
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = w->wr.imm_data;
	}
	cq_push(d->rcq, &wc);
	return true;
}

/* Runs the request at the head of q's send queue; false when it must
 * wait (RNR). */
static bool run_one(struct fake_qp *q)
{
	const struct fake_wr *w = &q->sq[q->sq_head];
	struct fake_qp *d = q->a.dest_qp_num < MAX_QPS ? qps[q->a.dest_qp_num] : NULL;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	const struct ibv_sge *s = &w->sge;
	bool inl = w->wr.send_flags & IBV_SEND_INLINE, read = w->wr.opcode == IBV_WR_RDMA_READ;
	const uint8_t *src = inl ? w->data : (const uint8_t *)(uintptr_t)s->addr;

	if (!d || d->qp.state < IBV_QPS_RTR || d->a.dest_qp_num != q->qp.qp_num || d->a.rq_psn != q->a.sq_psn)
		st = IBV_WC_RETRY_EXC_ERR; /* nobody answers this PSN on that QP */
	else if (fail_after > 0 && ++attempts == fail_after) {
		st = IBV_WC_RETRY_EXC_ERR; /* as if the link went away: retries exhausted */
		fail_after = 0;
	} else if (!inl && s->length && !mr_find(s->lkey, false, s->addr, s->length, read ? IBV_ACCESS_LOCAL_WRITE : 0))
		st = IBV_WC_LOC_PROT_ERR;
	else if (w->wr.opcode == IBV_WR_SEND || w->wr.opcode == IBV_WR_SEND_WITH_IMM) {
		if (!do_send(q, d, w, src, &st))
			return false;
	} else {
		int need = read ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
		struct fake_mr *m = mr_find(w->wr.wr.rdma.rkey, true, w->wr.wr.rdma.remote_addr, s->length, need);
		if (!m || !(d->a.qp_access_flags & need) || (read && !q->a.max_rd_atomic))
			st = IBV_WC_REM_ACCESS_ERR;
		else if (read)
			memcpy((void *)(uintptr_t)s->addr, (const void *)(uintptr_t)w->wr.wr.rdma.remote_addr, s->length);
		else
			memcpy((void *)(uintptr_t)w->wr.wr.rdma.remote_addr, src, s->length);
		if (m)
			maybe_corrupt((uint8_t *)(uintptr_t)(read ? s->addr : w->wr.wr.rdma.remote_addr), s->length);
	}
	if (st != IBV_WC_SUCCESS) {
		qp_error(q, st);
		return false;
	}
	static const enum ibv_wc_opcode ops[] = { [IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE, [IBV_WR_SEND] = IBV_WC_SEND,
						  [IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND, [IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ };
	struct ibv_wc wc = { .wr_id = w->wr.wr_id, .opcode = ops[w->wr.opcode], .byte_len = read ? s->length : 0,
			     .qp_num = q->qp.qp_num };
	if (w->wr.send_flags & IBV_SEND_SIGNALED)
		cq_push(q->scq, &wc);
	q->sq_head = (q->sq_head + 1) % q->sq_cap;
	q->sq_count--;
	return true;
}

static void progress(void)
{
	for (int i = 0; i < MAX_QPS; i++) {
		struct fake_qp *q = qps[i];
		while (q && q->qp.state == IBV_QPS_RTS && q->sq_count && run_one(q))
			;
	}
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fake_cq *c = (struct fake_cq *)cq;
	int k = 0;
	pthread_mutex_lock(&lock);
	progress();
	if (c->overrun)
		k = -1;
	for (; k >= 0 && k < n && c->count; k++) {
		wc[k] = c->ring[c->head];
		c->head = (c->head + 1) % c->cap;
		c->count--;
	}
	pthread_mutex_unlock(&lock);
	return k;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	int r = 0;
	pthread_mutex_lock(&lock);
	for (; wr && !r; wr = wr->next) {
		bool inl = wr->send_flags & IBV_SEND_INLINE;
		if (qp->state == IBV_QPS_ERR) { /* accepted and flushed, as the drivers do */
			struct ibv_wc wc = { .wr_id = wr->wr_id, .status = IBV_WC_WR_FLUSH_ERR, .qp_num = qp->qp_num };
			cq_push(q->scq, &wc);
			continue;
		}
		if (qp->state != IBV_QPS_RTS || wr->num_sge != 1 || q->sq_count == q->sq_cap ||
		    (inl && (wr->sg_list[0].length > q->max_inline || wr->opcode == IBV_WR_RDMA_READ)) ||
		    (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_READ && wr->opcode != IBV_WR_SEND &&
		     wr->opcode != IBV_WR_SEND_WITH_IMM)) {
			r = qp->state != IBV_QPS_RTS || q->sq_count < q->sq_cap ? EINVAL : ENOMEM;
			*bad = wr;
			break;
		}
		struct fake_wr *w = &q->sq[(q->sq_head + q->sq_count++) % q->sq_cap];
		w->wr = *wr;
		w->wr.next = NULL;
		w->sge = wr->sg_list[0];
		w->wr.sg_list = &w->sge;
		if (inl)
			memcpy(w->data, (const void *)(uintptr_t)w->sge.addr, w->sge.length);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	int r = 0;
	pthread_mutex_lock(&lock);
	for (; wr && !r; wr = wr->next) {
		if (qp->state == IBV_QPS_ERR) { /* accepted and flushed, as the drivers do */
			struct ibv_wc wc = { .wr_id = wr->wr_id, .status = IBV_WC_WR_FLUSH_ERR, .opcode = IBV_WC_RECV,
					     .qp_num = qp->qp_num };
			cq_push(q->rcq, &wc);
			continue;
		}
		if (qp->state == IBV_QPS_RESET || wr->num_sge != 1 || q->rq_count == q->rq_cap) {
			r = q->rq_count == q->rq_cap ? ENOMEM : EINVAL;
			*bad = wr;
			break;
		}
		int slot = (q->rq_head + q->rq_count++) % (q->rq_cap + 1);
		q->rq[slot] = *wr;
		q->rq_sge[slot] = wr->sg_list[0];
	}
	pthread_mutex_unlock(&lock);
	return r;
}

FAKE_API int fake_ibverbs_set(const char *key, long value)
{
	bool corrupt = !strcmp(key, "corrupt");
	if (!corrupt && strcmp(key, "fail"))
		return -1;
	pthread_mutex_lock(&lock);
	if (corrupt) {
		corrupt_every = value;
		transfers = 0;
	} else {
		fail_after = value;
		attempts = 0;
	}
	pthread_mutex_unlock(&lock);
	return 0;
}

FAKE_API int fake_ibverbs_live(void)
{
	return __atomic_load_n(&live, __ATOMIC_SEQ_CST);
}
