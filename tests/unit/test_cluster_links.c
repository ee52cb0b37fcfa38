/* Unit tests for `gpuready cluster links` (src/cluster/schedule.c,
 * src/cluster/links.c): the circle method covers every pair exactly once
 * in disjoint rounds (every N up to 512, and 4,095 and 4,096), odd N rest
 * one node per round, --rounds is reproducible from its seed; the
 * analysis on synthetic matrices (a slow node, a slow pair, noise, failed
 * pairs, an expectation the whole fleet misses). */
#define _GNU_SOURCE
#include "testutil.h"
#include "cluster/links.h"
#include "cluster/links_rails.h"
#include "cluster/links_wire.h"
#include "cluster/schedule.h"
#include "core/strbuf.h"

#include <math.h>

#define RAILS_H100 "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every round of the circle method for n nodes: n/2 disjoint pairs, the
 * resting node (odd n) in none; every pair exactly once over the rounds. */
static void check_circle(int n)
{
	int rounds = sched_rounds(n);
	assert_int_equal(rounds, n < 2 ? 0 : n % 2 ? n : n - 1);
	unsigned char *seen = calloc((size_t)n * (size_t)n + 1, 1);
	int *round_of = malloc(sizeof(int) * (size_t)(n + 1));
	struct sched_pair *p = malloc(sizeof(*p) * (size_t)(n / 2 + 1));
	int *rested = calloc((size_t)n + 1, sizeof(int));
	for (int i = 0; i < n; i++)
		round_of[i] = -1;
	for (int r = 0; r < rounds; r++) {
		int rest, k = sched_circle_round(n, r, p, &rest);
		assert_int_equal(k, n / 2);
		if (n % 2) {
			assert_true(rest >= 0 && rest < n);
			assert_int_not_equal(round_of[rest], r);
			round_of[rest] = r;
			rested[rest]++;
		} else {
			assert_int_equal(rest, -1);
		}
		for (int i = 0; i < k; i++) {
			assert_true(p[i].a >= 0 && p[i].a < p[i].b && p[i].b < n);
			assert_int_not_equal(round_of[p[i].a], r); /* disjoint within the round */
			assert_int_not_equal(round_of[p[i].b], r);
			round_of[p[i].a] = round_of[p[i].b] = r;
			size_t at = (size_t)p[i].a * (size_t)n + (size_t)p[i].b;
			assert_int_equal(seen[at], 0); /* no pair twice */
			seen[at] = 1;
		}
	}
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (!seen[(size_t)a * (size_t)n + (size_t)b]) {
				fprintf(stderr, "n=%d: pair %d-%d never meets\n", n, a, b);
				fail();
			}
	for (int i = 0; n % 2 && n > 1 && i < n; i++)
		assert_int_equal(rested[i], 1); /* odd n: each node rests exactly once */
	int rest;
	assert_int_equal(sched_circle_round(n, rounds, p, &rest), -1);
	assert_int_equal(sched_circle_round(n, -1, p, &rest), -1);
	free(seen);
	free(round_of);
	free(p);
	free(rested);
}

static void test_circle_all_small(void **state)
{
	(void)state;
	for (int n = 1; n <= 512; n++)
		check_circle(n);
}

static void test_circle_large(void **state)
{
	(void)state;
	check_circle(4095);
	check_circle(4096);
}

static void test_circle_edges(void **state)
{
	(void)state;
	struct sched_pair p[2];
	int rest;
	assert_int_equal(sched_rounds(0), 0);
	assert_int_equal(sched_rounds(1), 0);
	assert_int_equal(sched_circle_round(1, 0, p, &rest), -1);
	assert_int_equal(rest, -1);
	/* two nodes: one round, one pair */
	assert_int_equal(sched_rounds(2), 1);
	assert_int_equal(sched_circle_round(2, 0, p, &rest), 1);
	assert_int_equal(p[0].a, 0);
	assert_int_equal(p[0].b, 1);
	assert_int_equal(rest, -1);
	/* three nodes: three rounds of one pair, each node rests once */
	assert_int_equal(sched_rounds(3), 3);
	int rests = 0;
	for (int r = 0; r < 3; r++) {
		assert_int_equal(sched_circle_round(3, r, p, &rest), 1);
		assert_true(rest >= 0 && rest < 3 && rest != p[0].a && rest != p[0].b);
		rests |= 1 << rest;
	}
	assert_int_equal(rests, 7);
}

