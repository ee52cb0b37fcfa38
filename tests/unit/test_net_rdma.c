/* The RDMA kernels of `gpuready bench net` (src/bench/net/rdma.c).
 *
 * The program runs in one of three modes (argv[1]), each its own Meson
 * test, because a library once loaded answers to its soname for the rest
 * of the process:
 *   pure    the helpers: perftest's GID choice (built ports and the
 *           fixture trees), the counter deltas, the connection blob and
 *           the control message (round trips, refusals, random input)
 *   system  the machine's own libibverbs (or its absence): the errors
 *           "libibverbs.so.1 could not be loaded: ..." and "no RDMA
 *           device: /sys/class/infiniband is empty"
 *   fake    the libibverbs test double (tests/fakes/fake_ibverbs.c, path
 *           in $FAKE_IBVERBS) and the fake libcuda on LD_LIBRARY_PATH:
 *           both ends in one process, the initiator in this thread and
 *           the target in another, every test with iterations and with
 *           a duration, several QPs, -b, several sizes on one connection,
 *           GPU memory, corrupted data, refusals, deadlines, a peer that
 *           goes away, and no object left behind. */
#define _GNU_SOURCE
#include "testutil.h"

#include "bench/net/rdma.h"
#include "core/tcp.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- pure: GID choice ---- */

static struct rdma_port port_of(const char *link, struct rdma_gid *g, size_t n)
{
	return (struct rdma_port){ .num = 1, .link_layer = (char *)link, .gids = g, .n_gids = n };
}

/* Runs a call that sets why (char **err) on failure, after freeing the
 * message of the call before. */
#define DECODE(call) (free(why), why = NULL, (call))
#define GID(i, text, t) { .index = (i), .gid = (char *)(text), .type = (char *)(t) }
#define LL1 "fe80:0000:0000:0000:a288:c2ff:fe4e:2764"
#define LL2 "fe80:0000:0000:0000:a288:c2ff:fe4e:2765"
#define V4A "0000:0000:0000:0000:0000:ffff:0a00:000a"
#define V6G "2001:0db8:0000:0000:0000:0000:0000:0001"

static void test_choose_gid_built(void **state)
{
	(void)state;
	/* the kernel's table: v1 and v2 per address, link-local first */
	struct rdma_gid k[] = { GID(0, LL1, "IB/RoCE v1"), GID(1, LL1, "RoCE v2"), GID(2, V4A, "IB/RoCE v1"),
				GID(3, V4A, "RoCE v2") };
	struct rdma_port p = port_of("Ethernet", k, 4);
	assert_int_equal(net_rdma_choose_gid(&p), 3);
	/* the order in the array does not matter, the index does */
	struct rdma_gid rev[] = { k[3], k[2], k[1], k[0] };
	p = port_of("Ethernet", rev, 4);
	assert_int_equal(net_rdma_choose_gid(&p), 3);
	/* v2 before v1 for the address (mlx4 lists them so) */
	struct rdma_gid m4[] = { GID(0, LL1, "IB/RoCE v1"), GID(1, LL1, "RoCE v2"), GID(2, V4A, "RoCE v2"),
				 GID(3, V4A, "IB/RoCE v1") };
	p = port_of("Ethernet", m4, 4);
	assert_int_equal(net_rdma_choose_gid(&p), 2);
	/* no IPv4 address: RoCE v2 over v1 */
	p = port_of("Ethernet", k, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 1);
	/* an IPv4-mapped v1 beats a non-IPv4 v2 that comes before it... */
	struct rdma_gid a[] = { GID(0, LL1, "RoCE v2"), GID(1, V4A, "IB/RoCE v1") };
	p = port_of("Ethernet", a, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 1);
	/* ...but perftest also compares types when the best so far is
	 * IPv4-mapped and the rival is not: a later v2 takes over */
	struct rdma_gid q[] = { GID(0, V4A, "IB/RoCE v1"), GID(1, LL1, "RoCE v2") };
	p = port_of("Ethernet", q, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 1);
	/* a global IPv6 v2 after the IPv4 one: the IPv4 one stays */
	struct rdma_gid v6[] = { GID(0, LL1, "RoCE v2"), GID(1, V4A, "RoCE v2"), GID(2, V6G, "RoCE v2") };
	p = port_of("Ethernet", v6, 3);
	assert_int_equal(net_rdma_choose_gid(&p), 1);
	/* IPv4 multicast form counts as IPv4-mapped */
	struct rdma_gid mc[] = { GID(0, LL1, "RoCE v2"), GID(5, "ff0e:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2") };
	p = port_of("Ethernet", mc, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 5);
}

static void test_choose_gid_edges(void **state)
{
	(void)state;
	/* types unknown (no gid_attrs): IPv4 still wins, types never decide */
	struct rdma_gid u[] = { GID(0, LL1, NULL), GID(1, LL2, NULL), GID(2, V4A, NULL) };
	struct rdma_port p = port_of("Ethernet", u, 3);
	assert_int_equal(net_rdma_choose_gid(&p), 2);
	p = port_of("Ethernet", u, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 0);
	/* one unknown type: no comparison with it */
	struct rdma_gid h[] = { GID(0, LL1, NULL), GID(1, LL2, "RoCE v2") };
	p = port_of("Ethernet", h, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 0);
	/* InfiniBand: the lowest populated index */
	struct rdma_gid ib[] = { GID(3, LL2, NULL), GID(1, LL1, NULL) };
	p = port_of("InfiniBand", ib, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 1);
	/* unreadable text is skipped; nothing usable is -1 */
	struct rdma_gid bad[] = { GID(0, "not a gid", "RoCE v2"), GID(4, V4A, "RoCE v2") };
	p = port_of("Ethernet", bad, 2);
	assert_int_equal(net_rdma_choose_gid(&p), 4);
	p = port_of("Ethernet", bad, 1);
	assert_int_equal(net_rdma_choose_gid(&p), -1);
	p = port_of("Ethernet", NULL, 0);
	assert_int_equal(net_rdma_choose_gid(&p), -1);
	assert_int_equal(net_rdma_choose_gid(NULL), -1);
}

static struct rdma_info load_rdma(const char *fixture, struct root **root)
{
	struct rdma_info ri;
	char *dir = tu_fixture(fixture);
	memset(&ri, 0, sizeof(ri));
	assert_int_equal(root_open(dir, root), 0);
	assert_int_equal(rdma_load(*root, &ri), 0);
	free(dir);
	return ri;
}

static const struct rdma_port *find_port(const struct rdma_info *ri, const char *dev, unsigned num)
{
	const struct rdma_dev *d = rdma_find(ri, dev);
	for (size_t i = 0; d && i < d->n_ports; i++)
		if (d->ports[i].num == num)
			return &d->ports[i];
	fail_msg("no %s port %u", dev, num);
	return NULL;
}

/* perftest's choice on the recorded trees (the GID tables listed in each
 * fixture's README). */
