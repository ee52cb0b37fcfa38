/* One rank's part in a round of `gpuready cluster links` (see
 * links_meet.h). */
#define _GNU_SOURCE
#include "cluster/links_meet.h"
#include "cluster/links_pair.h"
#include "cluster/links_rdma.h"
#include "cluster/links_wire.h"
#include "core/cleanup.h"

#include <stdlib.h>
#include <string.h>

double links_round_budget(const struct links_ctx *c)
{
	const char **rails = xcalloc((size_t)c->n + 1, sizeof(*rails));
	for (int i = 0; i < c->n; i++)
		rails[i] = c->nodes[i].rails;
	int most = links_rails_most(c->mode, rails, c->n);
	free(rails);
	return (c->mode & LINKS_MEASURE_TCP ? links_pair_budget(c->duration) : 0) +
	       most * links_rdma_budget(c->duration);
}

/* One RDMA rail of the pair: both directions; this rank reports the one
 * it wrote. */
static void meet_rail(const struct links_ctx *c, int peer, int pass, int rail, struct strbuf *mine)
{
	const struct links_node *me = &c->nodes[c->me], *x = &c->nodes[peer];
	char dev[64];
	double gbps = -1;
	_cleanup_free_ char *err = links_rail_missing(rail, me, x);
	if (!err && c->rlfd < 0)
		err = xasprintf("rail %d: no RDMA data listener on %s", rail, me->name);
	if (!err) {
		/* without a job token, a key from the run's nonce: a process that
		 * reaches the RDMA listener cannot be served in a peer's place */
		struct auth_key nk = { 0 };
		char tok[40];
		snprintf(tok, sizeof(tok), "cluster links %016llx", (unsigned long long)c->nonce);
		if (!c->key)
			auth_key_from(tok, strlen(tok), &nk);
		links_rail_device(me->rails, rail, dev, sizeof(dev));
		struct links_rdma_opts o = { .me = c->me, .peer = peer, .peer_name = x->name, .peer_addr = x->addr,
					     .peer_rport = x->rport, .listen_fd = c->rlfd, .dev = dev, .host = me->name,
					     .duration = c->duration, .key = c->key ? c->key : &nk };
		links_rdma_pair_run(&o, &gbps, &err);
		auth_key_wipe(&nk);
	}
	links_rail_line(mine, rail, peer, pass, gbps, err);
}

void links_meet(const struct links_ctx *c, int peer, int pass, int round, struct strbuf *mine)
{
	const struct links_node *x = &c->nodes[peer];
	uint32_t rails = links_pair_rails(c->mode, c->nodes[c->me].rails, x->rails);
	if (rails & 1u << LINKS_RAIL_TCP) {
		struct links_peer lp = { .rank = peer, .name = x->name, .addr = x->addr, .port = x->port };
		struct links_pair_opts o = { .me = c->me, .listen_fd = c->lfd, .step = (uint32_t)(pass << 24 | round),
					     .duration = c->duration, .nonce = c->nonce };
		double gbps;
		_cleanup_free_ char *err = NULL;
		links_pair_run(&o, &lp, &gbps, &err);
		links_part_line(mine, peer, pass, gbps, err);
	}
	for (int r = 0; r < LINKS_RAILS_MAX; r++)
		if (rails & 1u << (r + 1))
			meet_rail(c, peer, pass, r, mine);
}

void links_expect(const struct links_ctx *c, unsigned char *want, uint32_t *left, const struct sched_pair *p,
		  size_t np, int pass)
{
	links_want(want, c->n, p, np, pass);
	if (!left || !want)
		return;
	uint32_t *mask = xcalloc(np + 1, sizeof(*mask));
	for (size_t i = 0; i < np; i++)
		if (p[i].a >= 0 && p[i].b >= 0)
			mask[i] = links_pair_rails(c->mode, c->nodes[p[i].a].rails, c->nodes[p[i].b].rails);
	links_want_rails(left, c->n, p, np, mask);
	free(mask);
}
