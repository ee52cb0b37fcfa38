/* `gpuready cluster links` (docs/cluster.md, "cluster links"): one process
 * per node under a launcher, as `cluster check` (cmd/cluster_job.c). Each
 * opens a TCP data listener on the address it reaches rank 0 from, all
 * learn all addresses, then every pair measures both directions
 * (cluster/links_pair.c) in rounds of disjoint pairs (cluster/schedule.c),
 * each round a job phase with a deadline (a frozen rank is named, a failed
 * pair is a result); --rail rdma|all adds each RDMA rail, measured with
 * the engine of `bench net` on a second data listener (cluster/links_meet.c).
 * Rank 0 gathers, finds the suspects per rail (cluster/links_blocks.c),
 * sends the second pass's rounds, gathers again and prints. */
#define _GNU_SOURCE
#include "cmd.h"
#include "cluster/links_blocks.h"
#include "cluster/links_meet.h"
#include "cluster/links_pair.h"
#include "cluster/links_rails.h"
#include "cluster/links_rdma.h"
#include "cluster/links_wire.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXCHANGE_S 120.0 /* seconds for an exchange of the control plane (addresses, plan, results) */

struct run {
	struct cmd_env *env;
	struct session *ss;
	struct job *cl;
	int me, n, lfd, rlfd, mode; /* mode: --rail (links_rdma.h) */
	struct links_node *nodes;
	struct links_ctx ctx;       /* what a pair needs (links_meet.h) */
	double duration, t0;
	int round_no, rounds_est;   /* progress over both passes */
	bool progress;
	struct strbuf mine;         /* what this rank received: "FROM PASS GBPS" or "FROM PASS E why" lines */
	unsigned char *want;        /* rank 0: [from * n + to] = the pass that scheduled it (links_keep_scheduled) */
	uint32_t *left;             /* rank 0 with RDMA rails: the rails still expected of it (links_keep_rails) */
	uint64_t nonce;             /* the data connections' (agree_seed) */
};

/* This rank's node: name, the address it reaches rank 0 from, its data
 * listener. 0 or EXIT_TOOL_ERROR (said). */
static int my_node(struct run *R, struct links_node *me)
{
	struct session *ss = R->ss;
	_cleanup_free_ char *name = cluster_job_node_name(R->env, R->me), *err = NULL, *tree = cluster_job_tree(R->me);
	_cleanup_free_ char *local = tcp_local_addresses(); /* under MPI: the first one not loopback */
	local[strcspn(local, ",")] = 0;
	const char *master = ss->have_launch && ss->launch.master_host ? ss->launch.master_host : local;
	*me = (struct links_node){ 0 };
	snprintf(me->name, sizeof(me->name), "%s", name);
	if (R->n < 2 || links_route_address(master, me->addr, sizeof(me->addr), me->ifname, sizeof(me->ifname), &err) < 0 ||
	    (R->lfd = tcp_listen(me->addr, 0, &err)) < 0) {
		session_error(ss, "%s%s", R->n < 2 ? "it measures between two nodes or more" : "no data listener: ",
			      R->n < 2 ? "" : err);
		return EXIT_TOOL_ERROR;
	}
	me->port = tcp_local_port(R->lfd);
	if (R->mode & LINKS_MEASURE_RDMA) /* none: this node's rails fail with the reason */
		R->rlfd = links_rdma_listen(me->addr, &me->rport);
	links_mellanox_device(me->ifname, me->rdma, sizeof(me->rdma));
	links_rails_read(tree ? tree : "/", me->rails, sizeof(me->rails), me->rail_ifs, sizeof(me->rail_ifs));
	return 0;
}

/* Every rank's node to rank 0 (names made unique there); what a pair
 * needs of each (name, address, port) from rank 0 to every rank. */