static void test_choose_gid_fixtures(void **state)
{
	(void)state;
	static const struct {
		const char *fixture, *dev;
		unsigned port;
		int want;
	} cases[] = {
		{ "h100-8x-cx7-roce", "mlx5_0", 1, 3 },   /* ::ffff:10.0.0.10 RoCE v2 */
		{ "h100-8x-cx7-roce", "mlx5_7", 1, 3 },
		{ "ndr-ib-4port", "mlx5_0", 1, 0 },       /* InfiniBand: the port GID */
		{ "ndr-ib-4port", "mlx5_3", 1, 0 },
		{ "v100-cx3pro", "mlx4_0", 1, 1 },        /* link-local only: the v2 one */
		{ "v100-cx3pro", "mlx4_0", 2, 2 },        /* mlx4 lists v2 before v1 */
		{ "h100-roce-broken", "mlx5_1", 1, 1 },   /* no IP address */
		{ "dgx-spark-gb10", "roceP2p1s0f0", 1, 3 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct root *root = NULL;
		struct rdma_info ri = load_rdma(cases[i].fixture, &root);
		int got = net_rdma_choose_gid(find_port(&ri, cases[i].dev, cases[i].port));
		if (got != cases[i].want)
			fail_msg("%s %s port %u: GID %d, perftest picks %d", cases[i].fixture, cases[i].dev, cases[i].port,
				 got, cases[i].want);
		rdma_free(&ri);
		root_free(root);
	}
}

/* ---- pure: counters ---- */

static const struct net_counter_delta *delta_named(const struct net_counter_delta *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static void test_counters_delta(void **state)
{
	(void)state;
	struct counter cb[] = { { .name = (char *)"symbol_error", .value = 5 },
				{ .name = (char *)"port_xmit_data", .value = 100 },
				{ .name = (char *)"link_downed", .value = 2 },
				{ .name = (char *)"port_rcv_errors", .value = 9 } };
	struct counter ca[] = { { .name = (char *)"symbol_error", .value = 8 },
				{ .name = (char *)"port_xmit_data", .value = 900 },
				{ .name = (char *)"link_downed", .value = 2 },
				{ .name = (char *)"port_rcv_errors", .value = 0 },
				{ .name = (char *)"port_xmit_discards", .value = 4 } };
	struct counter hb[] = { { .name = (char *)"out_of_sequence", .value = 0 },
				{ .name = (char *)"np_cnp_sent", .value = 1 },
				{ .name = (char *)"lifespan", .value = 10 } };
	struct counter ha[] = { { .name = (char *)"out_of_sequence", .value = 120 },
				{ .name = (char *)"np_cnp_sent", .value = 1 },
				{ .name = (char *)"lifespan", .value = 12 } };
	struct rdma_port b = { .counters = cb, .n_counters = 4, .hw_counters = hb, .n_hw_counters = 3 };
	struct rdma_port a = { .counters = ca, .n_counters = 5, .hw_counters = ha, .n_hw_counters = 3 };
	struct net_counter_delta *v = NULL;
	size_t n = 99;

	assert_int_equal(net_rdma_counters_delta(&b, &a, &v, &n), 0);
	assert_int_equal(n, 4); /* link_downed, np_cnp_sent unchanged; lifespan is a setting; discards new */
	const struct net_counter_delta *d = delta_named(v, n, "symbol_error");
	assert_non_null(d);
	assert_true(d->bad);
	assert_int_equal(d->before, 5);
	assert_int_equal(d->after, 8);
	assert_non_null(strstr(d->meaning, "cable"));
	d = delta_named(v, n, "port_xmit_data");
	assert_non_null(d);
	assert_false(d->bad);
	assert_null(d->meaning);
	d = delta_named(v, n, "port_rcv_errors"); /* went down: a reset, listed, not bad */
	assert_non_null(d);
	assert_false(d->bad);
	d = delta_named(v, n, "out_of_sequence");
	assert_non_null(d);
	assert_true(d->bad);
	assert_string_equal(d->meaning, "packets lost on the way: a lossy fabric (check PFC/ECN)");
	assert_null(delta_named(v, n, "port_xmit_discards"));
	free(v);

	/* nothing moved */
	assert_int_equal(net_rdma_counters_delta(&b, &b, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_int_equal(net_rdma_counters_delta(NULL, &b, &v, &n), -EINVAL);
}

/* A recorded port against itself with two counters raised, as the
 * command reads them before and after a run. */
static void test_counters_fixture(void **state)
{
	(void)state;
	struct root *r1 = NULL, *r2 = NULL;
	struct rdma_info before = load_rdma("h100-8x-cx7-roce", &r1), after = load_rdma("h100-8x-cx7-roce", &r2);
	struct rdma_port *pa = (struct rdma_port *)find_port(&after, "mlx5_0", 1);
	const struct rdma_port *pb = find_port(&before, "mlx5_0", 1);
	assert_true(pa->n_counters > 0 && pa->n_hw_counters > 0);
	for (size_t i = 0; i < pa->n_hw_counters; i++)
		if (!strcmp(pa->hw_counters[i].name, "np_ecn_marked_roce_packets") ||
		    !strcmp(pa->hw_counters[i].name, "local_ack_timeout_err"))
			pa->hw_counters[i].value += 7;
	for (size_t i = 0; i < pa->n_counters; i++)
		if (!strcmp(pa->counters[i].name, "port_rcv_data"))
			pa->counters[i].value += 1000;
	struct net_counter_delta *v = NULL;
	size_t n = 0;
	assert_int_equal(net_rdma_counters_delta(pb, pa, &v, &n), 0);
	assert_int_equal(n, 3);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		bad += v[i].bad;
		assert_true(v[i].after == v[i].before + (v[i].bad ? 7 : 1000));
	}
	assert_int_equal(bad, 2);
	free(v);
	rdma_free(&before);
	rdma_free(&after);
	root_free(r1);
	root_free(r2);
}

/* ---- pure: wire formats ---- */

static void sample_peer(struct net_rdma_peer *p, int qps)
{
	memset(p, 0, sizeof(*p));
	p->qps = qps;
	p->link_layer = 2;
	p->mtu = 5;
	p->gid_index = 3;
	p->grh = true;
	p->lid = 0x1234;
	p->out_reads = 16;
	p->rkey = 0xdeadbeef;
	p->region = 65536;
	for (int i = 0; i < 16; i++)
		p->gid[i] = (uint8_t)(0xa0 + i);
	for (int q = 0; q < qps; q++)
		p->qp[q] = (struct net_rdma_qp_info){ .qpn = 0x100 + (uint32_t)q, .psn = 0xabcdef - (uint32_t)q,
						      .rx_addr = 0x7f0000010000ull + (uint64_t)q * 0x20000,
						      .tx_addr = 0x7f0000000000ull + (uint64_t)q * 0x20000 };
}

static void test_info_roundtrip(void **state)
{
	(void)state;
	static struct net_rdma_peer in, out;
	char *why = NULL;
	for (int qps = 1; qps <= NET_RDMA_MAX_QPS; qps += 21) {
		size_t len = net_rdma_info_size(qps);
		assert_int_equal(len, 48 + 24 * (size_t)qps);
		uint8_t *b = malloc(len);
		sample_peer(&in, qps);
		assert_int_equal(net_rdma_info_encode(&in, b, len), 0);
		assert_memory_equal(b, "GRDM\1\0", 6);
		assert_int_equal(DECODE(net_rdma_info_decode(b, len, &out, &why)), 0);
		assert_null(why);
		assert_int_equal(memcmp(&in, &out, sizeof(in)), 0);
		free(b);
	}
	sample_peer(&in, 1);
	uint8_t b[72];
	assert_int_equal(net_rdma_info_encode(&in, b, sizeof(b) - 1), -EMSGSIZE);
	in.qps = 0;
	assert_int_equal(net_rdma_info_encode(&in, b, sizeof(b)), -EINVAL);
	in.qps = NET_RDMA_MAX_QPS + 1;
	assert_int_equal(net_rdma_info_encode(&in, b, sizeof(b)), -EINVAL);
}

/* One refusal: the blob changed by mut() is refused with rc and a reason
 * holding `word`. */
static void expect_refused(void (*mut)(uint8_t *b, size_t *len), int rc, const char *word)
{
	static struct net_rdma_peer in, out;
	uint8_t b[200];
	size_t len = net_rdma_info_size(2);
	char *why = NULL;
	sample_peer(&in, 2);
	assert_int_equal(net_rdma_info_encode(&in, b, len), 0);
	mut(b, &len);
	assert_int_equal(DECODE(net_rdma_info_decode(b, len, &out, &why)), rc);
	if (!strstr(why, word))
		fail_msg("reason '%s' lacks '%s'", why, word);
	free(why);
}

static void mut_version(uint8_t *b, size_t *len) { (void)len; b[4] = 2; }
static void mut_magic(uint8_t *b, size_t *len) { (void)len; b[0] = 'X'; }
static void mut_short(uint8_t *b, size_t *len) { (void)b; *len = 5; }
static void mut_cut(uint8_t *b, size_t *len) { (void)b; *len -= 24; }
static void mut_qps(uint8_t *b, size_t *len) { (void)len; b[6] = 3; }
static void mut_link(uint8_t *b, size_t *len) { (void)len; b[12] = 3; }
static void mut_mtu(uint8_t *b, size_t *len) { (void)len; b[13] = 6; }
static void mut_flags(uint8_t *b, size_t *len) { (void)len; b[15] = 0x80; }
static void mut_reserved(uint8_t *b, size_t *len) { (void)len; b[19] = 7; }
static void mut_psn(uint8_t *b, size_t *len) { (void)len; b[48 + 24 + 7] = 1; }
static void mut_addr(uint8_t *b, size_t *len) { (void)len; memset(b + 48 + 8, 0, 8); }

static void test_info_refused(void **state)
{
	(void)state;
	expect_refused(mut_version, -EPROTO, "version 2, this gpuready speaks version 1");
	expect_refused(mut_magic, -EPROTO, "not gpuready");
	expect_refused(mut_short, -EMSGSIZE, "too short");
	expect_refused(mut_cut, -EMSGSIZE, "does not hold 2 QPs");
	expect_refused(mut_qps, -EMSGSIZE, "does not hold 3 QPs");
	expect_refused(mut_link, -EINVAL, "link layer 3");
	expect_refused(mut_mtu, -EINVAL, "MTU 6");
	expect_refused(mut_flags, -EINVAL, "flags 0x80/0x0");
	expect_refused(mut_reserved, -EINVAL, "flags 0x1/0x7");
	expect_refused(mut_psn, -EINVAL, "QP 1");
	expect_refused(mut_addr, -EINVAL, "QP 0");

	/* the whole texts, and no blob at all */
	struct net_rdma_peer out;
	char *why = NULL;
	assert_int_equal(DECODE(net_rdma_info_decode(NULL, 100, &out, &why)), -EMSGSIZE);
	assert_string_equal(why, "RDMA info of 100 bytes is too short");
	uint8_t b[72];
	sample_peer(&out, 1);
	assert_int_equal(net_rdma_info_encode(&out, b, sizeof(b)), 0);
	assert_int_equal(DECODE(net_rdma_info_decode(b, 7, &out, &why)), -EMSGSIZE);
	assert_string_equal(why, "RDMA info of 7 bytes is too short");
	assert_int_equal(DECODE(net_rdma_info_decode(b, 47, &out, &why)), -EMSGSIZE);
	assert_string_equal(why, "RDMA info of 47 bytes does not hold 0 QPs (1 .. 64, 48 + 24 bytes each)");
	b[8] = 73; /* the total length */
	assert_int_equal(DECODE(net_rdma_info_decode(b, sizeof(b), &out, &why)), -EMSGSIZE);
	assert_string_equal(why, "RDMA info of 72 bytes does not hold 1 QPs (1 .. 64, 48 + 24 bytes each)");
	b[8] = 72;
	b[4] = 7;
	assert_int_equal(DECODE(net_rdma_info_decode(b, sizeof(b), &out, &why)), -EPROTO);
	assert_string_equal(why, "RDMA info version 7, this gpuready speaks version 1: "
				 "run the same gpuready on both ends");
	b[4] = 1;
	b[12] = 3;
	assert_int_equal(DECODE(net_rdma_info_decode(b, sizeof(b), &out, &why)), -EINVAL);
	assert_string_equal(why, "RDMA info with link layer 3, MTU 5, flags 0x1/0x0, region 65536: out of range");
	free(why);
}

/* Random bytes and random damage never crash the decoders, and what they
 * accept encodes back to the same bytes. */
static void test_wire_random(void **state)
{
	(void)state;
	static struct net_rdma_peer in, out;
	struct net_rdma_sync m;
	uint8_t b[NET_RDMA_SYNC_BYTES + 64], again[NET_RDMA_SYNC_BYTES + 64];
	char *why = NULL;
	unsigned seed = 12345, accepted = 0;
	for (int round = 0; round < 20000; round++) {
		size_t len = net_rdma_info_size(1 + round % 4);
		sample_peer(&in, 1 + round % 4);
		assert_int_equal(net_rdma_info_encode(&in, b, len), 0);
		for (int k = 0; k < 1 + round % 3; k++)
			b[rand_r(&seed) % len] = (uint8_t)rand_r(&seed);
		if (round % 5 == 0)
			len = (size_t)rand_r(&seed) % sizeof(b);
		if (DECODE(net_rdma_info_decode(b, len, &out, &why)) == 0) {
			accepted++;
			assert_int_equal(net_rdma_info_encode(&out, again, len), 0);
			assert_memory_equal(b, again, len);
		} else {
			assert_true(why && why[0] != '\0');
		}
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t)rand_r(&seed);
		(void)DECODE(net_rdma_sync_decode(b, NET_RDMA_SYNC_BYTES, &m, &why));
		(void)DECODE(net_rdma_info_decode(b, (size_t)rand_r(&seed) % sizeof(b), &out, &why));
	}
	assert_true(accepted > 0);
	free(why);
}

static void test_sync_codec(void **state)
{
	(void)state;
	struct net_rdma_sync in = { .type = NET_RDMA_SYNC_RESULT, .status = -EIO, .test = NET_SEND_BW,
				    .flags = NET_RDMA_SYNC_BIDIR, .size = 65536, .iters = 5000, .duration = 2.5,
				    .seed = 0x0123456789abcdefull, .msgs = 10000, .bytes = 655360000, .errors = 3,
				    .seconds = 1.25, .n_windows = NET_WINDOWS },
			      out;
	uint8_t b[NET_RDMA_SYNC_BYTES];
	char *why = NULL;
	for (int i = 0; i < NET_WINDOWS; i++)
		in.window_s[i] = 0.01 * (i + 1);
	memset(in.text, 'x', sizeof(in.text) - 1);
	in.text[sizeof(in.text) - 1] = '\0';
	net_rdma_sync_encode(&in, b);
	assert_memory_equal(b, "GRSY\1\0\4\0", 8);
	assert_int_equal(DECODE(net_rdma_sync_decode(b, sizeof(b), &out, &why)), 0);
	assert_int_equal(memcmp(&in, &out, sizeof(in)), 0);

	assert_int_equal(DECODE(net_rdma_sync_decode(b, sizeof(b) - 1, &out, &why)), -EPROTO);
	assert_string_equal(why, "not a version 1 gpuready RDMA control message (343 bytes)");
	assert_int_equal(DECODE(net_rdma_sync_decode(NULL, sizeof(b), &out, &why)), -EPROTO);
	assert_string_equal(why, "not a version 1 gpuready RDMA control message (344 bytes)");
	b[6] = 9;
	assert_int_equal(DECODE(net_rdma_sync_decode(b, sizeof(b), &out, &why)), -EPROTO);
	in.n_windows = NET_WINDOWS + 1;
	net_rdma_sync_encode(&in, b);
	assert_int_equal(DECODE(net_rdma_sync_decode(b, sizeof(b), &out, &why)), -EPROTO);
	in.n_windows = 1;
	in.seconds = NAN;
	net_rdma_sync_encode(&in, b);
	assert_int_equal(DECODE(net_rdma_sync_decode(b, sizeof(b), &out, &why)), -EPROTO);
	in.seconds = 1;
	in.status = 5;
	net_rdma_sync_encode(&in, b);
	assert_int_equal(DECODE(net_rdma_sync_decode(b, sizeof(b), &out, &why)), -EPROTO);
	assert_string_equal(why, "RDMA control message of type 4, status 5, 1 windows: out of range");
	/* the text always comes back terminated */
	in.status = 0;
	net_rdma_sync_encode(&in, b);
	memset(b + NET_RDMA_SYNC_BYTES - 128, 'y', 128);
	assert_int_equal(DECODE(net_rdma_sync_decode(b, sizeof(b), &out, &why)), 0);
	assert_int_equal(strlen(out.text), sizeof(out.text) - 1);
	free(why);
}

static void test_buf_bytes(void **state)
{
	(void)state;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct net_params p = { .test = NET_WRITE_BW, .qps = 1 };
	assert_int_equal(net_rdma_buf_bytes(&p), 2 * 65536);
	p.qps = 3;
	p.size = 100;
	assert_int_equal(net_rdma_buf_bytes(&p), 6 * pg);
	p.all = true;
	assert_int_equal(net_rdma_buf_bytes(&p), 6 * (size_t)NET_ALL_MAX);
	p = (struct net_params){ .test = NET_SEND_LAT };
	assert_int_equal(net_rdma_buf_bytes(&p), 2 * pg);
}

/* ---- system: the machine's own libibverbs ---- */

static struct net_params params(enum net_test t, uint64_t size, int qps, bool bidir)
{
	return (struct net_params){ .test = t, .size = size, .qps = qps, .bidir = bidir, .tclass = -1 };
}

static struct net_rdma_opts host_opts(void)
{
	return (struct net_rdma_opts){ .port = 1, .gid_index = -1, .mem = NET_MEM_HOST, .gpu = -1 };
}

static void test_missing_library(void **state)
{
	(void)state;
	struct net_rdma_env env = { .verbs_lib = "/nonexistent/libibverbs.so.1" };
	struct net_rdma_opts o = host_opts();
	struct net_params p = params(NET_WRITE_BW, 4096, 1, false);
	struct net_rdma *e = (struct net_rdma *)&e;
	char *err = NULL;
	int r = net_rdma_open_env(&env, &o, &p, 4096, &e, &err);
	assert_true(r == -ENOENT);
	assert_ptr_equal(e, (struct net_rdma *)&e); /* untouched */
	assert_non_null(err);
	if (strncmp(err, "libibverbs.so.1 could not be loaded: /nonexistent/libibverbs.so.1", 65))
		fail_msg("%s", err);
	free(err);
}

/* This machine: libibverbs1 installed or not; no RDMA device expected.
 * A machine with devices skips what it cannot show. */
static void test_system_library(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	struct net_params p = params(NET_WRITE_BW, 4096, 1, false);
	struct net_rdma *e = NULL;
	char *err = NULL;
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	struct root *root = NULL;
	struct rdma_info ri;
	memset(&ri, 0, sizeof(ri));
	assert_int_equal(root_open("/", &root), 0);
	rdma_load(root, &ri);
	int r = net_rdma_open(&o, &p, 4096, &e, &err);
	print_message("system libibverbs %s, %zu RDMA devices in sysfs: %d %s\n", h ? "present" : "absent", ri.n, r,
		      err ? err : "");
	if (!h) {
		assert_int_equal(r, -ENOENT);
		assert_non_null(strstr(err, "libibverbs.so.1 could not be loaded: "));
	} else if (ri.n == 0) {
		assert_int_equal(r, -ENODEV);
		assert_string_equal(err, "no RDMA device: /sys/class/infiniband is empty");
	} else {
		net_rdma_close(r == 0 ? e : NULL);
		print_message("this machine has RDMA devices: the no-device error cannot be shown\n");
	}
	free(err);
	if (h)
		dlclose(h);
	rdma_free(&ri);
	root_free(root);
}

/* ---- fake: both ends in one process ---- */

struct fake {
	void *h;                   /* the test double, by path */
	int (*set)(const char *key, long value);
	int (*live)(void);
	char *empty_root;          /* a sysroot without sysfs */
};

static struct fake fk;

static int fake_setup(void **state)
{
	(void)state;
	const char *path = getenv("FAKE_IBVERBS");
	if (!path)
		return -1;
	fk.h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!fk.h) {
		print_error("%s\n", dlerror());
		return -1;
	}
	*(void **)&fk.set = dlvsym(fk.h, "fake_ibverbs_set", "IBVERBS_1.1");
	*(void **)&fk.live = dlvsym(fk.h, "fake_ibverbs_live", "IBVERBS_1.1");
	fk.empty_root = tu_mkdtemp();
	return fk.set && fk.live ? 0 : -1;
}

static int fake_teardown(void **state)
{
	(void)state;
	int left = fk.live ? fk.live() : -1;
	tu_rmtree(fk.empty_root);
	free(fk.empty_root);
	if (fk.h)
		dlclose(fk.h);
	if (left != 0)
		print_error("%d verbs objects were not destroyed\n", left);
	return left == 0 ? 0 : -1;
}

static struct net_rdma_env fake_env(void)
{
	return (struct net_rdma_env){ .verbs_lib = getenv("FAKE_IBVERBS"), .sysroot = fk.empty_root };
}

/* A control connection: a socketpair end, framed by the fixed sizes. */
struct side {
	struct net_ctrl ctrl;
	int fd;
	struct net_rdma *e;
	bool initiator;
	uint64_t size, iters;
	double duration, deadline;
	struct net_samples s;
	char *err;
	int rc;
};

static int side_send(struct net_ctrl *c, const void *buf, size_t len, double deadline)
{
	return tcp_write_all(((struct side *)c->ctx)->fd, buf, len, deadline);
}

static int side_recv(struct net_ctrl *c, void *buf, size_t len, double deadline)
{
	return tcp_read_all(((struct side *)c->ctx)->fd, buf, len, deadline);
}

static int side_state(struct net_ctrl *c)
{
	return (int)tcp_peer_state(((struct side *)c->ctx)->fd);
}

static void *side_run(void *arg)
{
	struct side *s = arg;
	free(s->s.lat_us);
	memset(&s->s, 0, sizeof(s->s));
	free(s->err);
	s->err = NULL;
	s->rc = net_rdma_run(s->e, s->initiator, s->size, s->iters, s->duration, &s->ctrl, s->deadline, &s->s, &s->err);
	return NULL;
}

struct pair {
	struct side c, s;          /* client = initiator, server = target */
};

static void pair_init(struct pair *pr)
{
	int sv[2];
	memset(pr, 0, sizeof(*pr));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	pr->c = (struct side){ .fd = sv[0], .initiator = true };
	pr->s = (struct side){ .fd = sv[1] };
	/* with the watch on, as the command runs them */
	pr->c.ctrl = (struct net_ctrl){ .send = side_send, .recv = side_recv, .state = side_state, .ctx = &pr->c };
	pr->s.ctrl = (struct net_ctrl){ .send = side_send, .recv = side_recv, .state = side_state, .ctx = &pr->s };
}

static int open_side(struct side *sd, const struct net_rdma_opts *o, const struct net_params *p)
{
	struct net_rdma_env env = fake_env();
	free(sd->err);
	sd->err = NULL;
	sd->rc = net_rdma_open_env(&env, o, p, p->size, &sd->e, &sd->err);
	if (sd->rc < 0)
		print_message("open: %s\n", sd->err);
	return sd->rc;
}

/* Swaps the connection blobs as the command does and connects both. */
static void connect_pair(struct pair *pr, int qps)
{
	size_t n = net_rdma_info_size(qps);
	uint8_t *a = malloc(n), *b = malloc(n);
	char *err = NULL;
	assert_int_equal(net_rdma_info(pr->c.e, a, n), 0);
	assert_int_equal(net_rdma_info(pr->s.e, b, n), 0);
	if (net_rdma_connect(pr->c.e, b, n, &err) < 0 || net_rdma_connect(pr->s.e, a, n, &err) < 0)
		fail_msg("connect: %s", err);
	free(a);
	free(b);
}

/* Opens and connects both ends with the same parameters. */
static void pair_open(struct pair *pr, const struct net_rdma_opts *oc, const struct net_rdma_opts *os,
		      const struct net_params *p)
{
	pair_init(pr);
	assert_int_equal(open_side(&pr->c, oc, p), 0);
	assert_int_equal(open_side(&pr->s, os, p), 0);
	connect_pair(pr, p->qps > 0 ? p->qps : 1);
}

static void pair_close(struct pair *pr)
{
	net_rdma_close(pr->c.e);
	net_rdma_close(pr->s.e);
	close(pr->c.fd);
	close(pr->s.fd);
	free(pr->c.s.lat_us);
	free(pr->s.s.lat_us);
	free(pr->c.err);
	free(pr->s.err);
	memset(pr, 0, sizeof(*pr));
}

/* One run, the target in a thread. */
static void pair_run(struct pair *pr, uint64_t size, uint64_t iters, double duration)
{
	pthread_t t;
	double dl = clock_now() + 30;
	pr->c.size = pr->s.size = size;
	pr->c.iters = pr->s.iters = iters;
	pr->c.duration = pr->s.duration = duration;
	pr->c.deadline = pr->s.deadline = dl;
	assert_int_equal(pthread_create(&t, NULL, side_run, &pr->s), 0);
	side_run(&pr->c);
	assert_int_equal(pthread_join(t, NULL), 0);
}

static void expect_ok(const struct pair *pr, const char *what)
{
	if (pr->c.rc != 0 || pr->s.rc != 0)
		fail_msg("%s: initiator %d (%s), target %d (%s)", what, pr->c.rc, pr->c.err ? pr->c.err : "",
			 pr->s.rc, pr->s.err ? pr->s.err : "");
	if (pr->c.s.errors || pr->s.s.errors)
		fail_msg("%s: %llu / %llu wrong bytes", what, (unsigned long long)pr->c.s.errors,
			 (unsigned long long)pr->s.s.errors);
}

static void check_bw(const struct pair *pr, uint64_t want_msgs, const char *what)
{
	const struct net_samples *s = &pr->c.s;
	expect_ok(pr, what);
	if (want_msgs && s->msgs != want_msgs)
		fail_msg("%s: %llu messages, want %llu", what, (unsigned long long)s->msgs, (unsigned long long)want_msgs);
	assert_true(s->msgs > 0);
	assert_int_equal(s->bytes, s->msgs * pr->c.size);
	assert_true(s->seconds > 0);
	assert_int_equal(s->n_windows, s->msgs >= NET_WINDOWS ? NET_WINDOWS : 1);
	double sum = 0;
	for (int i = 0; i < s->n_windows; i++) {
		assert_true(s->window_s[i] >= 0);
		sum += s->window_s[i];
	}
	/* the slices add up to the run (with -b, each the slower side's) */
	assert_true(sum >= s->seconds * 0.999 - 1e-9);
	assert_null(pr->c.s.lat_us);
}

static void test_fake_bw(void **state)
{
	(void)state;
	static const enum net_test tests[] = { NET_WRITE_BW, NET_READ_BW, NET_SEND_BW };
	struct net_rdma_opts o = host_opts();
	char what[96];
	for (size_t t = 0; t < 3; t++)
		for (int qps = 1; qps <= 3; qps += 2)
			for (int bidir = 0; bidir <= 1; bidir++) {
				struct net_params p = params(tests[t], 65536, qps, bidir);
				struct pair pr;
				pair_open(&pr, &o, &o, &p);
				/* a sweep on one connection: receives left over, buffers re-filled */
				for (uint64_t size = 2; size <= 65536; size *= 32) {
					snprintf(what, sizeof(what), "test %d, %d QPs, -b %d, %llu B", (int)tests[t], qps, bidir,
						 (unsigned long long)size);
					pair_run(&pr, size, 250, 0);
					check_bw(&pr, 250ull * (uint64_t)qps * (bidir ? 2 : 1), what);
					assert_int_equal(pr.s.s.msgs, 0); /* the target fills nothing but errors */
				}
				snprintf(what, sizeof(what), "test %d, %d QPs, -b %d, -D 0.2", (int)tests[t], qps, bidir);
				pair_run(&pr, 4096, 0, 0.2);
				check_bw(&pr, 0, what);
				pair_close(&pr);
			}
}

static void check_lat(const struct pair *pr, size_t want_c, size_t want_s, const char *what)
{
	expect_ok(pr, what);
	if ((want_c && pr->c.s.n_lat != want_c) || (want_s && pr->s.s.n_lat != want_s))
		fail_msg("%s: %zu and %zu samples, want %zu and %zu", what, pr->c.s.n_lat, pr->s.s.n_lat, want_c, want_s);
	assert_true(pr->c.s.n_lat > 0);
	for (size_t i = 0; i < pr->c.s.n_lat; i++)
		assert_true(pr->c.s.lat_us[i] > 0 && pr->c.s.lat_us[i] < 1e6);
}

static void test_fake_lat(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	static const enum net_test tests[] = { NET_WRITE_LAT, NET_SEND_LAT, NET_READ_LAT };
	char what[64];
	for (size_t t = 0; t < 3; t++) {
		/* 300 iterations: the write_lat counter wraps after 254 */
		struct net_params p = params(tests[t], 4096, 2, false);
		struct pair pr;
		pair_open(&pr, &o, &o, &p);
		for (uint64_t size = 2; size <= 4096; size *= 64) {
			snprintf(what, sizeof(what), "test %d, %llu B", (int)tests[t], (unsigned long long)size);
			pair_run(&pr, size, 300, 0);
			check_lat(&pr, 300, tests[t] == NET_READ_LAT ? 0 : 299, what);
			if (tests[t] == NET_READ_LAT)
				assert_int_equal(pr.s.s.n_lat, 0);
		}
		snprintf(what, sizeof(what), "test %d, -D 0.1", (int)tests[t]);
		pair_run(&pr, 2, 0, 0.1);
		check_lat(&pr, 0, 0, what);
		assert_false(pr.c.s.capped);
		pair_close(&pr);
		/* a -D run stops at the samples it keeps (a run parameter of
		 * the endpoints), and says so */
		struct net_rdma_opts few = o;
		few.lat_max_samples = 500;
		pair_open(&pr, &few, &few, &p);
		/* -D far beyond what 500 round trips take even on a loaded
		 * machine (a loaded 2-CPU runner took 20 s for 393 of them):
		 * the run ends at the samples, long before the time */
		snprintf(what, sizeof(what), "test %d, -D 120, capped", (int)tests[t]);
		double t0 = clock_now();
		pair_run(&pr, 2, 0, 120);
		check_lat(&pr, 500, 0, what);
		assert_true(pr.c.s.capped);
		assert_true(clock_now() - t0 < 100);
		pair_close(&pr);
		/* -n beyond what is kept: refused by both ends, not truncated */
		few.lat_max_samples = 100;
		pair_open(&pr, &few, &few, &p);
		pair_run(&pr, 2, 101, 0);
		assert_int_equal(pr.c.rc, -EINVAL);
		assert_int_equal(pr.s.rc, -EINVAL);
		assert_non_null(strstr(pr.c.err, "keeps at most 100 samples"));
		pair_close(&pr);
	}
}

/* Corrupted transfers are counted, not hidden. */
static void test_fake_corrupt(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	static const enum net_test tests[] = { NET_WRITE_BW, NET_READ_BW, NET_SEND_BW };
	for (size_t t = 0; t < 3; t++) {
		struct net_params p = params(tests[t], 4096, 1, false);
		struct pair pr;
		pair_open(&pr, &o, &o, &p);
		/* every transfer damaged: the last one, checked, is too */
		fk.set("corrupt", 1);
		pair_run(&pr, 4096, 50, 0);
		fk.set("corrupt", 0);
		assert_int_equal(pr.c.rc, 0);
		assert_int_equal(pr.s.rc, 0);
		assert_int_equal(pr.c.s.errors, 1);
		assert_int_equal(pr.s.s.errors, tests[t] == NET_READ_BW ? 0 : 1);
		pair_run(&pr, 4096, 50, 0);
		expect_ok(&pr, "after corruption");
		pair_close(&pr);
	}
}

static void test_fake_describe(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	struct net_params p = params(NET_WRITE_BW, 0, 1, false);
	struct side sd = { .fd = -1 };
	struct net_rdma_desc d;
	assert_int_equal(open_side(&sd, &o, &p), 0);
	net_rdma_describe(sd.e, &d);
	assert_string_equal(d.dev, "fake_ib0");
	assert_int_equal(d.port, 1);
	assert_string_equal(d.link_layer, "InfiniBand");
	assert_int_equal(d.gid_index, 0);
	assert_string_equal(d.gid, "fe80:0000:0000:0000:0000:0000:0000:0001");
	assert_string_equal(d.gid_type, "IB");
	assert_int_equal(d.mtu, 4096);
	assert_true(fabs(d.rate_gbps - 200) < 1e-9); /* 4X HDR from the port attributes */
	assert_string_equal(d.mem, "host");
	net_rdma_close(sd.e);
	free(sd.err);

	/* -m below the port's MTU */
	p.mtu = 1500;
	assert_int_equal(open_side(&sd, &o, &p), 0);
	net_rdma_describe(sd.e, &d);
	assert_int_equal(d.mtu, 1024);
	net_rdma_close(sd.e);
	free(sd.err);
}

/* The errors of opening, each naming what is missing. */
static void expect_open_error(const struct net_rdma_opts *o, const char *sysroot, int rc, const char *text)
{
	struct net_rdma_env env = { .verbs_lib = getenv("FAKE_IBVERBS"), .sysroot = sysroot };
	struct net_params p = params(NET_WRITE_BW, 4096, 1, false);
	struct net_rdma *e = NULL;
	char *err = NULL;
	int r = net_rdma_open_env(&env, o, &p, 4096, &e, &err);
	if (r != rc || !err || !strstr(err, text))
		fail_msg("open: %d '%s', want %d '%s'", r, err ? err : "", rc, text);
	assert_null(e);
	free(err);
}

static void test_fake_open_errors(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	char *fixture = tu_fixture("h100-8x-cx7-roce");

	setenv("FAKE_IBVERBS_DEVICES", "0", 1);
	expect_open_error(&o, fk.empty_root, -ENODEV, "no RDMA device: /sys/class/infiniband is empty");
	expect_open_error(&o, fixture, -ENODEV,
			  "libibverbs lists none, but /sys/class/infiniband has mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, "
			  "mlx5_5, mlx5_6, mlx5_7: is ib_uverbs loaded");
	setenv("FAKE_IBVERBS_DEVICES", "2", 1);
	setenv("FAKE_IBVERBS_STATE", "down", 1);
	expect_open_error(&o, fk.empty_root, -ENETDOWN, "no RDMA device has port 1 ACTIVE (fake_ib0: DOWN, fake_ib1: DOWN)");
	o.dev = "fake_ib1";
	expect_open_error(&o, fk.empty_root, -ENETDOWN, "fake_ib1 port 1 is DOWN, not ACTIVE");
	unsetenv("FAKE_IBVERBS_STATE");
	o.dev = "mlx5_9";
	expect_open_error(&o, fk.empty_root, -ENODEV, "no RDMA device named 'mlx5_9' (libibverbs lists fake_ib0, fake_ib1)");
	o.dev = NULL;
	o.port = 2;
	expect_open_error(&o, fk.empty_root, -ENETDOWN,
			  "no RDMA device has port 2 ACTIVE (fake_ib0: ibv_query_port(fake_ib0, port 2): Invalid argument, "
			  "fake_ib1: ibv_query_port(fake_ib1, port 2): Invalid argument)");
	o.dev = "fake_ib0";
	expect_open_error(&o, fk.empty_root, -EINVAL, "ibv_query_port(fake_ib0, port 2): Invalid argument");
	o.dev = NULL;
	o.port = 1;
	setenv("FAKE_IBVERBS_LINK", "eth", 1);
	expect_open_error(&o, fk.empty_root, -ENOENT, "fake_ib0 port 1 is not in sysfs, so no GID can be chosen");
	o.gid_index = 5;
	expect_open_error(&o, fk.empty_root, -ENOENT, "GID index 5 of fake_ib0 port 1 is empty");
	unsetenv("FAKE_IBVERBS_LINK");
	unsetenv("FAKE_IBVERBS_DEVICES");
	free(fixture);
}

/* RoCE: a GID given with -x, the GRH on every QP (the double refuses RTR
 * without one on Ethernet). */
static void test_fake_roce(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	struct net_params p = params(NET_SEND_BW, 8192, 2, true);
	struct pair pr;
	struct net_rdma_desc d;
	setenv("FAKE_IBVERBS_LINK", "eth", 1);
	o.gid_index = 3;
	pair_open(&pr, &o, &o, &p);
	net_rdma_describe(pr.c.e, &d);
	assert_string_equal(d.link_layer, "Ethernet");
	assert_string_equal(d.gid, "0000:0000:0000:0000:0000:ffff:0a00:0001");
	assert_int_equal(d.gid_index, 3);
	pair_run(&pr, 8192, 100, 0);
	check_bw(&pr, 400, "RoCE send_bw -b");
	pair_close(&pr);
	unsetenv("FAKE_IBVERBS_LINK");
}

/* GPU memory through the fake libcuda (host memory behind it): no
 * DMA-BUF there, so peer memory; write_lat refuses on both ends. */
static void test_fake_cuda(void **state)
{
	(void)state;
	struct net_rdma_opts g = host_opts(), h = host_opts();
	struct net_rdma_desc d;
	struct pair pr;
	void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu) {
		print_message("no fake libcuda.so.1 on LD_LIBRARY_PATH: skipped\n");
		skip();
	}
	int (*allocs)(void) = (int (*)(void))dlsym(cu, "fake_cuda_live_allocs");
	g.mem = NET_MEM_CUDA;
	static const enum net_test tests[] = { NET_WRITE_BW, NET_READ_BW, NET_SEND_BW, NET_SEND_LAT, NET_READ_LAT };
	for (size_t t = 0; t < 5; t++) {
		struct net_params p = params(tests[t], 65536, 2, tests[t] == NET_SEND_BW);
		pair_open(&pr, &g, &h, &p);
		net_rdma_describe(pr.c.e, &d);
		assert_string_equal(d.mem, "cuda:0 (NVIDIA Fake GPU, 0000:18:00.0) via nvidia_peermem");
		pair_run(&pr, 65536, 64, 0);
		expect_ok(&pr, "GPU memory");
		pair_close(&pr);
	}
	struct net_params p = params(NET_WRITE_LAT, 2, 1, false);
	pair_open(&pr, &h, &g, &p);
	pair_run(&pr, 2, 10, 0);
	assert_int_equal(pr.s.rc, -ENOTSUP);
	assert_non_null(strstr(pr.s.err, "write_lat polls the receive buffer from the CPU"));
	assert_int_equal(pr.c.rc, -ENOTSUP);
	assert_non_null(strstr(pr.c.err, "the peer failed: write_lat polls"));
	pair_close(&pr);
	if (allocs)
		assert_int_equal(allocs(), 0);
	dlclose(cu);
}

