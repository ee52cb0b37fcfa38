/* Point-to-point network benchmarks (`gpuready bench net`): RDMA over
 * verbs (RC QPs, host or GPU memory) and TCP, perftest-grade.
 *
 * Roles: a server (`--server`) serves successive clients; a client names
 * the server. Every client opens one TCP control connection to the server,
 * sends its parameters (the client's options win), and the server accepts
 * or refuses with a reason (proto.h). Then the test runs:
 *   - TCP: the client opens `qps` data connections (streams) and the data
 *     flows (both ways with -b); the receiving side measures.
 *   - RDMA: both sides open their device and QPs, exchange QP attributes
 *     over the control connection, connect (INIT -> RTR -> RTS), and the
 *     client drives the test; the control connection carries the
 *     synchronisation and the results.
 * `--loopback` runs the server in a thread of the same process.
 *
 * The measurement kernels (tcp.c, rdma.c) fill a struct
 * net_samples; net.c turns samples into the perftest-like rows; the
 * command (src/cmd/bench_net.c) prints them. Every blocking step takes an
 * absolute deadline (clock_now() seconds). */
#ifndef GPUREADY_BENCH_NET_H
#define GPUREADY_BENCH_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum net_test {
	NET_WRITE_BW, NET_WRITE_LAT, NET_READ_BW, NET_READ_LAT, NET_SEND_BW, NET_SEND_LAT, NET_TCP_BW,
	NET_TCP_LAT, NET__COUNT,
};

const char *net_test_name(enum net_test t); /* "write_bw" ... */
int net_test_parse(const char *s);          /* -1 when unknown */
bool net_test_is_rdma(enum net_test t);
bool net_test_is_lat(enum net_test t);

enum net_mem { NET_MEM_HOST, NET_MEM_CUDA };

/* What the client asks for; the server runs it as given. */
struct net_params {
	enum net_test test;
	uint64_t size;           /* bytes per message; 0 with `all` */
	bool all;                /* -a: every power of two from 2 B to 8 MiB */
	uint64_t iters;          /* -n; 0 = default for the test */
	double duration;         /* -D seconds; 0 = use iters */
	int qps;                 /* -q: QPs or TCP streams */
	bool bidir;              /* -b */
	bool warm_up;            /* --perform_warm_up (write_bw, read_bw) */
	/* -T / --tclass: the GRH traffic class (RDMA), IP_TOS or IPV6_TCLASS
	 * on the data connections (TCP); -1 = the system's default */
	int tclass;
	/* RDMA, for both ends (each end applies its own device) */
	int mtu;                 /* 0 = the port's active MTU */
	int sl;
};

/* Per-endpoint RDMA settings (each side has its own). */
struct net_rdma_opts {
	const char *dev;         /* NULL = the first active device */
	int port;                /* 1 */
	int gid_index;           /* -1 = choose as perftest does (RoCE v2, IPv4-mapped) */
	enum net_mem mem;
	int gpu;                 /* CUDA ordinal; -1 = the GPU nearest the NIC */
	unsigned lat_max_samples; /* samples a latency run keeps; 0 = NET_LAT_MAX_SAMPLES */
	bool dmabuf_only;        /* --use_cuda_dmabuf: no fallback to peer memory */
};

/* Defaults as perftest's (perftest src/perftest_parameters.c): -s 65536 for bandwidth, 2 for
 * latency; -n 5000 for bandwidth, 1000 for latency. */
#define NET_BW_SIZE 65536u
#define NET_LAT_SIZE 2u
#define NET_BW_ITERS 5000u
#define NET_LAT_ITERS 1000u
/* -a: 2 B ... 8 MiB (perftest). */
#define NET_ALL_MIN 2u
#define NET_ALL_MAX (8u << 20)

void net_params_default(struct net_params *p);
/* Fills the test's defaults for size and iterations where 0; validates.
 * Returns NULL or a message (malloc'd). */
char *net_params_check(struct net_params *p);

/* What one measurement produced (one size).
 * Bandwidth: bytes moved and the time they took, on the side that can tell
 * (the receiver for TCP, the initiator's completions for RDMA), plus the
 * completion time of each of up to NET_WINDOWS equal slices of the run for
 * the peak rate. Latency: one sample per iteration, microseconds, one-way
 * (half the round trip) for ping-pong tests and the whole round trip for
 * read_lat, as perftest reports them. */
#define NET_WINDOWS 16
struct net_samples {
	uint64_t bytes;          /* payload bytes moved (both directions with -b) */
	uint64_t msgs;           /* messages moved */
	double seconds;          /* first byte sent .. last byte received/completed */
	double window_s[NET_WINDOWS]; /* seconds each slice of msgs/NET_WINDOWS took */
	int n_windows;
	double *lat_us;          /* latency samples (malloc'd), n_lat of them */
	size_t n_lat;
	uint64_t errors;         /* data that arrived wrong (validation) */
	bool capped;             /* a -D latency run stopped at NET_LAT_MAX_SAMPLES */
};
void net_samples_free(struct net_samples *s);

/* A latency run with -D keeps at most this many samples (128 MiB). */
#define NET_LAT_MAX_SAMPLES (16u << 20)

/* The rows printed (net.c). */
struct net_bw_row {
	uint64_t bytes, iters;
	double peak_mibs, avg_mibs;  /* 2^20 B/s */
	double msg_rate_mpps;
	double avg_gbps;             /* 1e9 bit/s, for link shares and --expect-gbps */
	double link_share;           /* avg_gbps / the link's rate, or -1 unknown */
	uint64_t errors;
};

struct net_lat_row {
	uint64_t bytes, iters;
	double min, max, typical, avg, stdev, p99, p999; /* microseconds */
	uint64_t errors;
	bool capped;             /* the samples' s->capped: -D ran out after them */
};

void net_bw_row_from(const struct net_samples *s, uint64_t size, double link_gbps, struct net_bw_row *out);
void net_lat_row_from(const struct net_samples *s, uint64_t size, struct net_lat_row *out);
/* A latency test run for a time (-D): perftest prints its short table
 * (RESULT_FMT_LAT_DUR: t_avg and round trips per second) then. */
bool net_lat_by_duration(const struct net_params *p);
double net_lat_tps(const struct net_params *p, const struct net_lat_row *r);

/* ---- the control connection the kernels synchronise over ---- */

/* Provided by the command to the kernels: framed messages on the control
 * connection, each by a deadline; 0 or -errno (-ECONNRESET: the peer went
 * away; -ETIMEDOUT). */
struct net_ctrl {
	int (*send)(struct net_ctrl *c, const void *buf, size_t len, double deadline);
	/* Receives one message of exactly len bytes. */
	int (*recv)(struct net_ctrl *c, void *buf, size_t len, double deadline);
	/* Optional: without blocking, TCP_PEER_DATA (a message waits),
	 * TCP_PEER_GONE (the peer closed the connection) or TCP_PEER_IDLE
	 * (core/tcp.h). The RDMA loops ask every NET_RDMA_WATCH_S while
	 * they poll, so a peer that fails or exits mid-run is reported at
	 * once, not at the deadline. */
	int (*state)(struct net_ctrl *c);
	void *ctx;
};

#endif
