/* `gpuready cluster links` over RDMA rails (src/cluster/links_rdma.c,
 * links_blocks.c, links_wire.c's rail lines). Two modes (argv[1]), each its
 * own Meson test, because a library once loaded answers to its soname for
 * the rest of the process:
 *   pure  the rails of a node and of a pair (rail i with rail i; a rail
 *         missing on one side fails with the reason), the rail lines on
 *         the wire and rank 0's bookkeeping of them, and the analysis per
 *         rail (each its own median: rails may differ in speed)
 *   fake  a pair over one rail against the libibverbs test double
 *         (tests/fakes/fake_ibverbs.c, path in $FAKE_IBVERBS, loaded first
 *         so that the engine's dlopen of libibverbs.so.1 finds it), both
 *         ranks in one process, one in a thread: a rate both ways, a port
 *         down (a failed measurement with the reason), a peer that never
 *         connects (ended by the deadline), and no verbs object left. */
#define _GNU_SOURCE
#include "testutil.h"

#include "cluster/links_blocks.h"
#include "cluster/links_rdma.h"
#include "cluster/links_wire.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- pure ---- */

static void test_rail_lists(void **state)
{
	(void)state;
	char d[64];
	assert_int_equal(links_rail_count(""), 0);
	assert_int_equal(links_rail_count("mlx5_0"), 1);
	assert_int_equal(links_rail_count("mlx5_0,-,mlx5_3"), 3);
	assert_int_equal(links_rail_device("mlx5_0,-,mlx5_3", 0, d, sizeof(d)), 0);
	assert_string_equal(d, "mlx5_0");
	assert_int_equal(links_rail_device("mlx5_0,-,mlx5_3", 1, d, sizeof(d)), -ENODEV);
	assert_string_equal(d, "");
	assert_int_equal(links_rail_device("mlx5_0,-,mlx5_3", 2, d, sizeof(d)), 0);
	assert_string_equal(d, "mlx5_3");
	assert_int_equal(links_rail_device("mlx5_0,-,mlx5_3", 3, d, sizeof(d)), -ENODEV);
	assert_int_equal(links_rail_device("", 0, d, sizeof(d)), -ENODEV);
	assert_int_equal(links_rail_device(NULL, 0, d, sizeof(d)), -ENODEV);
	assert_int_equal(links_rail_mode_parse("tcp"), LINKS_MEASURE_TCP);
	assert_int_equal(links_rail_mode_parse("rdma"), LINKS_MEASURE_RDMA);
	assert_int_equal(links_rail_mode_parse("all"), LINKS_MEASURE_ALL);
	assert_int_equal(links_rail_mode_parse("ib"), -1);
}

#define BIT(r) (1u << ((r) + 1)) /* RDMA rail r's bit */

static void test_pair_rails(void **state)
{
	(void)state;
	const char *h100 = "mlx5_0,mlx5_3,mlx5_4,mlx5_5";
	/* tcp: TCP only, whatever the rails */
	assert_int_equal(links_pair_rails(LINKS_MEASURE_TCP, h100, h100), 1);
	/* rail i with rail i: every index either node has */
	assert_int_equal(links_pair_rails(LINKS_MEASURE_RDMA, h100, h100), BIT(0) | BIT(1) | BIT(2) | BIT(3));
	assert_int_equal(links_pair_rails(LINKS_MEASURE_ALL, h100, "mlx5_0,mlx5_1"),
			 1 | BIT(0) | BIT(1) | BIT(2) | BIT(3));
	/* a GPU without a NIC on both is no rail; on one side it is (it fails) */
	assert_int_equal(links_pair_rails(LINKS_MEASURE_RDMA, "mlx5_0,-", "mlx5_0,-"), BIT(0));
	assert_int_equal(links_pair_rails(LINKS_MEASURE_RDMA, "mlx5_0,-", "mlx5_0,mlx5_1"), BIT(0) | BIT(1));
	/* no rails anywhere: all measures TCP; rdma measures rail 0 (it fails) */
	assert_int_equal(links_pair_rails(LINKS_MEASURE_ALL, "", ""), 1);
	assert_int_equal(links_pair_rails(LINKS_MEASURE_RDMA, "", ""), BIT(0));
	const char *rails[] = { h100, "mlx5_0", "" };
	assert_int_equal(links_rails_most(LINKS_MEASURE_RDMA, rails, 3), 4);
	assert_int_equal(links_rails_most(LINKS_MEASURE_TCP, rails, 3), 0);
	assert_int_equal(links_rails_most(LINKS_MEASURE_ALL, rails + 2, 1), 1);
}