/* Both ends must run the same; a bad size is refused on both. */
static void test_fake_refusals(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	struct net_params p = params(NET_WRITE_BW, 8192, 1, false);
	struct pair pr;
	pthread_t t;
	pair_open(&pr, &o, &o, &p);
	pr.c.size = 8192;
	pr.s.size = 4096;
	pr.c.iters = pr.s.iters = 10;
	pr.c.deadline = pr.s.deadline = clock_now() + 10;
	assert_int_equal(pthread_create(&t, NULL, side_run, &pr.s), 0);
	side_run(&pr.c);
	pthread_join(t, NULL);
	assert_int_equal(pr.s.rc, -EPROTO);
	assert_non_null(strstr(pr.s.err, "both ends must run the same"));
	assert_int_equal(pr.c.rc, -EPROTO);
	assert_non_null(strstr(pr.c.err, "the peer failed: the peer runs"));

	pair_run(&pr, 1 << 20, 10, 0); /* larger than the buffers */
	assert_int_equal(pr.c.rc, -EINVAL);
	assert_int_equal(pr.s.rc, -EINVAL);
	assert_non_null(strstr(pr.c.err, "the buffers hold 1 .. 8192 bytes"));

	pair_run(&pr, 8192, 10, 0); /* and the connection still works */
	check_bw(&pr, 10, "after refusals");

	char *err = NULL;
	uint8_t blob[72];
	assert_int_equal(net_rdma_info(pr.s.e, blob, sizeof(blob)), 0);
	assert_int_equal(net_rdma_connect(pr.c.e, blob, sizeof(blob), &err), -EISCONN);
	free(err);
	err = NULL;
	assert_int_equal(net_rdma_connect(pr.c.e, blob, 10, &err), -EMSGSIZE);
	assert_non_null(strstr(err, "the peer's QP attributes"));
	free(err);
	pair_close(&pr);
}

