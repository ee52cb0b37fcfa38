/* Times `gpuready cluster nccl`'s rank-0 side for N nodes (default 4,096):
 * every stage's parts as the ranks send them (all, halves, three rounds of
 * the circle schedule, the recheck rounds), collected into groups
 * (ncs_collect), the pairs' statistics, suspects and recheck plan, the
 * verdicts, and the text and JSON reports written to /dev/null. The
 * fabric: pairs at 45 GB/s bus bandwidth with +-2% noise, node 17 at a
 * tenth (a bad node). Prints the time of each step and the verdicts.
 * Built and run by perf/cluster-nccl-aggregate.sh. */
#include "cluster/links.h"
#include "cluster/ncclsplit.h"
#include "cluster/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES (1ull << 30)
#define LOCAL 8

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The time a group of these colours takes: its slowest member's. */
static void parts_of(int n, const int *color, struct ncs_part *parts)
{
	for (int i = 0; i < n; i++) {
		uint64_t x = (uint64_t)i * 1000003u + (uint64_t)color[i];
		double busbw = 45.0 * (1.0 + ((double)(sched_splitmix64(&x) % 4001) - 2000.0) / 100000.0);
		int ranks = 0;
		for (int j = 0; j < n; j++)
			ranks += color[j] == color[i] && color[i] >= 0;
		bool slow = false;
		for (int j = 0; j < n && color[i] >= 0; j++)
			slow |= j == 17 && color[j] == color[i];
		ranks *= LOCAL;
		double r = ranks;
		parts[i] = (struct ncs_part){ .color = color[i], .ranks = ranks,
					      .seconds = (double)BYTES / (busbw * (slow ? 0.1 : 1) * 1e9) * 2 * (r - 1) / r };
	}
}

static void stage(int n, enum ncs_stage st, int round, const int *color, const struct links_node *nodes,
		  struct ncs_group **g, size_t *ng, double *t_parts, double *t_collect)
{
	struct ncs_part *parts = calloc((size_t)n, sizeof(*parts));
	double t0 = now();
	parts_of(n, color, parts);
	double t1 = now();
	ncs_collect(st, round, color, n, LOCAL, BYTES, parts, nodes, g, ng);
	*t_parts += t1 - t0, *t_collect += now() - t1;
	free(parts);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4096;
	struct links_node *nodes = calloc((size_t)n, sizeof(*nodes));
	int *color = calloc((size_t)n, sizeof(int));
	struct sched_pair *p = calloc((size_t)n / 2 + 1, sizeof(*p));
	for (int i = 0; i < n; i++)
		snprintf(nodes[i].name, sizeof(nodes[i].name), "node%04d", i + 1);
	struct ncs_group *g = NULL;
	size_t ng = 0;
	double tp = 0, tc = 0, t0 = now();
	int rest;
	ncs_colors_all(n, color);
	stage(n, NCS_ALL, 0, color, nodes, &g, &ng, &tp, &tc);
	ncs_colors_halves(n, color);
	stage(n, NCS_HALVES, 0, color, nodes, &g, &ng, &tp, &tc);
	for (int r = 0; r < 3; r++) {
		int k = sched_circle_round(n, r, p, &rest);
		ncs_colors_pairs(n, p, (size_t)k, color);
		stage(n, NCS_PAIRS, r, color, nodes, &g, &ng, &tp, &tc);
	}
	double t1 = now();
	struct links_meas *m = NULL;
	size_t nm = 0;
	struct links_stats st = { 0 };
	struct links_suspects s = { 0 };
	struct links_rounds plan = { 0 };
	ncs_pairs_meas(g, ng, NCS_PAIRS, 1, &m, &nm);
	links_stats_compute(m, nm, 0, &st);
	links_find_suspects(n, m, nm, &st, &s);
	links_second_pass(&s, &plan);
	double t2 = now();
	for (int r = 0; r < plan.n_rounds; r++) {
		size_t a = plan.start[r], e = plan.start[r + 1] < plan.n_pairs ? plan.start[r + 1] : plan.n_pairs;
		ncs_colors_pairs(n, plan.pairs + a, e - a, color);
		stage(n, NCS_RECHECK, r, color, nodes, &g, &ng, &tp, &tc);
	}
	double t3 = now();
	struct links_verdict *v = NULL;
	size_t nv = 0;
	ncs_pairs_meas(g, ng, NCS_RECHECK, 2, &m, &nm);
	links_classify(n, m, nm, &st, &s, &v, &nv);
	struct ncs_report rep = { .n = n, .local = LOCAL, .nodes = nodes, .backend = "nccl", .library = "NCCL (simulated)",
				  .bytes = BYTES, .iters = 20, .g = g, .ng = ng, .st = &st, .v = v, .nv = nv, .split = true };
	double t4 = now();
	FILE *f = fopen("/dev/null", "w");
	ncs_write_text(&rep, f);
	double t5 = now();
	ncs_write_json(&rep, f);
	fclose(f);
	double t6 = now();
	printf("%d nodes x %d GPUs: %zu groups in %d stages (%d recheck rounds)\n", n, LOCAL, ng, 5 + plan.n_rounds,
	       plan.n_rounds);
	printf("  the ranks' parts made:        %.3f s (simulated, not rank 0's work)\n", tp);
	printf("  groups collected on rank 0:   %.3f s\n", tc);
	printf("  statistics, suspects, plan:   %.3f s\n", t2 - t1);
	printf("  verdicts:                     %.3f s\n", t4 - t3);
	printf("  text report:                  %.3f s\n", t5 - t4);
	printf("  JSON report:                  %.3f s\n", t6 - t5);
	printf("  all:                          %.3f s\n", t6 - t0);
	for (size_t i = 0; i < nv; i++)
		printf("  verdict: %s %s%s%s\n", links_kind_name(v[i].kind), nodes[v[i].a].name, v[i].b >= 0 ? " " : "",
		       v[i].b >= 0 ? nodes[v[i].b].name : "");
	return nv == 1 && v[0].kind == LINKS_BAD_NODE && v[0].a == 17 ? 0 : 1;
}