/* --rounds K: perfect matchings (odd n: one rests), the same for the same
 * seed, different for another seed. */
static void test_random_rounds(void **state)
{
	(void)state;
	int sizes[] = { 2, 3, 5, 8, 64, 101, 4096 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s];
		int *perm = malloc(sizeof(int) * (size_t)n), *used = calloc((size_t)n, sizeof(int));
		struct sched_pair *p = malloc(sizeof(*p) * (size_t)n), *q = malloc(sizeof(*q) * (size_t)n);
		bool differ = false;
		for (int r = 0; r < 4; r++) {
			int rest, rest2, k = sched_random_round(n, 12345, r, perm, p, &rest);
			assert_int_equal(k, n / 2);
			assert_int_equal(rest >= 0, n % 2 == 1);
			for (int i = 0; i < k; i++) {
				assert_true(p[i].a < p[i].b && p[i].a >= 0 && p[i].b < n);
				assert_int_not_equal(used[p[i].a], r + 1);
				assert_int_not_equal(used[p[i].b], r + 1);
				used[p[i].a] = used[p[i].b] = r + 1;
			}
			if (rest >= 0)
				assert_int_not_equal(used[rest], r + 1);
			/* reproducible */
			assert_int_equal(sched_random_round(n, 12345, r, perm, q, &rest2), k);
			assert_int_equal(rest2, rest);
			assert_memory_equal(p, q, sizeof(*p) * (size_t)k);
			/* another seed: another matching (for n > 3 a collision
			 * in all four rounds would be a broken generator) */
			sched_random_round(n, 54321, r, perm, q, &rest2);
			differ |= memcmp(p, q, sizeof(*p) * (size_t)k) != 0;
		}
		if (n > 3)
			assert_true(differ);
		free(perm);
		free(used);
		free(p);
		free(q);
	}
	/* splitmix64's published first outputs for state 0 */
	uint64_t st = 0;
	assert_true(sched_splitmix64(&st) == 0xE220A8397B1DCDAFull);
	assert_true(sched_splitmix64(&st) == 0x6E789E6AA1B965F4ull);
}

/* A synthetic fabric: the rate from -> to in each pass. */
typedef double (*rate_fn)(int from, int to, int pass);

static size_t meas_add(struct links_meas **m, size_t n, int from, int to, int pass, rate_fn f)
{
	*m = realloc(*m, sizeof(**m) * (n + 1));
	double r = f(from, to, pass);
	(*m)[n] = (struct links_meas){ .from = from, .to = to, .pass = pass, .gbps = r,
				       .err = r < 0 ? "connection refused" : NULL };
	return n + 1;
}

/* Both passes as the engine runs them: every pair, then the second pass's
 * rounds (checked disjoint), then the verdicts. */
static size_t run_links(int n, rate_fn f, double expect, struct links_verdict **v, struct links_stats *st)
{
	struct links_meas *m = NULL;
	size_t nm = 0, nv = 0;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			nm = meas_add(&m, nm, a, b, 1, f);
			nm = meas_add(&m, nm, b, a, 1, f);
		}
	links_stats_compute(m, nm, expect, st);
	struct links_suspects s;
	links_find_suspects(n, m, nm, st, &s);
	struct links_rounds r;
	links_second_pass(&s, &r);
	assert_true(r.n_pairs <= LINKS_PLAN_MAX(n));
	for (int k = 0; k < r.n_rounds; k++) {
		unsigned char used[64] = { 0 };
		for (size_t i = r.start[k]; i < r.start[k + 1]; i++) {
			struct sched_pair p = r.pairs[i];
			assert_true(p.a < p.b && !used[p.a] && !used[p.b]);
			used[p.a] = used[p.b] = 1;
			nm = meas_add(&m, nm, p.a, p.b, 2, f);
			nm = meas_add(&m, nm, p.b, p.a, 2, f);
		}
	}
	links_classify(n, m, nm, st, &s, v, &nv);
	links_rounds_free(&r);
	links_suspects_free(&s);
	free(m);
	return nv;
}

/* A little deterministic noise per direction: up to +-2%. */
static double noise(int from, int to)
{
	uint64_t x = (uint64_t)from * 1000003u + (uint64_t)to;
	return 1.0 + ((double)(sched_splitmix64(&x) % 4001) - 2000.0) / 100000.0;
}

static double healthy(int from, int to, int pass)
{
	(void)pass;
	return 94.0 * noise(from, to);
}