/* A target that never answers: the deadline; one that goes away: a reset. */
static void test_fake_deadlines(void **state)
{
	(void)state;
	struct net_rdma_opts o = host_opts();
	struct net_params p = params(NET_SEND_BW, 4096, 1, false);
	struct pair pr;
	pair_open(&pr, &o, &o, &p);
	pr.c.size = 4096;
	pr.c.iters = 10;
	pr.c.deadline = clock_now() + 0.3;
	side_run(&pr.c);
	assert_int_equal(pr.c.rc, -ETIMEDOUT);
	assert_non_null(strstr(pr.c.err, "waiting for READY from the peer: the deadline passed"));
	pair_close(&pr);

	pair_open(&pr, &o, &o, &p);
	close(pr.s.fd);
	pr.s.fd = -1;
	pr.c.size = 4096;
	pr.c.iters = 10;
	pr.c.deadline = clock_now() + 5;
	side_run(&pr.c);
	if (pr.c.rc != -ECONNRESET && pr.c.rc != -EPIPE)
		fail_msg("peer gone: %d %s", pr.c.rc, pr.c.err);
	pair_close(&pr);

	/* the target waits for a START that does not come */
	pair_open(&pr, &o, &o, &p);
	pr.s.size = 4096;
	pr.s.iters = 10;
	pr.s.deadline = clock_now() + 0.2;
	side_run(&pr.s);
	assert_int_equal(pr.s.rc, -ETIMEDOUT);
	assert_non_null(strstr(pr.s.err, "waiting for START"));
	pair_close(&pr);
}


