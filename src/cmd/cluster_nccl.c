/* `gpuready cluster nccl` (docs/cluster.md, "cluster nccl"): one process
 * per node under a launcher, as `cluster check`, with the collective
 * benchmark's backend (NCCL on the node's GPUs, MPI, or the socket
 * backend). All nodes run all_reduce; when its bus bandwidth is below
 * --expect-busbw (or none is given) the job's communicator is split into
 * halves, then into rounds of node pairs (ring forced), then every suspect
 * is paired with known-good nodes, each stage measured in every group at
 * once (cluster/ncclmeas.c). Rank 0 gathers each stage's parts, finds the
 * slow nodes and paths with cluster links' analysis (cluster/links.c) and
 * prints (cluster/ncclsplit.c). */
#define _GNU_SOURCE
#include "cmd.h"
#include "cluster/links_pair.h"
#include "cluster/links_wire.h"
#include "cluster/ncclmeas.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EXCHANGE_S 120.0 /* seconds for an exchange of the control plane */

struct run {
	struct cmd_env *env;
	struct session *ss;
	struct ncs_meas M;
	int me, n, local;
	int *color;
	struct links_node *nodes;        /* rank 0: every node's */
	struct ncs_group *g;             /* rank 0: every group measured */
	size_t ng;
	double until;                    /* the exchanges after a stage wait for its slowest group until then */
};

/* An exchange's deadline: the others may still be in their groups. */
static double exchange_by(const struct run *R)
{
	double d = clock_now() + EXCHANGE_S;
	return d > R->until ? d : R->until;
}

/* This node: its name, the address it reaches rank 0 from (the socket
 * backend's groups listen there) and the interface holding it. */
static int my_node(struct run *R, struct links_node *me)
{
	struct session *ss = R->ss;
	_cleanup_free_ char *name = cluster_job_node_name(R->env, R->me), *err = NULL;
	_cleanup_free_ char *local = tcp_local_addresses();
	local[strcspn(local, ",")] = 0;
	const char *master = ss->have_launch && ss->launch.master_host ? ss->launch.master_host : local;
	*me = (struct links_node){ 0 };
	snprintf(me->name, sizeof(me->name), "%s", name);
	if (links_route_address(master, me->addr, sizeof(me->addr), me->ifname, sizeof(me->ifname), &err) < 0) {
		session_error(ss, "no route towards rank 0 (%s): %s", master, err);
		return -1;
	}
	links_mellanox_device(me->ifname, me->rdma, sizeof(me->rdma));
	return 0;
}

static void gather_nodes(struct run *R, const struct links_node *me)
{
	_cleanup_free_ char *err = NULL;
	R->nodes = R->me == 0 ? xcalloc((size_t)R->n, sizeof(*R->nodes)) : NULL;
	int r = job_gather(R->ss->cl, me, sizeof(*me), R->nodes, clock_now() + EXCHANGE_S, &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	if (R->me == 0)
		links_nodes_clean(R->nodes, R->n), links_nodes_check(R->ss, R->nodes, R->n);
}

/* One stage on every process; rank 0 collects its groups. */
static void stage(struct run *R, enum ncs_stage st, int round, bool split)
{
	char desc[96];
	snprintf(desc, sizeof(desc), "cluster nccl's %s%s", ncs_stage_name(st), st >= NCS_PAIRS ? " round" : "");
	if (st >= NCS_PAIRS)
		snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc), " %d", round + 1);
	struct ncs_part mine;
	R->until = clock_now() + ncs_stage_budget(&R->M) + EXCHANGE_S;
	ncs_measure(&R->M, desc, R->color[R->me], split, st >= NCS_PAIRS, &mine);
	_cleanup_free_ struct ncs_part *all = R->me == 0 ? xcalloc((size_t)R->n, sizeof(*all)) : NULL;
	_cleanup_free_ char *err = NULL;
	int r = job_gather(R->ss->cl, &mine, sizeof(mine), all, exchange_by(R), &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	if (R->me == 0)
		ncs_collect(st, round, R->color, R->n, R->local, R->M.bytes, all, R->nodes, &R->g, &R->ng);
}

