/* What the ranks of `gpuready cluster links` tell each other besides the
 * measurements themselves (docs/cluster.md, "cluster links"): each rank's
 * results as text lines to rank 0, rank 0's second-pass plan to every
 * rank, and the Mellanox device behind an interface for the hints. Rank 0
 * trusts nothing it parses: a line that makes no sense is left out and
 * counted. */
#ifndef GPUREADY_CLUSTER_LINKS_WIRE_H
#define GPUREADY_CLUSTER_LINKS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/links.h"
#include "cluster/links_render.h"
#include "core/strbuf.h"

/* Appends one result of this rank (the receiver): "FROM PASS GBPS" or,
 * when err, "FROM PASS E why" (why made printable, at most 200 bytes). */
void links_part_line(struct strbuf *sb, int from, int pass, double gbps, char *err);
/* One result of an RDMA rail, which the sender measures (perftest's
 * write_bw: the initiator's completions): "rRAIL TO PASS GBPS" or
 * "rRAIL TO PASS E why", RAIL the rail's index. */
void links_rail_line(struct strbuf *sb, int rail, int to, int pass, double gbps, char *err);
/* Rank 0: rank `to`'s lines (buf has room for a NUL at buf[len]) into
 * *m (a rail's line: the rank is the sender); returns the number of
 * lines left out. */
size_t links_parse_part(int to, int n, char *buf, size_t len, struct links_meas **m, size_t *nm);
/* Rank 0: marks the np pairs of a round of `pass` as asked for, both
 * directions (want NULL: not rank 0, nothing to do). */
struct sched_pair;
void links_want(unsigned char *want, int n, const struct sched_pair *p, size_t np, int pass);
/* Rank 0: keeps of m[first..*nm) only the lines the pass asked for, one
 * per direction it scheduled (want[from * n + to] == pass, cleared as it
 * is taken), so that no rank can add, repeat or move measurements; drops
 * the rest and returns how many. */
size_t links_keep_scheduled(struct links_meas *m, size_t first, size_t *nm, int n, int pass, unsigned char *want);
/* The same with rails: left[from * n + to] holds a bit per rail still
 * expected of the direction (bit 0 TCP, bit 1 + r RDMA rail r), set by
 * links_want_rails; a line is kept when its pass is the scheduled one and
 * its rail's bit is set (then cleared). */
void links_want_rails(uint32_t *left, int n, const struct sched_pair *p, size_t np, const uint32_t *mask);
size_t links_keep_rails(struct links_meas *m, size_t first, size_t *nm, int n, int pass, const unsigned char *want,
			uint32_t *left);
/* Rank 0, after a pass's gather: a failed measurement for every direction
 * the pass scheduled that its receiver did not report (want cleared);
 * with left (not NULL), one for every rail of it still expected. */
void links_add_missing(struct links_meas **m, size_t *nm, int n, int pass, unsigned char *want, uint32_t *left);

/* The second pass's plan as int32s: the n_rounds + 1 round starts, then
 * a, b of every pair. */
size_t links_plan_len(int n_rounds, int n_pairs);
int32_t *links_plan_encode(const struct links_rounds *r);
/* Every value is bounded: a start past the pairs ends there, a pair with
 * a rank outside 0..n-1 becomes no pair of this rank's (-1, -1). */
void links_plan_decode(const int32_t *v, int n_rounds, int n_pairs, int n, struct links_rounds *out);

/* A seed for --rounds when none is given: the clock and the pid through
 * splitmix64 (never 0, which means "draw one"). */
/* 64 random bits from the kernel (getrandom(2)), for the data
 * connections' hello: a stranger cannot guess it. */
uint64_t links_draw_nonce(void);
uint64_t links_draw_seed(void);

/* Every rank's node as the ranks sent it: strings ended and made
 * printable, names cleaned (cluster/node.h) and made unique ("name#rank"
 * for a repeated one). */
void links_nodes_clean(struct links_node *nodes, int n);

/* Rank 0, after links_nodes_clean: what each node announced as its address
 * against seen[i], the numeric address its control connection came from
 * ("" or NULL: not known, e.g. rank 0's own): a different one is replaced
 * by what was seen (no rank can point its peers at a host of its choosing),
 * one that is not a numeric address is emptied (its pairs fail). Each
 * change is said in notes; returns how many. */
struct strbuf;
int links_nodes_verify(struct links_node *nodes, int n, const char *const *seen, struct strbuf *notes);

/* Rank 0: links_nodes_verify with the job's view of each rank's control
 * connection; the changes said on stderr. */
struct session;
void links_nodes_check(struct session *ss, struct links_node *nodes, int n);

/* What every rank needs of every node for its pairs, as rank 0 sends it
 * (after links_nodes_clean). */
struct links_peer_wire {
	char name[64];
	char addr[64];
	char rails[160];  /* links_node's: the peer's RDMA rails */
	char rail_ifs[160]; /* and their netdevs */
	int32_t port;
	int32_t rport;    /* its RDMA data listener, 0 none */
};
void links_peers_pack(const struct links_node *nodes, int n, struct links_peer_wire *w);
/* Into nodes (zeroed, n of them): ended strings, names made printable. */
void links_peers_unpack(const struct links_peer_wire *w, int n, struct links_node *nodes);

/* The Mellanox RDMA device (mlx5_core) behind netdev ifname, for the
 * hint's `mlxlink -d`; "" when none. Reads the live /sys: the
 * measurement runs on the live node. */
void links_mellanox_device(const char *ifname, char *out, size_t len);

#endif