static void test_rail_missing(void **state)
{
	(void)state;
	struct links_node a = { .name = "node01", .rails = "mlx5_0,mlx5_3", .rport = 4000 };
	struct links_node b = { .name = "node04", .rails = "mlx5_2", .rport = 4001 };
	struct links_node c = { .name = "node05", .rails = "", .rport = 4002 };
	struct links_node e = { .name = "node06", .rails = "", .rport = 4003 };
	assert_null(links_rail_missing(0, &a, &b));
	char *why = links_rail_missing(1, &a, &b);
	assert_non_null(why);
	assert_string_equal(why, "rail 1: node04 has no RDMA device for GPU 1 (its rails: mlx5_2)");
	free(why);
	why = links_rail_missing(0, &a, &c);
	assert_string_equal(why, "rail 0: no RDMA device on node05 (no RDMA NIC near a GPU)");
	free(why);
	why = links_rail_missing(0, &c, &e);
	assert_non_null(strstr(why, "no RDMA device on node05 nor on node06"));
	free(why);
	b.rport = 0;
	why = links_rail_missing(0, &a, &b);
	assert_string_equal(why, "rail 0: node04 has no RDMA data listener");
	free(why);
}

/* Rail lines: the sender reports; rank 0 keeps one per scheduled rail and
 * direction, and adds a failure for each one missing. */
static void test_rail_wire(void **state)
{
	(void)state;
	enum { N = 3 };
	struct strbuf sb = STRBUF_INIT;
	links_part_line(&sb, 1, 1, 9.5, NULL);         /* TCP: 1 -> 0 */
	links_rail_line(&sb, 0, 1, 1, 390.25, NULL);   /* rail 0: 0 -> 1 */
	char *why = xstrdup("rail 1: node1 has no RDMA device for GPU 1");
	links_rail_line(&sb, 1, 1, 1, -1, why);        /* rail 1: 0 -> 1 failed */
	links_rail_line(&sb, 1, 1, 1, 5, NULL);        /* rail 1 again: left out */
	links_rail_line(&sb, 0, 2, 1, 5, NULL);        /* not scheduled: left out */
	strbuf_adds(&sb, "r16 1 1 5\nr-1 1 1 5\nr 1 1\nr2x 1 1 5\n");
	struct links_meas *m = NULL;
	size_t nm = 0;
	char *buf = xstrndup(sb.buf, sb.len);
	size_t bad = links_parse_part(0, N, buf, sb.len, &m, &nm);
	assert_int_equal(bad, 4);
	assert_int_equal(nm, 5);
	assert_int_equal(m[0].rail, LINKS_RAIL_TCP);
	assert_int_equal(m[0].from, 1);
	assert_int_equal(m[0].to, 0);
	assert_int_equal(m[1].rail, 1);
	assert_int_equal(m[1].from, 0);
	assert_int_equal(m[1].to, 1);
	assert_true(fabs(m[1].gbps - 390.25) < 1e-9);
	assert_int_equal(m[2].rail, 2);
	assert_true(m[2].gbps < 0);
	assert_string_equal(m[2].err, why);

	unsigned char want[N * N] = { 0 };
	uint32_t left[N * N] = { 0 };
	struct sched_pair p[] = { { 0, 1 } };
	uint32_t mask[] = { 1 | BIT(0) | BIT(1) };
	links_want(want, N, p, 1, 1);
	links_want_rails(left, N, p, 1, mask);
	assert_int_equal(links_keep_rails(m, 0, &nm, N, 1, want, left), 2); /* the repeat, the unscheduled */
	assert_int_equal(nm, 3);
	links_add_missing(&m, &nm, N, 1, want, left);
	/* missing: TCP 0 -> 1 (rank 1 reports it), rails 0 and 1 of 1 -> 0 (rank 1 writes them) */
	assert_int_equal(nm, 6);
	int seen = 0;
	for (size_t i = 3; i < nm; i++) {
		assert_true(m[i].gbps < 0);
		assert_string_equal(m[i].err, "rank 1 sent no result for it");
		seen |= 1 << m[i].rail;
		assert_int_equal(m[i].from, m[i].rail ? 1 : 0);
	}
	assert_int_equal(seen, 7);
	assert_int_equal(left[1], 0);
	assert_int_equal(want[1], 0);
	for (size_t i = 0; i < nm; i++)
		free(m[i].err);
	free(m);
	free(buf);
	free(why);
	strbuf_release(&sb);
}