static void exchange_nodes(struct run *R, const struct links_node *me)
{
	_cleanup_free_ char *err = NULL;
	_cleanup_free_ struct links_peer_wire *w = xcalloc((size_t)R->n, sizeof(*w));
	R->nodes = xcalloc((size_t)R->n, sizeof(*R->nodes));
	int r = job_gather(R->cl, me, sizeof(*me), R->nodes, clock_now() + EXCHANGE_S, &err);
	if (r == 0 && R->me == 0)
		links_nodes_clean(R->nodes, R->n), links_nodes_check(R->ss, R->nodes, R->n), links_peers_pack(R->nodes, R->n, w);
	if (r < 0 || (r = job_bcast(R->cl, w, (size_t)R->n * sizeof(*w), clock_now() + EXCHANGE_S, &err)) < 0)
		session_fail(R->ss, err, r);
	if (R->me != 0)
		links_peers_unpack(w, R->n, R->nodes);
	R->ctx = (struct links_ctx){ .me = R->me, .n = R->n, .nodes = R->nodes, .lfd = R->lfd, .rlfd = R->rlfd,
				     .mode = R->mode, .duration = R->duration, .key = R->ss->key.set ? &R->ss->key : NULL };
}

/* One round: this rank's pair in it (if any), then every rank meets. */
static void run_round(struct run *R, const struct sched_pair *p, size_t np, int pass, int round, int of)
{
	double start = clock_now(), deadline = start + links_round_budget(&R->ctx) + 10;
	char desc[96];
	snprintf(desc, sizeof(desc), "the %s pass's round %d of %d", pass == 1 ? "first" : "second", round + 1, of);
	job_phase(R->cl, desc, deadline);
	links_expect(&R->ctx, R->want, R->left, p, np, pass);
	for (size_t i = 0; i < np; i++)
		if (p[i].a == R->me || p[i].b == R->me) {
			links_meet(&R->ctx, p[i].a == R->me ? p[i].b : p[i].a, pass, round, &R->mine);
			break;
		}
	_cleanup_free_ char *err = NULL;
	int r = job_barrier(R->cl, deadline + 10, &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	job_phase_done(R->cl);
	R->round_no++;
	if (R->progress)
		links_write_progress(stderr, R->round_no, R->rounds_est, clock_now() - R->t0, false);
}

/* --rounds' seed (--seed, else drawn) and the data connections' nonce: rank 0's, to every rank. */
static uint64_t agree_seed(struct run *R)
{
	uint64_t v[2] = { R->env->set->cluster.seed, R->me == 0 ? links_draw_nonce() : 0 };
	v[0] = !v[0] && R->me == 0 ? links_draw_seed() : v[0];
	_cleanup_free_ char *err = NULL;
	int r = job_bcast(R->cl, v, sizeof(v), clock_now() + EXCHANGE_S, &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	R->nonce = R->ctx.nonce = v[1];
	return v[0];
}

/* The first pass: every pair (circle method) or --rounds K matchings. */
static void first_pass(struct run *R, int rounds, bool sampled, uint64_t seed, size_t *pairs)
{
	struct sched_pair *p = xcalloc((size_t)R->n / 2 + 1, sizeof(*p));
	int *perm = xcalloc((size_t)R->n + 1, sizeof(int)), rest;
	for (int r = 0; r < rounds; r++) {
		int k = sampled ? sched_random_round(R->n, seed, r, perm, p, &rest) : sched_circle_round(R->n, r, p, &rest);
		*pairs += k > 0 ? (size_t)k : 0;
		run_round(R, p, k > 0 ? (size_t)k : 0, 1, r, rounds);
	}
	free(p);
	free(perm);
}

/* Every rank's results to rank 0 (into *m); the others' mine is emptied.
 * Rank 0: 0, or EXIT_STALLED after naming a rank that sent none. */
static int gather_results(struct run *R, int pass, struct links_meas **m, size_t *nm)
{
	_cleanup_free_ char *err = NULL;
	struct job_part *parts = R->me == 0 ? xcalloc((size_t)R->n, sizeof(*parts)) : NULL;
	int r = job_gatherv(R->cl, R->mine.buf ? R->mine.buf : "", R->mine.len, parts, clock_now() + EXCHANGE_S, &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	strbuf_reset(&R->mine);
	int ret = 0;
	for (int p = 0; R->me == 0 && p < R->n; p++) {
		struct job_part *x = &parts[p];
		if (!x->buf) {
			char who[160];
			job_describe(R->cl, p, who, sizeof(who));
			session_error(R->ss, "%s sent no results: %s", who, x->err ? x->err : "nothing");
			ret = EXIT_STALLED;
		} else {
			x->buf = xreallocarray(x->buf, x->len + 1, 1);
			size_t first = *nm, bad = links_parse_part(p, R->n, x->buf, x->len, m, nm);
			bad += R->left ? links_keep_rails(*m, first, nm, R->n, pass, R->want, R->left)
				       : links_keep_scheduled(*m, first, nm, R->n, pass, R->want);
			if (bad)
				session_error(R->ss, "%zu line%s of %s's results made no sense: left out", bad,
					      bad == 1 ? "" : "s", R->nodes[p].name);
		}
		free(x->buf);
		free(x->err);
	}
	if (R->me == 0)
		links_add_missing(m, nm, R->n, pass, R->want, R->left);
	free(parts);
	return ret;
}

/* Rank 0's plan for the second pass (or the code to stop with) to every
 * rank: a header {code, rounds, pairs}, then the round starts and the
 * pairs. The others' *out is filled from it. Returns the code. */
static int share_plan(struct run *R, int code, struct links_rounds *out)
{
	_cleanup_free_ char *err = NULL;
	if (R->me == 0 && out->n_pairs > LINKS_PLAN_MAX(R->n))
		links_rounds_free(out); /* cannot be: links_second_pass bounds it */
	int32_t h[3] = { code, out->n_rounds, (int32_t)out->n_pairs };
	int r = job_bcast(R->cl, h, sizeof(h), clock_now() + EXCHANGE_S, &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	if (h[0] || h[1] <= 0 || h[2] <= 0 || h[1] > h[2] || (size_t)h[2] > LINKS_PLAN_MAX(R->n))
		return h[0];
	size_t len = links_plan_len(h[1], h[2]);
	int32_t *v = R->me == 0 ? links_plan_encode(out) : xcalloc(len, sizeof(*v));
	if ((r = job_bcast(R->cl, v, len * sizeof(*v), clock_now() + EXCHANGE_S, &err)) < 0)
		session_fail(R->ss, err, r);
	if (R->me != 0)
		links_plan_decode(v, h[1], h[2], R->n, out);
	free(v);
	return 0;
}

/* The second pass's rounds, as rank 0 planned them. */
static void second_pass(struct run *R, const struct links_rounds *p)
{
	R->rounds_est = R->round_no + p->n_rounds;
	for (int r = 0; r < p->n_rounds; r++) {
		size_t s = p->start[r], e = p->start[r + 1] < p->n_pairs ? p->start[r + 1] : p->n_pairs;
		run_round(R, p->pairs + (s < e ? s : e), s < e ? e - s : 0, 2, r, p->n_rounds);
	}
}

/* Rank 0: the verdicts and the output, a block per rail; the exit code. */
static int report(struct run *R, struct links_report *rep, struct links_meas *m, size_t nm,
		  const struct links_blocks *b)
{
	struct settings *set = R->env->set;
	rep->elapsed = clock_now() - R->t0;
	_cleanup_fclose_ FILE *svg = set->cluster.svg && R->n <= LINKS_SVG_MAX ? fopen(set->cluster.svg, "w") : NULL;
	if (set->cluster.svg && R->n > LINKS_SVG_MAX)
		session_error(R->ss, "--svg: no heat map above %d nodes (--json has the matrix)", LINKS_SVG_MAX);
	else if (set->cluster.svg && !svg)
		session_error(R->ss, "cannot write %s: %s", set->cluster.svg, strerror(errno));
	int ret = links_blocks_write(b, rep, m, nm, set->json, stdout, svg);
	return ret < 0 || (set->cluster.svg && R->n <= LINKS_SVG_MAX && !svg) ? EXIT_TOOL_ERROR : ret;
}

/* Both passes and, on rank 0, the report; the exit code. */
static int links_run(struct run *R)
{
	struct settings *set = R->env->set;
	bool sampled = set->cluster.rounds > 0;
	uint64_t seed = agree_seed(R);
	int rounds = sampled ? set->cluster.rounds : sched_rounds(R->n);
	struct links_report rep = { .n = R->n, .nodes = R->nodes, .rounds = rounds, .sampled = sampled,
				    .seed = seed, .duration = R->duration };
	R->rounds_est = rounds;
	first_pass(R, rounds, sampled, seed, &rep.pairs);
	struct links_meas *m = NULL;
	size_t nm = 0;
	struct links_blocks b = { 0 };
	struct links_suspects s = { 0 };
	struct links_rounds plan = { 0 };
	int code = gather_results(R, 1, &m, &nm);
	if (R->me == 0 && !code) {
		links_blocks_first(R->n, R->mode, m, nm, set->cluster.expect_gbps, &b, &s);
		links_second_pass(&s, &plan);
	}
	if (!(code = share_plan(R, code, &plan)) && plan.n_rounds) {
		second_pass(R, &plan);
		code = gather_results(R, 2, &m, &nm);
	}
	if (R->progress)
		links_write_progress(stderr, R->round_no, R->rounds_est, clock_now() - R->t0, true);
	rep.rounds2 = plan.n_rounds, rep.pairs2 = plan.n_pairs;
	if (R->me == 0 && !code)
		code = report(R, &rep, m, nm, &b);
	for (size_t i = 0; i < nm; i++)
		free(m[i].err);
	free(m);
	links_rounds_free(&plan);
	links_suspects_free(&s);
	links_blocks_free(&b);
	return code;
}

int cmd_cluster_links(struct cmd_env *env)
{
	struct session ss;
	int ret = cluster_job_open(env, &ss, "cluster links", NULL, 1);
	if (ret)
		return ret;
	struct run R = { .env = env, .ss = &ss, .cl = ss.cl, .me = ss.proc, .n = ss.nprocs, .lfd = -1, .rlfd = -1,
			 .mode = links_rail_mode_parse(env->set->cluster.rail), .duration = env->set->cluster.duration,
			 .t0 = clock_now(), .mine = STRBUF_INIT };
	R.progress = R.me == 0 && isatty(STDERR_FILENO);
	R.want = R.me == 0 ? xcalloc((size_t)R.n * (size_t)R.n, 1) : NULL;
	R.left = R.me == 0 && R.mode & LINKS_MEASURE_RDMA ? xcalloc((size_t)R.n * (size_t)R.n, sizeof(uint32_t)) : NULL;
	struct links_node me;
	ret = my_node(&R, &me);
	/* every rank learns whether all have a listener before anyone waits on one */
	double ok = ret ? 0 : 1;
	_cleanup_free_ char *err = NULL;
	int r = job_allreduce_f64(R.cl, &ok, 1, JOB_MIN, clock_now() + EXCHANGE_S, &err);
	if (r < 0)
		session_fail(&ss, err, r);
	if (ok < 1) {
		ret = EXIT_TOOL_ERROR;
	} else {
		exchange_nodes(&R, &me);
		ret = links_run(&R);
	}
	if (R.lfd >= 0)
		close(R.lfd);
	if (R.rlfd >= 0)
		close(R.rlfd);
	free(R.left);
	free(R.nodes);
	free(R.want);
	strbuf_release(&R.mine);
	return session_close(&ss, ret);
}
