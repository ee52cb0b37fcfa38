/* Times `gpuready cluster links`' pure parts for N nodes (default 4,096):
 * the circle schedule (every round, as each rank computes it, checked
 * complete and disjoint), 40 seeded random rounds, then rank 0's side of a
 * full run: every rank's results as the text lines they send, parsed
 * (links_parse_part), the statistics, the suspects, the second pass's
 * rounds, its results, the verdicts, and the JSON and text reports written
 * to /dev/null. The fabric: 94 Gb/s with ±2% noise, node 17 at a tenth
 * (a bad node), the pair 100-200 at a tenth (a bad path). Prints the time
 * of each step and the verdicts. Built and run by
 * perf/cluster-links-schedule.sh. */
#include "cluster/links.h"
#include "cluster/links_render.h"
#include "cluster/links_wire.h"
#include "cluster/schedule.h"
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double rate(int from, int to, int pass)
{
	(void)pass;
	uint64_t x = (uint64_t)from * 1000003u + (uint64_t)to;
	double r = 94.0 * (1.0 + ((double)(sched_splitmix64(&x) % 4001) - 2000.0) / 100000.0);
	if (from == 17 || to == 17 || (from == 100 && to == 200) || (from == 200 && to == 100))
		r /= 10;
	return r;
}

/* Every round of the circle method, as all ranks compute it; 1 when some
 * pair is missing or repeated. */
static int schedule(int n, double *t)
{
	double t0 = now();
	unsigned char *seen = calloc((size_t)n * (size_t)n, 1);
	struct sched_pair *p = calloc((size_t)n / 2 + 1, sizeof(*p));
	int rounds = sched_rounds(n), rest, bad = 0;
	size_t pairs = 0;
	for (int r = 0; r < rounds; r++) {
		int k = sched_circle_round(n, r, p, &rest);
		for (int i = 0; i < k; i++, pairs++)
			bad |= seen[(size_t)p[i].a * (size_t)n + (size_t)p[i].b]++;
	}
	*t = now() - t0;
	free(seen);
	free(p);
	return bad || pairs != (size_t)n * (size_t)(n - 1) / 2;
}

/* What rank `to` sends after a pass: one line per pair it received. */
static void part_of(int to, int n, int pass, const struct sched_pair *only, size_t n_only, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (!only) {
		for (int from = 0; from < n; from++)
			if (from != to)
				links_part_line(sb, from, pass, rate(from, to, pass), NULL);
		return;
	}
	for (size_t i = 0; i < n_only; i++)
		if (only[i].a == to || only[i].b == to) {
			int from = only[i].a == to ? only[i].b : only[i].a;
			links_part_line(sb, from, pass, rate(from, to, pass), NULL);
		}
}

static void gather(int n, int pass, const struct sched_pair *only, size_t n_only, struct links_meas **m, size_t *nm)
{
	struct strbuf sb = STRBUF_INIT;
	for (int to = 0; to < n; to++) {
		part_of(to, n, pass, only, n_only, &sb);
		strbuf_grow(&sb, 1);
		links_parse_part(to, n, sb.buf ? sb.buf : (char[1]){ 0 }, sb.len, m, nm);
	}
	strbuf_release(&sb);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4096;
	double t, t0;
	if (n < 2) {
		fprintf(stderr, "usage: cluster-links-schedule [N >= 2]\n");
		return 2;
	}
	int bad = schedule(n, &t);
	printf("schedule: %d rounds for %d nodes (every pair once: %s): %.3f s\n", sched_rounds(n), n,
	       bad ? "NO" : "yes", t);
	t0 = now();
	int *perm = calloc((size_t)n, sizeof(int));
	struct sched_pair *p = calloc((size_t)n / 2 + 1, sizeof(*p));
	int rest;
	for (int r = 0; r < 40; r++)
		sched_random_round(n, 12345, r, perm, p, &rest);
	printf("--rounds 40: %.3f s\n", now() - t0);
	free(perm);
	free(p);

	struct links_meas *m = NULL;
	size_t nm = 0;
	t0 = now();
	gather(n, 1, NULL, 0, &m, &nm);
	printf("first pass: %zu results written and parsed: %.3f s\n", nm, now() - t0);
	struct links_stats st;
	struct links_suspects s;
	struct links_rounds plan;
	t0 = now();
	links_stats_compute(m, nm, 0, &st);
	links_find_suspects(n, m, nm, &st, &s);
	links_second_pass(&s, &plan);
	printf("statistics, suspects, second-pass plan (%zu pairs in %d rounds): %.3f s\n", plan.n_pairs,
	       plan.n_rounds, now() - t0);
	t0 = now();
	gather(n, 2, plan.pairs, plan.n_pairs, &m, &nm);
	struct links_verdict *v;
	size_t nv;
	links_classify(n, m, nm, &st, &s, &v, &nv);
	printf("second pass parsed, verdicts: %.3f s\n", now() - t0);
	for (size_t i = 0; i < nv; i++)
		printf("  %s %d %d\n", links_kind_name(v[i].kind), v[i].a, v[i].b);
	struct links_node *nodes = calloc((size_t)n, sizeof(*nodes));
	for (int i = 0; i < n; i++) {
		snprintf(nodes[i].name, sizeof(nodes[i].name), "node%04d", i);
		snprintf(nodes[i].addr, sizeof(nodes[i].addr), "10.%d.%d.1", i / 256, i % 256);
	}
	struct links_report rep = { .n = n, .nodes = nodes, .m = m, .n_m = nm, .st = &st, .v = v, .n_v = nv,
				    .rounds = sched_rounds(n), .rounds2 = plan.n_rounds, .pairs2 = plan.n_pairs,
				    .duration = 2 };
	FILE *null = fopen("/dev/null", "w");
	t0 = now();
	links_write_json(&rep, null);
	printf("JSON report: %.3f s\n", now() - t0);
	t0 = now();
	links_write_text(&rep, null);
	printf("text report: %.3f s\n", now() - t0);
	fclose(null);
	for (size_t i = 0; i < nm; i++)
		free(m[i].err);
	free(m);
	free(v);
	free(nodes);
	links_rounds_free(&plan);
	links_suspects_free(&s);
	return bad;
}
