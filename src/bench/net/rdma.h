/* The RDMA kernels of `gpuready bench net`: RC queue pairs over verbs
 * (libibverbs loaded at run time), buffers in host or GPU memory, the
 * perftest tests write/read/send bandwidth and latency (Linux drivers/infiniband/core/sysfs.c;
 * perftest src/cuda_memory.c, src/perftest_parameters.c).
 *
 * One endpoint per side. Both sides open their endpoint with the same
 * net_params (the client's), exchange net_rdma_info blobs over the control
 * connection, connect, and then call net_rdma_run() for each message size:
 * the client as initiator, the server as target. The control connection
 * (struct net_ctrl) carries what the two sides must agree on between
 * sizes (ready, done, the target's counts); the kernels own that protocol.
 *
 * Errors: 0 or -errno with *err naming the verbs call, the device and the
 * errno text (malloc'd; set only when *err is NULL, so the first and
 * innermost reason is kept). No hardware is needed to load this file:
 * without libibverbs or without a device net_rdma_open() fails with the
 * missing piece named. */
#ifndef GPUREADY_BENCH_NET_RDMA_H
#define GPUREADY_BENCH_NET_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net.h"

struct net_rdma;

/* What the info block prints about an endpoint (perftest's lines). */
struct net_rdma_desc {
	char dev[64];
	int port;
	char link_layer[16];     /* "InfiniBand", "Ethernet" */
	int gid_index;
	char gid[48];            /* "0000:0000:0000:0000:0000:ffff:0a00:0001" */
	char gid_type[16];       /* "RoCE v2", "RoCE v1", "IB" */
	int mtu;                 /* bytes in use */
	double rate_gbps;        /* the port's rate, for link shares; 0 unknown */
	char mem[96];            /* "host", "cuda:0 (NVIDIA H100, 0000:18:00.0) via DMA-BUF", "... via nvidia_peermem" */
};

/* Opens o->dev/o->port (live machine), creates p->qps RC QPs, a CQ, and a
 * buffer of buf_bytes registered for local write, remote write and remote
 * read: host memory, or GPU memory registered through DMA-BUF when the
 * driver and kernel allow it, else through peer memory (nvidia_peermem);
 * the description says which.
 *
 * Device: o->dev, else the first device (libibverbs' order) whose port
 * o->port (0 = 1) is ACTIVE. GID: o->gid_index, else
 * net_rdma_choose_gid() on the port as sysfs lists it. GPU: o->gpu, else
 * the GPU nearest the NIC on PCIe (inventory/topo.h; ties: the first in
 * PCI order). The buffer is at least buf_bytes and never less than
 * net_rdma_buf_bytes(p): a transmit and a receive region per QP, each as
 * large as the largest message p asks for and page aligned.
 * Errors name the missing piece: "libibverbs.so.1 could not be loaded:
 * ..." (-ENOENT/-ENOSYS), "no RDMA device: /sys/class/infiniband is
 * empty" (-ENODEV), a device or port that is absent or not ACTIVE
 * (-ENODEV/-ENETDOWN), a failed verb with the device and errno text. On
 * failure nothing is left open and *ret is untouched. */
int net_rdma_open(const struct net_rdma_opts *o, const struct net_params *p, size_t buf_bytes, struct net_rdma **ret,
		  char **err);
void net_rdma_describe(const struct net_rdma *e, struct net_rdma_desc *out);

/* net_rdma_open() with the library file and the sysfs root it uses
 * spelled out: for tests and for a run against the test double
 * (tests/fakes/fake_ibverbs.c). NULL members (or a NULL env) are the
 * defaults. (The double's SONAME is libibverbs.so.1, so a whole command
 * can also run on it: LD_PRELOAD=<build>/tests/fakes/fake-ibverbs.so.) */
struct net_rdma_env {
	const char *verbs_lib;   /* NULL: the soname libibverbs.so.1; else this file (dlopen path) */
	const char *sysroot;     /* NULL: "/": where sysfs is read (GID types, port rate, PCI topology) */
};
int net_rdma_open_env(const struct net_rdma_env *env, const struct net_rdma_opts *o, const struct net_params *p,
		      size_t buf_bytes, struct net_rdma **ret, char **err);

/* The bytes an endpoint registers for p: 2 x qps x the largest message
 * (p->size, NET_ALL_MAX with -a, the test's default when 0), each region
 * rounded up to the page size. */
size_t net_rdma_buf_bytes(const struct net_params *p);