/* Rail 0 at 400 Gb/s, TCP at 20, rail 1 at 200 with node 3 at 100 on it.
 * Per rail nothing is slow but node 3 on rail 1; pooled, TCP would be. */
static double rate(int rail, int from, int to)
{
	if (rail == LINKS_RAIL_TCP)
		return 20 + 0.01 * (from + to);
	if (rail == 1)
		return 400 - 0.1 * (from + to);
	return from == 3 || to == 3 ? 100 : 200 + 0.05 * (from + to);
}

static void add(struct links_meas **m, size_t *nm, int rail, int from, int to, int pass)
{
	*m = links_grow(*m, *nm, sizeof(**m));
	(*m)[(*nm)++] = (struct links_meas){ .from = from, .to = to, .pass = pass, .gbps = rate(rail, from, to),
					     .rail = rail };
}

/* The blocks as text or JSON (malloc'd); a verdict makes the exit 1. */
static char *render(const struct links_blocks *bl, const struct links_report *base, const struct links_meas *m,
		    size_t nm, bool json)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_int_equal(links_blocks_write(bl, base, m, nm, json, f, NULL), 1);
	fclose(f);
	return out;
}

static void test_blocks(void **state)
{
	(void)state;
	enum { N = 8 };
	struct links_meas *m = NULL;
	size_t nm = 0;
	for (int rail = 0; rail <= 2; rail++)
		for (int a = 0; a < N; a++)
			for (int b = a + 1; b < N; b++)
				add(&m, &nm, rail, a, b, 1), add(&m, &nm, rail, b, a, 1);
	struct links_blocks bl;
	struct links_suspects s;
	links_blocks_first(N, LINKS_MEASURE_ALL, m, nm, 0, &bl, &s);
	assert_int_equal(bl.n, 3);
	assert_int_equal(bl.rail[0], LINKS_RAIL_TCP);
	assert_int_equal(bl.rail[1], 1);
	assert_int_equal(bl.rail[2], 2);
	assert_true(bl.st[0].median > 19 && bl.st[0].median < 21);
	assert_true(bl.st[1].median > 390);
	assert_true(bl.st[2].median > 199 && bl.st[2].median < 202);
	/* the merged suspects: node 3 (rail 1), known-good the others */
	for (int i = 0; i < N; i++) {
		assert_int_equal(s.node[i], i == 3);
		assert_int_equal(s.good[i], i != 3);
	}
	struct links_rounds r;
	links_second_pass(&s, &r);
	assert_true(r.n_pairs >= 2);
	for (size_t i = 0; i < r.n_pairs; i++)
		for (int rail = 0; rail <= 2; rail++)
			add(&m, &nm, rail, r.pairs[i].a, r.pairs[i].b, 2), add(&m, &nm, rail, r.pairs[i].b, r.pairs[i].a, 2);
	for (int k = 0; k < bl.n; k++) {
		struct links_verdict *v = NULL;
		size_t nv = 0;
		links_blocks_classify(&bl, k, N, m, nm, &v, &nv);
		if (bl.rail[k] == 2) {
			assert_int_equal(nv, 1);
			assert_int_equal(v[0].kind, LINKS_BAD_NODE);
			assert_int_equal(v[0].a, 3);
		} else {
			assert_int_equal(nv, 0);
		}
		free(v);
	}
	/* the report names the rail and the device on each node */
	struct links_node nodes[N];
	for (int i = 0; i < N; i++) {
		nodes[i] = (struct links_node){ .rport = 1 };
		snprintf(nodes[i].name, sizeof(nodes[i].name), "node%02d", i);
		snprintf(nodes[i].rails, sizeof(nodes[i].rails), "mlx5_0,mlx5_%d", 3 + i % 2);
		snprintf(nodes[i].rail_ifs, sizeof(nodes[i].rail_ifs), "ens1f0np0,%s", i % 2 ? "ens5f0np0" : "-");
		snprintf(nodes[i].addr, sizeof(nodes[i].addr), "10.0.0.%d", i + 1);
	}
	struct links_report base = { .n = N, .nodes = nodes, .rounds = N - 1, .pairs = N * (N - 1) / 2, .duration = 1 };
	char *out = render(&bl, &base, m, nm, false);
	assert_non_null(strstr(out, "cluster links: 8 nodes, 28 pairs in 7 rounds (every pair), tcp and RDMA rails,"));
	assert_non_null(strstr(out, "\nrail 1 over RDMA (the NIC nearest GPU 1 on each node; write_bw, 64 KiB messages"));
	assert_non_null(strstr(out, "bad node or its cable: node03 (rail 1: mlx5_4 on node03)"));
	assert_non_null(strstr(out, "`ibstat mlx5_4`"));
	assert_non_null(strstr(out, "`mlxlink -d mlx5_4 -m`"));
	assert_non_null(strstr(out, "`ethtool -S ens5f0np0`"));
	free(out);
	out = render(&bl, &base, m, nm, true);
	assert_non_null(strstr(out, "{\"schema_version\":2,\"rail\":\"tcp\","));
	assert_non_null(strstr(out, "\"rails\":[\n{\"rail\":0,\"devices\":[\"mlx5_0\""));
	assert_non_null(strstr(out, "{\"rail\":1,\"devices\":[\"mlx5_3\",\"mlx5_4\""));
	assert_non_null(strstr(out, "\"exit\":1}\n"));
	free(out);
	links_rounds_free(&r);
	links_suspects_free(&s);
	links_blocks_free(&bl);
	free(m);
}

