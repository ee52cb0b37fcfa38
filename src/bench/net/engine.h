/* The point-to-point benchmark's engine (gpuready bench net): the server,
 * the client's run and its renderers, behind one plan.
 *
 *   server.c  serves one client at a time: handshake, limits, the tests
 *   client.c  connects, sets up RDMA, measures every size and streams
 *             each row through a net_row_sink
 *   output.c  perftest-style text (the info block, the table, counters,
 *             the verdict) and the JSON document (docs/bench-net.schema.json)
 *   common.c  what both ends share: deadlines, the sizes of a run, the
 *             link a socket leaves through, the RDMA port counters
 *
 * net.h holds the roles and the rows, proto.h the protocol, rdma.h and
 * tcp.h the measurement kernels. cmd/bench_net.c maps options to a plan
 * and a result to an exit code. */
#ifndef GPUREADY_BENCH_NET_ENGINE_H
#define GPUREADY_BENCH_NET_ENGINE_H

#include "net.h"
#include "proto.h"
#include "rdma.h"
#include "tcp.h"
#include "core/auth.h"
#include "inventory/inventory.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A client gets this long for each message of the handshake (--timeout
 * when given): a silent or confused client must not hold the server. */
#define HANDSHAKE_DEFAULT_S 10.0
/* Without --timeout: 60 s plus the data at 100 MB/s per step, the rule of the
 * collective benchmarks (a working link is far faster). */
#define STEP_BASE_S 60.0
#define STEP_RATE 1e8
/* What one client may cost the server, whatever it asks: its buffers
 * (RDMA: a send and a receive region per QP; TCP: a message to send and
 * one to check per stream) and how long one step may hold it. The limits
 * protect a server other people share; a client asking for more is refused
 * with the numbers. */
#define SERVER_MEM_MAX (2ull << 30)
#define SERVER_STEP_MAX_S 3900.0


/* What a run is told: perftest's parameters, the RDMA endpoint, and the
 * deadlines and expectation from the command line. */
struct net_plan {
	struct net_params p;
	struct net_rdma_opts ro;
	char host[64];           /* this host's short name */
	double timeout;          /* --timeout: seconds per step; 0 automatic */
	double connect_timeout;  /* seconds to reach the server */
	double expect_gbps;      /* --expect-gbps at the largest size; 0 none */
	bool gbits;              /* report Gb/s, not MiB/s */
	struct auth_key key;     /* the job token's (--token-file, $GPUREADY_JOB_TOKEN), if any */
};

struct net_run {
	struct net_bw_row *bw;
	struct net_lat_row *lat;
	size_t n;
	uint64_t errors;
};

struct net_client_side {
	const struct net_plan *nc;
	int fd;
	const char *server;
	int port;
	struct net_accept acc;
	char link[64];
	double link_gbps;        /* the slower known end; 0 unknown */
	struct net_rdma *rdma;
	struct net_rdma_desc desc;
};

/* Where the client's rows go as each size completes (output.c's text
 * sink, or a test's). */
struct net_row_sink {
	void (*header)(void *ctx, const struct net_params *p);
	void (*bw)(void *ctx, const struct net_bw_row *row, bool rdma);
	/* capped: a -D run stopped at the samples it keeps */
	void (*lat)(void *ctx, const struct net_lat_row *row, bool capped);
	void *ctx;
};

/* common.c */
double net_handshake_s(const struct net_plan *nc);
double net_step_deadline(const struct net_plan *nc, const struct net_params *p, uint64_t size, uint64_t iters,
			 double duration);
size_t net_sizes_of(const struct net_params *p, uint64_t *out);
void net_tcp_link(int fd, char *name, size_t len, double *gbps);
struct inventory *net_load_rdma(void);
const struct rdma_port *net_find_port(const struct inventory *inv, const char *dev, int port);
double net_rdma_rate(const struct net_rdma_desc *d);
int net_ctrl_send(struct net_ctrl *c, const void *buf, size_t len, double deadline);
int net_ctrl_recv(struct net_ctrl *c, void *buf, size_t len, double deadline);
int net_ctrl_state(struct net_ctrl *c);

/* server.c: serves clients on lfd (clients 0: forever); an exit code */
int net_serve(const struct net_plan *nc, int lfd, int clients);
/* One client on lfd, for a caller that pairs a server with a known client
 * (cluster links): waits for its HELLO until deadline (clock_now()
 * seconds), serves it to the end, says nothing on stderr. 0, or -errno
 * with *err (malloc'd). */
int net_serve_one(const struct net_plan *nc, int lfd, double deadline, char **err);
/* The job token's exchange (core/auth.h), after HELLO: the server proves
 * first (CHALLENGE), then the client (PROOF). Both return 0, or -errno
 * with *err; the server has refused the client by then. The context is
 * NET_AUTH_CONTEXT, the rank 0. */
#define NET_AUTH_CONTEXT "gpuready bench net"
int net_auth_server(const struct net_plan *nc, int fd, const struct net_hello *h, char **err);
int net_auth_client(const struct net_plan *nc, int fd, const struct net_hello *h, char **err);

/* client.c: each returns 0 or -errno with *err (malloc'd) */
int net_client_connect(struct net_client_side *cs, char **err);
int net_client_rdma(struct net_client_side *cs, char **err);
int net_client_measure(struct net_client_side *cs, struct net_run *ro, const struct net_row_sink *sink, char **err);

/* output.c */
/* net_text_sink's ctx: the run's parameters, and Gb/s instead of MiB/s */
struct net_text_ctx {
	const struct net_params *p;
	bool gbits;
};
extern const struct net_row_sink net_text_sink;
void net_print_info(const struct net_client_side *cs);
void net_print_rule(void);
/* After the table's closing line: the link share (bandwidth) or what
 * latency is usual, then each size's data errors and sample limit. */
void net_print_after_table(const struct net_client_side *cs, const struct net_run *ro);
int net_print_counters(const struct net_client_side *cs, const struct inventory *before,
		       const struct inventory *after, struct net_counter_delta **ret, size_t *n);
int net_write_json(const char *path, const struct net_client_side *cs, const struct net_run *ro,
		   const struct net_counter_delta *cd, size_t ncd, const char *result, const char *error);
int net_verdict(const struct net_plan *nc, const struct net_run *ro, int bad_counters);

#endif
