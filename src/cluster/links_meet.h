/* One rank's part in a round of `gpuready cluster links`: its pair over
 * every rail the pair measures (--rail: TCP, links_pair.h; each RDMA rail,
 * links_rdma.h), one after the other, each result a line for rank 0
 * (links_wire.h), and what rank 0 expects of a round. */
#ifndef GPUREADY_CLUSTER_LINKS_MEET_H
#define GPUREADY_CLUSTER_LINKS_MEET_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/links_render.h"
#include "cluster/schedule.h"
#include "core/auth.h"
#include "core/strbuf.h"

struct links_ctx {
	int me, n;
	const struct links_node *nodes; /* every rank's, as rank 0 sent them */
	int lfd, rlfd;                  /* this rank's TCP and RDMA data listeners (-1 none) */
	int mode;                       /* enum links_rail_mode */
	double duration;
	uint64_t nonce;                 /* the TCP hello's */
	const struct auth_key *key;     /* the job token's, or NULL: the RDMA rails' handshake is then keyed by the nonce */
};

/* What a step of one pair may take at most, over every rail the pairs of
 * these nodes measure: the round's deadline is made of it. */
double links_round_budget(const struct links_ctx *c);
/* This rank's pair with peer in the given pass and round: every rail of
 * it, its results appended to mine. */
void links_meet(const struct links_ctx *c, int peer, int pass, int round, struct strbuf *mine);
/* Rank 0: marks the np pairs of a round as asked for (links_want) and,
 * with left (not NULL), the rails each measures (links_want_rails). */
void links_expect(const struct links_ctx *c, unsigned char *want, uint32_t *left, const struct sched_pair *p,
		  size_t np, int pass);

#endif