struct runner {
	struct side *sd;
	double ended;
};

static void *side_run_timed(void *arg)
{
	struct runner *rn = arg;
	side_run(rn->sd);
	rn->ended = clock_now();
	return NULL;
}

/* A peer whose process ends mid-run (its control connection closed under
 * a -D 20 run): the other side stops within a fraction of a second and
 * says so, whichever side was polling, in every test. */
static void test_fake_peer_gone(void **state)
{
	(void)state;
	static const enum net_test tests[] = { NET_WRITE_BW, NET_READ_BW, NET_SEND_BW,
					       NET_WRITE_LAT, NET_READ_LAT, NET_SEND_LAT };
	struct net_rdma_opts o = host_opts();
	for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++) {
		struct net_params p = params(tests[t], 4096, 1, false);
		struct pair pr;
		pthread_t tc, ts;
		pair_open(&pr, &o, &o, &p);
		pr.c.size = pr.s.size = 4096;
		pr.c.duration = pr.s.duration = 20;
		pr.c.deadline = pr.s.deadline = clock_now() + 30;
		struct runner rc = { .sd = &pr.c }, rs = { .sd = &pr.s };
		assert_int_equal(pthread_create(&ts, NULL, side_run_timed, &rs), 0);
		assert_int_equal(pthread_create(&tc, NULL, side_run_timed, &rc), 0);
		usleep(300 * 1000);
		double cut = clock_now();
		shutdown(pr.c.fd, SHUT_RDWR); /* what the kernel does when the initiator's process ends */
		assert_int_equal(pthread_join(ts, NULL), 0);
		assert_int_equal(pthread_join(tc, NULL), 0);
		if (pr.s.rc != -EPIPE && pr.s.rc != -ECONNRESET)
			fail_msg("%s: the target ended with %d (%s)", net_test_name(tests[t]), pr.s.rc,
				 pr.s.err ? pr.s.err : "");
		if (pr.s.rc == -EPIPE)
			assert_non_null(strstr(pr.s.err, "the peer closed the control connection"));
		assert_true(pr.c.rc < 0);
		if (rs.ended - cut > 2 || rc.ended - cut > 2)
			fail_msg("%s: %.2f s and %.2f s after the peer went", net_test_name(tests[t]), rs.ended - cut,
				 rc.ended - cut);
		pair_close(&pr);
	}
}