/* The connection attributes of every QP (LID, QPN, PSN, rkey, address,
 * GID, MTU) as a fixed-size, versioned, little-endian blob for the peer
 * (struct net_rdma_peer below). net_rdma_info_size(qps) is its size;
 * net_rdma_info() returns 0, or -EMSGSIZE when len is not that size. */
size_t net_rdma_info_size(int qps);
int net_rdma_info(const struct net_rdma *e, void *blob, size_t len);
/* Validates the peer's blob (a malformed one is refused with a reason) and
 * moves every QP to RTS with the path attributes (GID, MTU = the smaller
 * of both sides', traffic class, SL). */
int net_rdma_connect(struct net_rdma *e, const void *peer_blob, size_t len, char **err);

/* Runs one size. The initiator fills *out (bandwidth: bytes, time,
 * windows; latency: samples); the target fills what it measured (latency
 * tests) or nothing. Completions are polled until the deadline; a peer
 * that disappears ends it with -ECONNRESET or -ETIMEDOUT. After a
 * bandwidth test the target checks the pattern the initiator wrote (write,
 * send) or the initiator checks what it read (read) and counts wrong bytes
 * into out->errors.
 *
 * Both sides pass the same size, iters and duration (a mismatch is
 * refused, -EPROTO); iters is per QP, as perftest's -n, and is ignored
 * when duration > 0. *out is overwritten (lat_us malloc'd; the caller
 * frees it, net_samples_free()). The bandwidth tests keep up to
 * NET_RDMA_TX_DEPTH work requests in flight on each QP, a completion
 * requested every NET_RDMA_CQ_MOD (perftest's defaults, -t 128 and
 * --cq_mod 100); bytes and msgs count every QP (and with -b both
 * directions: the target's share arrives over the control connection,
 * windows are the slower side's). Latency tests use the first QP only
 * (perftest runs them on one): write_lat and send_lat are ping-pongs
 * whose samples are half of each round trip, read_lat samples each read's
 * round trip; write_lat polls host memory and refuses a GPU buffer
 * (-ENOTSUP). With p->bidir both sides of a bandwidth test initiate.
 *
 * The control messages are struct net_rdma_sync (below): the initiator
 * sends START, the target answers READY once its buffer and receives are
 * prepared, both run, the initiator sends DONE and the target answers
 * RESULT (its wrong-byte count, and its own counts with -b). A side that
 * fails still sends its message with the error, so the peer stops with
 * "the peer failed: <reason>" instead of waiting for its deadline: a
 * target whose run failed sends its RESULT before it waits for DONE, and
 * while either side polls it reads the peer's closing message as soon as
 * it arrives (ctrl->state, every NET_RDMA_WATCH_S), and ends with -EPIPE
 * when the control connection closes. After a failure the QPs may be in
 * the error state: close the endpoint. */
int net_rdma_run(struct net_rdma *e, bool initiator, uint64_t size, uint64_t iters, double duration,
		 struct net_ctrl *ctrl, double deadline, struct net_samples *out, char **err);

/* perftest's defaults: send queue depth (-t) and completion moderation
 * (--cq_mod) for bandwidth tests, receive queue depth (-r) for send_bw. */
#define NET_RDMA_TX_DEPTH 128
#define NET_RDMA_CQ_MOD 100
#define NET_RDMA_RX_DEPTH 512

void net_rdma_close(struct net_rdma *e);

/* ---- pure helpers, unit-tested ---- */

struct rdma_port;
/* The GID index perftest would pick on this port when -x is not given
 * (perftest 6.x src/perftest_communication.c, get_best_gid_index): the
 * populated entries are compared in index order, a later one replacing
 * the best so far when it is IPv4-mapped and the best is not, and
 * otherwise when its type ranks higher (RoCE v2 over IB/RoCE v1; no
 * comparison when either type is unknown). perftest compares the types
 * even when the best so far is IPv4-mapped and the later entry is not,
 * so a later link-local v2 can displace an IPv4 v1; on the tables the
 * kernel builds (link-local v1, v2, then v1, v2 per address) the result
 * is what perftest (src/perftest_communication.c) and NCCL pick: RoCE v2 with an IPv4-mapped address (never
 * link-local); without an IPv4 address, RoCE v2. On an InfiniBand port
 * the lowest populated index (0: the port GID; perftest then uses no GRH
 * unless -x is given, and neither does net_rdma_connect()). -1 when the
 * port has no populated GID. */