static double slow_node(int from, int to, int pass)
{
	(void)pass;
	return from == 3 || to == 3 ? 9.4 * noise(from, to) : healthy(from, to, 1);
}

static double slow_tx(int from, int to, int pass)
{
	(void)pass;
	return from == 6 ? 20.0 : healthy(from, to, 1);
}

static double slow_path(int from, int to, int pass)
{
	(void)pass;
	return (from == 2 && to == 5) || (from == 5 && to == 2) ? 9.4 : healthy(from, to, 1);
}

static double flaky_path(int from, int to, int pass)
{
	return pass == 1 && ((from == 1 && to == 4) || (from == 4 && to == 1)) ? 9.4 : healthy(from, to, 1);
}

static double wide_noise(int from, int to, int pass)
{
	(void)pass;
	uint64_t x = (uint64_t)from * 7919u + (uint64_t)to;
	return 80.0 + (double)(sched_splitmix64(&x) % 1500) / 100.0; /* 80 .. 95 */
}

static double refused(int from, int to, int pass)
{
	(void)pass;
	return from == 0 && to == 7 ? -1 : healthy(from, to, 1);
}

static void test_analysis_healthy(void **state)
{
	(void)state;
	struct links_verdict *v;
	struct links_stats st;
	for (int n = 2; n <= 12; n++) {
		assert_int_equal(run_links(n, healthy, 0, &v, &st), 0);
		assert_true(fabs(st.median - 94.0) < 2.0);
		assert_int_equal(links_exit_code(&st, v, 0), 0);
		free(v);
	}
	/* noise within the MAD: nothing */
	assert_int_equal(run_links(16, wide_noise, 0, &v, &st), 0);
	free(v);
	/* the whole fleet under --expect-gbps: no suspect, but exit 1 */
	assert_int_equal(run_links(8, healthy, 200, &v, &st), 0);
	assert_int_equal(links_exit_code(&st, v, 0), 1);
	free(v);
}

static void test_analysis_bad_node(void **state)
{
	(void)state;
	struct links_verdict *v;
	struct links_stats st;
	int sizes[] = { 5, 6, 8, 9, 30 }; /* from 5: a slow node holds under half the rates */
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t nv = run_links(sizes[k], slow_node, 0, &v, &st);
		if (nv != 1)
			fprintf(stderr, "n=%d: %zu verdicts, first %s %d %d\n", sizes[k], nv, nv ? links_kind_name(v[0].kind) : "-", nv ? v[0].a : -1, nv ? v[0].b : -1);
		assert_int_equal(nv, 1);
		assert_int_equal(v[0].kind, LINKS_BAD_NODE);
		assert_int_equal(v[0].a, 3);
		assert_int_equal(v[0].b, -1);
		assert_true(v[0].good_n >= 2);
		assert_int_equal(v[0].good_slow, v[0].good_n);
		assert_true(v[0].ab < 10 && v[0].ba < 10 && v[0].slow_ab && v[0].slow_ba);
		assert_int_equal(links_exit_code(&st, v, nv), 1);
		free(v);
	}
	/* slow only when it sends: still the node, sending */
	assert_int_equal(run_links(8, slow_tx, 0, &v, &st), 1);
	assert_int_equal(v[0].kind, LINKS_BAD_NODE);
	assert_int_equal(v[0].a, 6);
	assert_true(v[0].slow_ab && !v[0].slow_ba);
	free(v);
}

/* The pairs' rates of runs of cluster nccl on six loaded namespaces
 * (three rounds, node 3 at a tenth, the healthy pairs 0.061-0.084 GB/s):
 * over all nine the median is the slowest healthy pair and median - 3 x
 * 1.4826 x MAD is below zero; over the rates within 25% of that median it
 * names node 3's three pairs. */