/* A run that fails on one side mid-run (the fake's "fail": a request's
 * retries exhausted, its QP in the error state): the other side, still
 * polling for a message that will not come, hears the failure over the
 * control connection at once and names it, in every test, whichever side
 * the failed request was on. */
static void test_fake_peer_failed(void **state)
{
	(void)state;
	static const enum net_test tests[] = { NET_WRITE_BW, NET_READ_BW, NET_SEND_BW,
					       NET_WRITE_LAT, NET_READ_LAT, NET_SEND_LAT };
	struct net_rdma_opts o = host_opts();
	for (size_t t = 0; t < sizeof(tests) / sizeof(tests[0]); t++)
		for (int v = 0; v < (t < 3 ? 4 : 2); v++) {
			/* ping-pongs: one side's request, then the other's; bandwidth
			 * tests also with -b (both sides' requests) and 3 QPs */
			long nth = 50 + (v & 1);
			bool bidir = v >= 2;
			struct net_params p = params(tests[t], 4096, bidir ? 3 : 1, bidir);
			struct pair pr;
			pair_open(&pr, &o, &o, &p);
				fk.set("fail", nth);
			double t0 = clock_now();
			pair_run(&pr, 4096, 0, 20);
			double took = clock_now() - t0;
			fk.set("fail", 0);
			if (pr.c.rc >= 0 || pr.s.rc >= 0 || took > 5)
				fail_msg("%s%s, request %ld fails: initiator %d (%s), target %d (%s), %.1f s",
					 net_test_name(tests[t]), bidir ? " -b -q 3" : "", nth, pr.c.rc, pr.c.err ? pr.c.err : "", pr.s.rc,
					 pr.s.err ? pr.s.err : "", took);
			/* one side names the completion error, the other the peer's failure */
			const char *a = pr.c.err, *b = pr.s.err;
			if (!strstr(a, "the peer failed") && !strstr(b, "the peer failed"))
				fail_msg("%s: neither side names the peer's failure: \"%s\" / \"%s\"",
					 net_test_name(tests[t]), a, b);
			pair_close(&pr);
		}
}