/* ---- fake ---- */

static void *fake_lib;

static int fake_setup(void **state)
{
	(void)state;
	const char *path = getenv("FAKE_IBVERBS");
	fake_lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!fake_lib)
		print_error("FAKE_IBVERBS: %s\n", path ? dlerror() : "not set");
	setenv("FAKE_IBVERBS_NAMES", "mlx5_0,mlx5_3", 1);
	return fake_lib ? 0 : -1;
}

static int fake_teardown(void **state)
{
	(void)state;
	int (*live)(void) = NULL;
	*(void **)&live = dlvsym(fake_lib, "fake_ibverbs_live", "IBVERBS_1.1");
	int left = live ? live() : -1;
	if (left)
		print_error("%d verbs objects were not destroyed\n", left);
	dlclose(fake_lib);
	return left == 0 ? 0 : -1;
}

struct rank {
	struct links_rdma_opts o;
	char dev[16], name[16];
	int port;
	double gbps, took;
	char *err;
	int rc;
};

static void *rank_run(void *arg)
{
	struct rank *k = arg;
	double t0 = clock_now();
	k->rc = links_rdma_pair_run(&k->o, &k->gbps, &k->err);
	k->took = clock_now() - t0;
	return NULL;
}

/* Two ranks on loopback listeners; rank 1 in a thread unless alone. */
static void two_ranks(struct rank k[2], bool both, const struct auth_key *key)
{
	static const char *devs[2] = { "mlx5_0", "mlx5_3" };
	for (int i = 0; i < 2; i++) {
		char *err = NULL;
		int fd = tcp_listen("127.0.0.1", 0, &err);
		assert_true(fd >= 0);
		free(err);
		k[i] = (struct rank){ .port = tcp_local_port(fd), .gbps = -2 };
		snprintf(k[i].dev, sizeof(k[i].dev), "%s", devs[i]);
		snprintf(k[i].name, sizeof(k[i].name), "node%d", i);
		k[i].o = (struct links_rdma_opts){ .me = i, .peer = !i, .peer_addr = "127.0.0.1", .listen_fd = fd,
						   .dev = k[i].dev, .host = k[i].name, .duration = 0.2, .key = key };
	}
	for (int i = 0; i < 2; i++) {
		k[i].o.peer_name = k[!i].name;
		k[i].o.peer_rport = k[!i].port;
	}
	if (!both) { /* rank 1 never comes: its listener refuses */
		close(k[1].o.listen_fd);
		k[1].o.listen_fd = -1;
		rank_run(&k[0]);
		close(k[0].o.listen_fd);
		return;
	}
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, rank_run, &k[1]), 0);
	rank_run(&k[0]);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (int i = 0; i < 2; i++)
		close(k[i].o.listen_fd);
}