int net_rdma_choose_gid(const struct rdma_port *port);

/* ---- the wire formats, pure (for tests and fuzzing) ---- */

/* One side's connection attributes, as net_rdma_info() sends them.
 * Encoded little-endian: a 48-byte header (magic "GRDM", version, QP
 * count, total length, link layer, MTU, GID index, flags, LID, outstanding
 * reads, rkey, region size, GID) then 24 bytes per QP. */
#define NET_RDMA_INFO_VERSION 1
#define NET_RDMA_MAX_QPS 64
struct net_rdma_qp_info {
	uint32_t qpn, psn;       /* 24-bit values */
	uint64_t rx_addr;        /* where the peer writes / sends into */
	uint64_t tx_addr;        /* where the peer reads from */
};
struct net_rdma_peer {
	int qps;
	int link_layer;          /* 1 InfiniBand, 2 Ethernet (IBV_LINK_LAYER_*) */
	int mtu;                 /* the port's active MTU, enum ibv_mtu 1..5 */
	int gid_index;
	bool grh;                /* this side addresses with a GRH (RoCE, or -x on InfiniBand) */
	uint16_t lid;
	uint8_t out_reads;       /* RDMA reads it answers at once per QP (its max_dest_rd_atomic) */
	uint32_t rkey;
	uint64_t region;         /* bytes of each region (rx and tx, per QP) */
	uint8_t gid[16];
	struct net_rdma_qp_info qp[NET_RDMA_MAX_QPS];
};
/* 0, or -EINVAL (qps out of range) / -EMSGSIZE (len is not the size). */
int net_rdma_info_encode(const struct net_rdma_peer *in, void *blob, size_t len);
/* Decodes and validates a peer's blob into *out; any input is safe. 0, or
 * -EPROTO (not ours, another version: *err says which) / -EMSGSIZE (the
 * length does not match) / -EINVAL (a field out of range), with the
 * reason in *err (malloc'd). */
int net_rdma_info_decode(const void *blob, size_t len, struct net_rdma_peer *out, char **err);

/* The synchronisation message of net_rdma_run(), fixed size,
 * little-endian (magic "GRSY", version, then the fields in order; doubles
 * as IEEE 754 bits). */
enum net_rdma_sync_type {
	NET_RDMA_SYNC_START = 1, /* initiator: test, size, iters, duration, seed, flags */
	NET_RDMA_SYNC_READY,     /* target: prepared (status) */
	NET_RDMA_SYNC_DONE,      /* initiator: finished (status; its counts) */
	NET_RDMA_SYNC_RESULT,    /* target: errors found (status; its counts with -b) */
};
#define NET_RDMA_SYNC_VERSION 1
#define NET_RDMA_SYNC_BYTES 344
#define NET_RDMA_SYNC_BIDIR 1u
struct net_rdma_sync {
	uint32_t type;
	int32_t status;          /* 0 or -errno of the side that failed */
	uint32_t test;           /* enum net_test */
	uint32_t flags;          /* NET_RDMA_SYNC_BIDIR */
	uint64_t size, iters;
	double duration;
	uint64_t seed;           /* the data pattern of this run */
	uint64_t msgs, bytes, errors;
	double seconds;
	uint32_t n_windows;
	double window_s[NET_WINDOWS];
	char text[128];          /* why, when status < 0 */
};
void net_rdma_sync_encode(const struct net_rdma_sync *m, uint8_t out[NET_RDMA_SYNC_BYTES]);
/* 0 or -EPROTO with *err (malloc'd); any input is safe. */
int net_rdma_sync_decode(const void *buf, size_t len, struct net_rdma_sync *out, char **err);

/* Port counters before and after a run: the ones that moved, each with
 * what it means ("out_of_sequence +120: packets lost on the way: a lossy
 * fabric; check PFC/ECN"). Counters are read from the live sysfs through
 * the inventory. Both the PMA counters (counters/) and the driver's
 * hw_counters/ are compared, by name; a counter missing from either side
 * is skipped, one that went down (reset) is listed but not bad. *ret is
 * one malloc'd array (free()), NULL when nothing moved. 0 or -EINVAL. */
struct net_counter_delta {
	char name[64];
	uint64_t before, after;
	const char *meaning;     /* static text, NULL for neutral counters */
	bool bad;                /* an error or congestion counter rose */
};
int net_rdma_counters_delta(const struct rdma_port *before, const struct rdma_port *after,
			    struct net_counter_delta **ret, size_t *n);

#endif