static int run_mode(const char *mode)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_choose_gid_built),
		cmocka_unit_test(test_choose_gid_edges),
		cmocka_unit_test(test_choose_gid_fixtures),
		cmocka_unit_test(test_counters_delta),
		cmocka_unit_test(test_counters_fixture),
		cmocka_unit_test(test_info_roundtrip),
		cmocka_unit_test(test_info_refused),
		cmocka_unit_test(test_wire_random),
		cmocka_unit_test(test_sync_codec),
		cmocka_unit_test(test_buf_bytes),
	};
	const struct CMUnitTest sys[] = {
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_system_library),
	};
	const struct CMUnitTest fake[] = {
		cmocka_unit_test(test_fake_describe),
		cmocka_unit_test(test_fake_open_errors),
		cmocka_unit_test(test_fake_bw),
		cmocka_unit_test(test_fake_lat),
		cmocka_unit_test(test_fake_corrupt),
		cmocka_unit_test(test_fake_roce),
		cmocka_unit_test(test_fake_cuda),
		cmocka_unit_test(test_fake_refusals),
		cmocka_unit_test(test_fake_deadlines),
		cmocka_unit_test(test_fake_peer_gone),
		cmocka_unit_test(test_fake_peer_failed),
	};
	if (!strcmp(mode, "pure"))
		return cmocka_run_group_tests_name("net_rdma pure", pure, NULL, NULL);
	if (!strcmp(mode, "system"))
		return cmocka_run_group_tests_name("net_rdma system", sys, NULL, NULL);
	if (!strcmp(mode, "fake"))
		return cmocka_run_group_tests_name("net_rdma fake", fake, fake_setup, fake_teardown);
	fprintf(stderr, "usage: test_net_rdma pure|system|fake\n");
	return 2;
}

int main(int argc, char **argv)
{
	return run_mode(argc > 1 ? argv[1] : "pure");
}
