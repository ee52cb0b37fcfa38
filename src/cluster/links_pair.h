/* One pair of `gpuready cluster links` over TCP: both directions, one
 * after the other, with the point-to-point kernel of `bench net`
 * (bench/net/tcp.h), every step by a deadline (docs/cluster.md, "cluster
 * links"). No job here: the command (src/cmd/cluster_links.c) says who
 * pairs with whom and gathers the results.
 *
 * The pair's lower rank serves on the data listener it opened at the start
 * (its address and port went to every rank over the control plane); the
 * other connects twice, and each connection opens with a hello (a magic
 * word, the step's number, the connecting rank, the direction), so a
 * connection left over from an earlier step or from another program is
 * refused. Then the lower rank sends for the duration and the higher one
 * receives, then the other way round: each rank measures what it receives. */
#ifndef GPUREADY_CLUSTER_LINKS_PAIR_H
#define GPUREADY_CLUSTER_LINKS_PAIR_H

#include <stddef.h>
#include <stdint.h>

/* The message size of the streams: perftest's default for bandwidth. */
#define LINKS_MSG_BYTES 65536u
/* Seconds to connect and say hello; each direction gets the duration
 * plus this. */
#define LINKS_CONNECT_S 10.0
#define LINKS_SLACK_S 15.0

/* How long a step of one pair can take, at most: what a round's deadline
 * is made of. */
double links_pair_budget(double duration);

struct links_peer {
	int rank;
	const char *name;  /* for messages */
	const char *addr;  /* numeric address of its data listener */
	int port;
};

struct links_pair_opts {
	int me;             /* this rank */
	int listen_fd;      /* this rank's data listener (serving) */
	uint32_t step;      /* the same on both sides: pass and round */
	uint64_t nonce;     /* the run's, drawn by rank 0: a connection without it is a stranger's */
	double duration;    /* seconds per direction */
};

/* Runs the pair; *gbps gets the rate this rank received from the peer,
 * or -1 with *err (malloc'd) saying why (naming the peer and the step
 * that failed: connect, hello, a direction). 0 or -errno. */
int links_pair_run(const struct links_pair_opts *o, const struct links_peer *peer, double *gbps, char **err);

/* This host's numeric address on the route towards host (a UDP socket
 * connected there: no packet is sent), and the interface holding it
 * (ifname may be "" when unknown). 0 or -errno with *err. */
int links_route_address(const char *host, char *addr, size_t addr_len, char *ifname, size_t if_len, char **err);

#endif
