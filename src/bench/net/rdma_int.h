/* What the files of the RDMA kernels share, outside the rdma.h
 * contract: the endpoint, one run, and the helpers one file calls in
 * another (prefix nr_).
 *   rdma.c          the endpoint: open, connect, describe, close
 *   rdma_wire.c     pure helpers: perftest's GID choice, the counter
 *                       meanings, the connection blob, the control message
 *   rdma_run.c      net_rdma_run(): its control messages, work requests
 *                       and completions, the data patterns
 *   rdma_kernels.c  the bandwidth and latency loops */
#ifndef GPUREADY_BENCH_NET_RDMA_INT_H
#define GPUREADY_BENCH_NET_RDMA_INT_H

#include "rdma.h"

#include "lib/cuda_api.h"
#include "core/dl.h"
#include "lib/verbs_api.h"

#include <stdbool.h>
#include <stdint.h>

#define STOP_IMM 0x53544f50u   /* "STOP": immediate data of the last send of a stream */
#define WR_RECV (1ull << 63)   /* wr_id of receives: | QP index */

/* One RC QP and what the peer said about its twin. */
struct ep_qp {
	struct ibv_qp *qp;
	uint32_t psn;
	uint64_t tx, rx;           /* this side's regions, as the NIC addresses them */
	struct net_rdma_qp_info peer;
	uint32_t recvs;            /* receives posted and not yet completed (kept across runs) */
};

/* The endpoint (rdma.h): everything net_rdma_close() releases. */
struct net_rdma {
	struct net_params p;       /* the client's, with qps >= 1 */
	enum net_mem mem;
	bool dmabuf_only;          /* --use_cuda_dmabuf */
	int port, gpu;
	struct dl_lib vlib;
	struct verbs_api v;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ep_qp *qps;
	int n_qps;
	uint32_t max_inline;       /* 0: no inline sends */
	unsigned lat_max;          /* samples a latency run keeps (net_rdma_opts) */
	/* the buffer: 2 x n_qps regions of `region` bytes at `base` */
	uint8_t *host;             /* host memory, NULL for GPU memory */
	uint64_t base;
	size_t bytes, region;
	uint8_t *scratch;          /* GPU memory: host staging of one region */
	/* CUDA, for GPU memory */
	struct dl_lib clib;
	struct cuda_api cu;
	bool cu_loaded, retained;
	CUdevice cudev;
	CUcontext cuctx;
	CUdeviceptr dptr;
	int dmabuf_fd;
	/* addressing */
	int gid_index;
	uint8_t gid[16];
	bool grh;
	uint8_t out_reads;
	bool connected;
	uint32_t peer_rkey;
	uint64_t peer_region;
	struct net_rdma_desc desc;
};

/* One net_rdma_run() call. */
struct run {
	struct net_rdma *e;
	bool initiator, bidir;
	enum net_test test;
	uint64_t size, iters, seed;
	double duration, deadline;
	struct net_ctrl *ctrl;
	double next_watch;         /* nr_watch_peer: when to ask ctrl->state again */
	/* The peer's closing message (the initiator's DONE, or the target's
	 * RESULT when it failed), read by nr_watch_peer while this side still
	 * ran; nr_run_done/nr_run_finish take it from here. */
	struct net_rdma_sync early;
	bool have_early;
	bool result_sent;          /* target: its RESULT went out early, on failure */
	char **err;
};

/* How often the loops ask whether the peer closed the control connection
 * (a poll() with no wait: cheap next to a 50 ms detection delay). */
#define NET_RDMA_WATCH_S 0.05

/* ---- rdma.c ---- */

/* Sets *err (once: the first, innermost reason wins) and returns r. */
__attribute__((format(printf, 3, 4))) int nr_fail(char **err, int r, const char *fmt, ...);
const char *nr_errtext(int e);
bool nr_test_is_lat(enum net_test t);
/* The errno of a failed verb: those returning int give it (or -1 with
 * errno), those returning a pointer leave it in errno. */
int nr_verb_errno(int r);
/* A CUDA failure as nr_fail() text ("fn: CUDA_ERROR_X (n): ..."), -EIO. */
int nr_cuda_fail(struct net_rdma *e, char **err, const char *fn, CUresult c);

/* ---- rdma_wire.c ---- */

/* A GID in sysfs form: eight groups of four hex digits. */
void nr_gid_format(const uint8_t g[16], char *buf, size_t size);
/* perftest's ranking of GID types: RoCE v2 2, (IB/)RoCE v1 1, -1 unknown. */
int nr_gid_type_rank(const char *type);

/* ---- rdma_run.c ---- */

/* The control messages of a run (rdma.h describes the exchange). The
 * initiator: nr_run_start() with how its preparation went (START, then
 * READY), later nr_run_finish() (DONE with its counts, then RESULT). The
 * target: nr_run_accept() (START; prepare() when both ends agree; READY),
 * later nr_run_done() (DONE) and nr_run_result() (RESULT). Each returns
 * this side's error, else the transport's, else "the peer failed: ...". */
int nr_run_start(struct run *r, int rc);
int nr_run_accept(struct run *r, int (*prepare)(struct run *));
int nr_run_finish(struct run *r, int rc, struct net_rdma_sync *done, struct net_rdma_sync *res);
int nr_run_done(struct run *r, int rc, struct net_rdma_sync *done);
int nr_run_result(struct run *r, int rc, struct net_rdma_sync *res);

/* Asked at most every NET_RDMA_WATCH_S, from every loop that polls,
 * beside its deadline check: -EPIPE (with *r->err) once the peer has
 * closed the control connection; the peer's error once its closing
 * message says it failed (a target that fails sends RESULT at once, see
 * nr_run_done); else 0. */
int nr_watch_peer(struct run *r, double now);

/* A failed work completion, named with a likely cause; -EIO. */
int nr_wc_fail(struct run *r, const struct ibv_wc *wc);
int nr_post_send(struct run *r, struct ibv_qp *qp, struct ibv_send_wr *wr);
/* Tops QP q's receive queue up to its depth (receives left over from a
 * run stay posted for the next). */
int nr_post_recvs(struct net_rdma *e, int q, char **err);
/* A receive completion: counted, the queue topped up; *stop when it
 * carried STOP_IMM; a length other than the run's size counts in *bad_len. */
int nr_took_recv(struct run *r, const struct ibv_wc *wc, bool *stop, uint64_t *bad_len);

/* The data pattern of QP q in a run with this seed; fill writes it (or its
 * complement) at a buffer address, check counts the bytes that differ. */
uint64_t nr_qp_seed(uint64_t seed, int q);
int nr_region_fill(struct net_rdma *e, uint64_t addr, size_t n, uint64_t seed, bool invert, char **err);
int nr_region_check(struct net_rdma *e, uint64_t addr, size_t n, uint64_t seed, uint64_t *wrong, char **err);

/* ---- rdma_kernels.c ---- */

int nr_bw_initiator(struct run *r, struct net_samples *out);
int nr_bw_target(struct run *r, struct net_samples *out);
/* write_lat, send_lat, read_lat, either side. */
int nr_lat_run(struct run *r, struct net_samples *out);

#endif