static void test_stats_noisy(void **state)
{
	(void)state;
	static const struct { int a, b; double r; } pairs[] = {
		{ 0, 5, 0.0722 }, { 1, 4, 0.0704 }, { 2, 3, 0.0097 }, { 1, 5, 0.0653 }, { 0, 2, 0.0659 },
		{ 3, 4, 0.0092 }, { 2, 5, 0.0835 }, { 1, 3, 0.0093 }, { 0, 4, 0.0839 },
	};
	struct links_meas m[18];
	for (size_t i = 0; i < 9; i++) {
		m[2 * i] = (struct links_meas){ .from = pairs[i].a, .to = pairs[i].b, .pass = 1, .gbps = pairs[i].r };
		m[2 * i + 1] = (struct links_meas){ .from = pairs[i].b, .to = pairs[i].a, .pass = 1, .gbps = pairs[i].r };
	}
	struct links_stats st;
	for (int run = 0; run < 2; run++) {
		if (run) /* the second run: two healthy pairs at 0.061 */
			for (size_t i = 0; i < 18; i++)
				if (m[i].gbps == 0.0653 || m[i].gbps == 0.0659)
					m[i].gbps = 0.0614;
		links_stats_compute(m, 18, 0, &st);
		assert_true(st.median > 0.065 && st.mad < 0.01);
		for (size_t i = 0; i < 9; i++)
			assert_int_equal(links_is_slow(&st, m[2 * i].gbps), pairs[i].a == 3 || pairs[i].b == 3);
		struct links_suspects s;
		links_find_suspects(6, m, 18, &st, &s);
		for (int k = 0; k < 6; k++)
			assert_int_equal(s.node[k], k == 3);
		links_suspects_free(&s);
	}
}

/* Above 64 nodes the text heat map is in blocks: 130 nodes in 44 blocks
 * of 3, node 3 (block 1) slow: block 1's row and column are low, the
 * others about 100%. */
static void test_block_map(void **state)
{
	(void)state;
	int n = 130;
	struct links_meas *m = NULL;
	size_t nm = 0;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			nm = meas_add(&m, nm, a, b, 1, slow_node);
			nm = meas_add(&m, nm, b, a, 1, slow_node);
		}
	struct links_stats st;
	links_stats_compute(m, nm, 0, &st);
	struct links_node *nodes = calloc((size_t)n, sizeof(*nodes));
	for (int i = 0; i < n; i++)
		snprintf(nodes[i].name, sizeof(nodes[i].name), "node%03d", i + 1);
	struct links_report r = { .n = n, .nodes = nodes, .m = m, .n_m = nm, .st = &st, .rail = LINKS_RAIL_TCP };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(links_write_text(&r, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "heat map of 130 nodes in 44 blocks of 3"));
	const char *row1 = strstr(buf, "\n    1 node004..node006"), *row2 = strstr(buf, "\n    2 node007..node009");
	assert_non_null(row1);
	assert_non_null(row2);
	int cells = 0, low = 0;
	for (const char *p = row2 + 26; *p && *p != '\n'; ) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		cells++;
		low += v < 20;
		p = end;
	}
	assert_int_equal(cells, 44);
	assert_int_equal(low, 1); /* column 1: pairs with node 4 */
	assert_null(strstr(buf, "no text heat map"));
	free(buf);
	free(nodes);
	free(m);
}

static void test_analysis_bad_path(void **state)
{
	(void)state;
	struct links_verdict *v;
	struct links_stats st;
	for (int n = 6; n <= 10; n++) {
		assert_int_equal(run_links(n, slow_path, 0, &v, &st), 1);
		assert_int_equal(v[0].kind, LINKS_BAD_PATH);
		assert_int_equal(v[0].a, 2);
		assert_int_equal(v[0].b, 5);
		assert_true(v[0].ab < 10 && v[0].ba < 10 && v[0].re_ab < 10);
		free(v);
	}
	/* slow once, fine again: intermittent */
	assert_int_equal(run_links(8, flaky_path, 0, &v, &st), 1);
	assert_int_equal(v[0].kind, LINKS_INTERMITTENT);
	assert_int_equal(v[0].a, 1);
	assert_int_equal(v[0].b, 4);
	assert_true(v[0].re_ab > 90);
	free(v);
}

static void test_analysis_failed(void **state)
{
	(void)state;
	struct links_verdict *v;
	struct links_stats st;
	assert_int_equal(run_links(8, refused, 0, &v, &st), 1);
	assert_int_equal(v[0].kind, LINKS_FAILED);
	assert_int_equal(v[0].a, 0);
	assert_int_equal(v[0].b, 7);
	assert_string_equal(v[0].err, "connection refused");
	assert_int_equal(links_exit_code(&st, v, 1), 1);
	free(v);
	/* two nodes: no outlier can stand out of two rates; under the
	 * expectation, the run still fails */
	struct links_meas m[2] = { { 0, 1, 1, 1.0, NULL, 0 }, { 1, 0, 1, 1.0, NULL, 0 } };
	links_stats_compute(m, 2, 50, &st);
	struct links_suspects s;
	links_find_suspects(2, m, 2, &st, &s);
	assert_int_equal(s.n_edges, 0);
	size_t nv;
	links_classify(2, m, 2, &st, &s, &v, &nv);
	assert_int_equal(nv, 0);
	assert_int_equal(links_exit_code(&st, v, nv), 1);
	free(v);
	links_suspects_free(&s);
}