/* Rank 0's decision to every rank: split or not. */
static bool agree_split(struct run *R, double expect)
{
	double v = 1;
	for (size_t i = 0; R->me == 0 && i < R->ng; i++)
		if (R->g[i].stage == NCS_ALL && expect > 0 && R->g[i].busbw >= expect)
			v = 0;
	_cleanup_free_ char *err = NULL;
	int r = job_bcast(R->ss->cl, &v, sizeof(v), exchange_by(R), &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	return v != 0;
}

/* The halves and the first rounds of the circle schedule. */
static void halves_and_pairs(struct run *R, int rounds)
{
	if (ncs_colors_halves(R->n, R->color))
		stage(R, NCS_HALVES, 0, true);
	struct sched_pair *p = xcalloc((size_t)R->n / 2 + 1, sizeof(*p));
	int rest;
	for (int r = 0; r < rounds; r++) {
		int k = sched_circle_round(R->n, r, p, &rest);
		ncs_colors_pairs(R->n, p, k > 0 ? (size_t)k : 0, R->color);
		stage(R, NCS_PAIRS, r, true);
	}
	free(p);
}

/* Rank 0's recheck plan to every rank (as cluster links' second pass). */
static void share_plan(struct run *R, struct links_rounds *plan)
{
	_cleanup_free_ char *err = NULL;
	if (R->me == 0 && plan->n_pairs > LINKS_PLAN_MAX(R->n))
		links_rounds_free(plan); /* cannot be: links_second_pass bounds it */
	int32_t h[2] = { plan->n_rounds, (int32_t)plan->n_pairs };
	int r = job_bcast(R->ss->cl, h, sizeof(h), exchange_by(R), &err);
	if (r < 0)
		session_fail(R->ss, err, r);
	if (h[0] <= 0 || h[1] <= 0 || h[0] > h[1] || (size_t)h[1] > LINKS_PLAN_MAX(R->n))
		return;
	size_t len = links_plan_len(h[0], h[1]);
	int32_t *v = R->me == 0 ? links_plan_encode(plan) : xcalloc(len, sizeof(*v));
	if ((r = job_bcast(R->ss->cl, v, len * sizeof(*v), exchange_by(R), &err)) < 0)
		session_fail(R->ss, err, r);
	if (R->me != 0)
		links_plan_decode(v, h[0], h[1], R->n, plan);
	free(v);
}

static void recheck(struct run *R, const struct links_rounds *plan)
{
	for (int r = 0; r < plan->n_rounds; r++) {
		size_t s = plan->start[r], e = plan->start[r + 1] < plan->n_pairs ? plan->start[r + 1] : plan->n_pairs;
		ncs_colors_pairs(R->n, plan->pairs + (s < e ? s : e), s < e ? e - s : 0, R->color);
		stage(R, NCS_RECHECK, r, true);
	}
}

/* Every stage; on rank 0 the report. The exit code. */
static int nccl_run(struct run *R, double t0)
{
	struct settings *set = R->env->set;
	struct ncs_report rep = { .n = R->n, .local = R->local, .nodes = R->nodes, .backend = R->ss->b->ops->name,
				  .library = !strcmp(R->ss->b->ops->name, "socket") ? "gpuready TCP: rings of direct connections"
										    : R->ss->b->ops->version(R->ss->b),
				  .bytes = R->M.bytes,
				  .iters = R->M.iters, .expect = set->expect_busbw };
	struct links_meas *m = NULL;
	size_t nm = 0;
	struct links_stats st = { 0 };
	struct links_suspects s = { 0 };
	struct links_rounds plan = { 0 };
	struct links_verdict *v = NULL;
	ncs_colors_all(R->n, R->color);
	/* the socket backend's own collectives go through rank 0: its groups, a
	 * ring of all nodes here too, measure the links between the nodes */
	stage(R, NCS_ALL, 0, !strcmp(R->ss->b->ops->name, "socket"));
	if ((rep.split = agree_split(R, set->expect_busbw))) {
		int rounds = sched_rounds(R->n) < set->cluster.pair_rounds ? sched_rounds(R->n) : set->cluster.pair_rounds;
		halves_and_pairs(R, rounds);
		if (R->me == 0) {
			ncs_pairs_meas(R->g, R->ng, NCS_PAIRS, 1, &m, &nm);
			links_stats_compute(m, nm, set->expect_busbw, &st);
			links_find_suspects(R->n, m, nm, &st, &s);
			links_second_pass(&s, &plan);
		}
		share_plan(R, &plan);
		recheck(R, &plan);
		if (R->me == 0) {
			ncs_pairs_meas(R->g, R->ng, NCS_RECHECK, 2, &m, &nm);
			links_classify(R->n, m, nm, &st, &s, &v, &rep.nv);
			rep.st = &st, rep.v = v;
		}
	}
	int code = 0;
	if (R->me == 0) {
		rep.g = R->g, rep.ng = R->ng, rep.elapsed = clock_now() - t0;
		code = ncs_exit_code(&rep);
		if ((set->json ? ncs_write_json(&rep, stdout) : ncs_write_text(&rep, stdout)) < 0)
			code = EXIT_TOOL_ERROR;
	}
	free(v);
	free(m);
	links_rounds_free(&plan);
	links_suspects_free(&s);
	return code;
}

int cmd_cluster_nccl(struct cmd_env *env)
{
	struct settings *set = env->set;
	const char *backend = set->backend ? set->backend : "nccl";
	int local = !strcmp(backend, "nccl") ? set->bench.ngpus : 1;
	if (strcmp(backend, "nccl") && strcmp(backend, "mpi") && strcmp(backend, "socket")) {
		fprintf(stderr, "%s: --backend %s: nccl, mpi or socket\n", env->progname, backend);
		return EXIT_TOOL_ERROR;
	}
	if (local != set->bench.ngpus) {
		fprintf(stderr, "%s: -g %d needs --backend nccl (the %s backend runs one rank per node)\n", env->progname,
			set->bench.ngpus, backend);
		return EXIT_TOOL_ERROR;
	}
	struct session ss;
	double t0 = clock_now();
	int ret = cluster_job_open(env, &ss, "cluster nccl", backend, local);
	if (ret)
		return ret;
	uint64_t bytes = set->cluster.size ? set->cluster.size : !strcmp(backend, "nccl") ? 1ull << 30 : 64ull << 20;
	bytes = bytes < 4 ? 4 : bytes - bytes % 4; /* float elements */
	struct run R = { .env = env, .ss = &ss, .me = ss.proc, .n = ss.nprocs, .local = local,
			 .M = { .ss = &ss, .bytes = bytes, .iters = set->bench.iters, .warmup = set->bench.warmup,
				.timeout = set->bench.timeout > 0 ? set->bench.timeout
								  : 60.0 + (double)(set->bench.warmup + set->bench.iters) *
									   (double)bytes * 2 / 1e8 } };
	R.color = xcalloc((size_t)R.n, sizeof(int));
	struct links_node me;
	double ok = R.n >= 2 && my_node(&R, &me) == 0;
	if (R.n < 2)
		session_error(&ss, "it compares nodes: two or more");
	_cleanup_free_ char *err = NULL;
	int r = job_allreduce_f64(ss.cl, &ok, 1, JOB_MIN, clock_now() + EXCHANGE_S, &err);
	if (r < 0)
		session_fail(&ss, err, r);
	if (ok < 1) {
		ret = EXIT_TOOL_ERROR;
	} else {
		R.M.addr = me.addr;
		gather_nodes(&R, &me);
		ret = nccl_run(&R, t0);
	}
	ncs_groups_free(R.g, R.ng);
	free(R.nodes);
	free(R.color);
	return session_close(&ss, ret);
}
