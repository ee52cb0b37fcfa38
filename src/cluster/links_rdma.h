/* One pair of `gpuready cluster links` over one RDMA rail (docs/cluster.md,
 * "cluster links", "Rails"): rail i of a node is the RDMA NIC nearest its
 * GPU i (links_rails.h), and rail i of one node is measured with rail i of
 * the other, as NCCL pairs GPU i's NIC with GPU i's NIC on the peer.
 *
 * The measurement is `gpuready bench net`'s engine (bench/net/engine.h):
 * perftest's default RDMA bandwidth test, write_bw (ib_write_bw: RC QP,
 * RDMA WRITE, 64 KiB messages), for the duration, over a TCP control
 * connection to the serving rank's RDMA data listener, opened at the start
 * like the TCP one. The pair's lower rank serves and the higher one writes
 * to it, then the roles swap: each direction is measured by its writer
 * (the initiator's completions, as perftest reports it), so each rank
 * reports the direction it sent. The job token, when there is one,
 * authenticates the engine's handshake as in `bench net`.
 *
 * A rail missing on either node, a device that cannot be opened, a port
 * down, a peer that never connects: that rail's measurement fails with the
 * reason, each step by a deadline. */
#ifndef GPUREADY_CLUSTER_LINKS_RDMA_H
#define GPUREADY_CLUSTER_LINKS_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/auth.h"

/* The message size: perftest's default for bandwidth, as the TCP pair's
 * (LINKS_MSG_BYTES). */
#define LINKS_RDMA_MSG_KIB 64u

/* --rail: what a pair measures (bits). */
enum links_rail_mode { LINKS_MEASURE_TCP = 1, LINKS_MEASURE_RDMA = 2, LINKS_MEASURE_ALL = 3 };
/* "tcp", "rdma" or "all"; -1 otherwise. */
int links_rail_mode_parse(const char *s);

/* The number of rails in a node's list ("mlx5_0,-,mlx5_3": 3). */
int links_rail_count(const char *rails);
/* Rail i's device of the list into out: 0, or -ENODEV ("-": the GPU has
 * no RDMA NIC, or no rail i; out is "" then). */
int links_rail_device(const char *rails, int i, char *out, size_t len);
/* The rails a pair of nodes measures (bit 0 TCP, bit 1 + i RDMA rail i),
 * the same on every rank: with mode's TCP bit, TCP; with its RDMA bit,
 * every rail index either node has (one missing on a node is measured as
 * failed, with the reason), at most LINKS_RAILS_MAX, and, without TCP,
 * rail 0 when neither has any (it fails: no RDMA device). */
uint32_t links_pair_rails(int mode, const char *rails_a, const char *rails_b);
/* The most RDMA rails a pair of these nodes measures (for the rounds'
 * deadline). */
int links_rails_most(int mode, const char *const *rails, int n);

/* Why rail i cannot be measured between a and b (malloc'd), or NULL
 * when both have its device and an RDMA listener. */
struct links_node;
char *links_rail_missing(int rail, const struct links_node *a, const struct links_node *b);

/* The RDMA data listener on addr (any port): its fd and *port, or -1
 * and 0 (then this node's rails fail with the reason). */
int links_rdma_listen(const char *addr, int *port);

/* Seconds for the handshake and each step of the engine, and what a
 * whole RDMA pair (both directions) may take at most, for the rounds'
 * deadline: every wait of the engine's client (connect, HELLO, the
 * token's exchange, ACCEPT, the QP attributes, START/READY, the run)
 * fits in it. */
double links_rdma_step_s(double duration);
double links_rdma_budget(double duration);

struct links_rdma_opts {
	int me, peer;             /* ranks */
	const char *peer_name;    /* for messages */
	const char *peer_addr;    /* numeric */
	int peer_rport;           /* its RDMA data listener */
	int listen_fd;            /* this rank's RDMA data listener */
	const char *dev;          /* this node's device of the rail */
	const char *host;         /* this node's name (the engine's HELLO) */
	double duration;          /* seconds per direction */
	const struct auth_key *key; /* the job token's, or NULL */
};

/* Both directions of one rail; *gbps gets the rate this rank wrote to the
 * peer, or -1 with *err (malloc'd) naming the peer and the step that
 * failed. Ends by links_rdma_budget(duration). 0 or -errno. */
int links_rdma_pair_run(const struct links_rdma_opts *o, double *gbps, char **err);

#endif