static double many_paths(int from, int to, int pass)
{
	(void)pass;
	return (from + to) % 5 == 0 ? 9.4 : healthy(from, to, 1);
}

/* Many slow paths: the second pass stays bounded, every verdict is a
 * path, and the run fails. */
static void test_analysis_many_paths(void **state)
{
	(void)state;
	struct links_verdict *v;
	struct links_stats st;
	size_t nv = run_links(40, many_paths, 0, &v, &st);
	assert_true(nv > 0);
	for (size_t i = 0; i < nv; i++)
		assert_true(v[i].b >= 0);
	assert_int_equal(links_exit_code(&st, v, nv), 1);
	free(v);
}

/* What ranks send: lines parsed strictly (hostile ones left out and
 * counted), the plan round trip with its bounds. */
static void test_wire(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	char why[] = "could not connect\nto x";
	links_part_line(&sb, 2, 1, 9.5, NULL);
	links_part_line(&sb, 0, 2, -1, why);
	strbuf_adds(&sb, "7 1 3.0\n1 1 nan\n-1 1 2\n1 3 2\n3 1 2 extra\n1 1 -4\ngarbage\n3 1 1e400\n");
	strbuf_grow(&sb, 1);
	struct links_meas *m = NULL;
	size_t nm = 0;
	/* receiver 3 of 5: 7 is no rank, 3 is itself */
	size_t bad = links_parse_part(3, 5, sb.buf, sb.len, &m, &nm);
	assert_int_equal(nm, 2);
	assert_int_equal(bad, 8);
	assert_int_equal(m[0].from, 2);
	assert_int_equal(m[0].to, 3);
	assert_true(fabs(m[0].gbps - 9.5) < 1e-9);
	assert_int_equal(m[1].pass, 2);
	assert_true(m[1].gbps < 0);
	assert_string_equal(m[1].err, "could not connect?to x");
	free(m[1].err);
	free(m);
	strbuf_release(&sb);

	struct sched_pair pairs[3] = { { 0, 1 }, { 2, 3 }, { 1, 2 } };
	size_t start[3] = { 0, 2, 3 };
	struct links_rounds r = { .pairs = pairs, .n_pairs = 3, .start = start, .n_rounds = 2 }, back;
	int32_t *v = links_plan_encode(&r);
	links_plan_decode(v, 2, 3, 4, &back);
	assert_int_equal(back.n_rounds, 2);
	assert_int_equal(back.start[1], 2);
	assert_memory_equal(back.pairs, pairs, sizeof(pairs));
	links_rounds_free(&back);
	v[3] = 9;   /* a rank that does not exist: no pair */
	v[1] = 100; /* a start past the pairs: ends there */
	links_plan_decode(v, 2, 3, 4, &back);
	assert_int_equal(back.pairs[0].a, -1);
	assert_int_equal(back.start[1], 3);
	links_rounds_free(&back);
	free(v);
}

static void test_select(void **state)
{
	(void)state;
	double v[1000];
	for (int trial = 0; trial < 50; trial++) {
		uint64_t x = (uint64_t)trial;
		size_t n = 1 + sched_splitmix64(&x) % 1000;
		for (size_t i = 0; i < n; i++)
			v[i] = (double)(sched_splitmix64(&x) % 7); /* many equal values */
		size_t k = sched_splitmix64(&x) % n;
		double got = links_select(v, n, k);
		size_t below = 0, equal = 0;
		for (size_t i = 0; i < n; i++)
			below += v[i] < got, equal += v[i] == got;
		assert_true(below <= k && k < below + equal);
	}
}

/* Rails by GPU affinity from a real fixture: one per GPU, each the NIC
 * nearest that GPU; a tree without GPUs has none. */