static void test_fake_both_ways(void **state)
{
	(void)state;
	struct rank k[2];
	two_ranks(k, true, NULL);
	for (int i = 0; i < 2; i++) {
		if (k[i].rc)
			fail_msg("rank %d: %s", i, k[i].err);
		assert_true(k[i].gbps > 0);
		assert_null(k[i].err);
	}
	/* with the job token on both sides, as under a launcher */
	struct auth_key key;
	assert_int_equal(auth_key_from("a job token of the test", 23, &key), 0);
	two_ranks(k, true, &key);
	for (int i = 0; i < 2; i++) {
		if (k[i].rc)
			fail_msg("rank %d with a token: %s", i, k[i].err);
		assert_true(k[i].gbps > 0);
	}
}

static void test_fake_port_down(void **state)
{
	(void)state;
	struct rank k[2];
	setenv("FAKE_IBVERBS_STATE", "down", 1);
	two_ranks(k, true, NULL);
	unsetenv("FAKE_IBVERBS_STATE");
	for (int i = 0; i < 2; i++) {
		assert_true(k[i].rc < 0);
		assert_true(k[i].gbps < 0);
		assert_non_null(k[i].err);
		if (!strstr(k[i].err, "not ACTIVE") || !strstr(k[i].err, k[i].dev))
			fail_msg("rank %d: %s", i, k[i].err);
		print_message("rank %d: %s\n", i, k[i].err);
		free(k[i].err);
	}
}

static void test_fake_peer_never_connects(void **state)
{
	(void)state;
	struct rank k[2];
	two_ranks(k, false, NULL);
	assert_true(k[0].rc < 0);
	assert_true(k[0].gbps < 0);
	assert_non_null(k[0].err);
	assert_non_null(strstr(k[0].err, "writing to node1 over mlx5_0"));
	assert_true(k[0].took < links_rdma_budget(0.2));
	print_message("after %.0f s: %s\n", k[0].took, k[0].err);
	free(k[0].err);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pure";
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_rail_lists),   cmocka_unit_test(test_pair_rails), cmocka_unit_test(test_rail_missing),
		cmocka_unit_test(test_rail_wire),    cmocka_unit_test(test_blocks),
	};
	const struct CMUnitTest fake[] = {
		cmocka_unit_test(test_fake_both_ways),
		cmocka_unit_test(test_fake_port_down),
		cmocka_unit_test(test_fake_peer_never_connects),
	};
	if (!strcmp(mode, "pure"))
		return cmocka_run_group_tests_name("links_rdma pure", pure, NULL, NULL);
	if (!strcmp(mode, "fake"))
		return cmocka_run_group_tests_name("links_rdma fake", fake, fake_setup, fake_teardown);
	fprintf(stderr, "usage: test_links_rdma pure|fake\n");
	return 2;
}