static void test_rails(void **state)
{
	(void)state;
	char *dir = tu_fixture("h100-8x-cx7-roce");
	char rails[256], ifs[256];
	assert_int_equal(links_rails_read(dir, rails, sizeof(rails), ifs, sizeof(ifs)), 0);
	assert_string_equal(rails, RAILS_H100);
	/* port 1's netdev of each (gid_attrs/ndevs in the tree) */
	assert_string_equal(ifs, "ens1f0np0,ens2f0np0,ens3f0np0,ens4f0np0,ens5f0np0,ens6f0np0,ens7f0np0,ens8f0np0");
	char small[20];
	assert_int_equal(links_rails_read(dir, small, sizeof(small), NULL, 0), 0);
	assert_true(strlen(small) < sizeof(small) && strncmp(RAILS_H100, small, strlen(small)) == 0);
	free(dir);
	char *empty = tu_mkdtemp();
	assert_int_equal(links_rails_read(empty, rails, sizeof(rails), ifs, sizeof(ifs)), 0);
	assert_string_equal(rails, "");
	assert_string_equal(ifs, "");
	tu_rmtree(empty);
	free(empty);
}

/* Rank 0 keeps only the lines a pass asked for: a rank cannot repeat a
 * measurement (2,000 copies would move the median), report a pair it was
 * not in, or a pass-1 line in pass 2; a direction nobody reported is a
 * failed measurement. */
static void test_keep_scheduled(void **state)
{
	(void)state;
	enum { N = 4 };
	unsigned char want[N * N] = { 0 };
	struct sched_pair round[] = { { .a = 0, .b = 1 }, { .a = 2, .b = 3 } };
	links_want(want, N, round, 2, 1);
	struct links_meas *m = NULL;
	size_t nm = 0;
	char part1[] = "0 1 9.5\n0 1 9.5\n2 1 9.0\n0 2 1.0\n";
	size_t first = nm, bad = links_parse_part(1, N, part1, strlen(part1), &m, &nm);
	bad += links_keep_scheduled(m, first, &nm, N, 1, want);
	assert_int_equal(bad, 3);
	assert_int_equal(nm, 1);
	assert_int_equal(m[0].from, 0);
	assert_int_equal(m[0].to, 1);
	char part3[] = "2 1 9.4\n";
	first = nm;
	bad = links_parse_part(3, N, part3, strlen(part3), &m, &nm);
	assert_int_equal(links_keep_scheduled(m, first, &nm, N, 1, want), 0);
	links_add_missing(&m, &nm, N, 1, want, NULL);
	/* 1->0 and 3->2 were not reported: failed, naming the receiver */
	assert_int_equal(nm, 4);
	for (size_t i = 2; i < nm; i++) {
		assert_true(m[i].gbps < 0);
		assert_non_null(strstr(m[i].err, "sent no result for it"));
	}
	for (size_t i = 0; i < N * N; i++)
		assert_int_equal(want[i], 0);
	for (size_t i = 0; i < nm; i++)
		free(m[i].err);
	free(m);
}

/* What a rank announces is checked against where its control connection
 * came from: another host's address is replaced, garbage emptied. */
static void test_nodes_verify(void **state)
{
	(void)state;
	struct links_node n[4] = { { .name = "a", .addr = "10.0.0.1" }, { .name = "b", .addr = "10.0.0.2" },
				   { .name = "c", .addr = "192.0.2.77" }, { .name = "d", .addr = "\x1b[31mnot" } };
	const char *seen[4] = { "", "::ffff:10.0.0.2", "10.0.0.3", "" };
	struct strbuf notes = STRBUF_INIT;
	assert_int_equal(links_nodes_verify(n, 4, seen, &notes), 2);
	assert_string_equal(n[0].addr, "10.0.0.1");
	assert_string_equal(n[1].addr, "10.0.0.2");
	assert_string_equal(n[2].addr, "10.0.0.3");
	assert_string_equal(n[3].addr, "");
	assert_non_null(strstr(notes.buf, "c announced 192.0.2.77, but its control connection came from 10.0.0.3"));
	assert_non_null(strstr(notes.buf, "not a numeric address"));
	assert_null(strchr(notes.buf, '\x1b'));
	strbuf_release(&notes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_circle_all_small),
		cmocka_unit_test(test_keep_scheduled),
		cmocka_unit_test(test_circle_large),
		cmocka_unit_test(test_circle_edges),
		cmocka_unit_test(test_random_rounds),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_analysis_healthy),
		cmocka_unit_test(test_analysis_bad_node),
		cmocka_unit_test(test_analysis_bad_path),
		cmocka_unit_test(test_stats_noisy),
		cmocka_unit_test(test_block_map),
		cmocka_unit_test(test_analysis_failed),
		cmocka_unit_test(test_rails),
		cmocka_unit_test(test_analysis_many_paths),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_nodes_verify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
