/* Unit tests for cluster mode (src/cluster): the node record from a real
 * fixture and its JSON round trip, the strict parser against hostile
 * input, the vote (groups by shape, majorities, ties, absent facts, groups
 * too small to vote), the comparison with a golden record, hostlists and
 * the renderers. */
#define _GNU_SOURCE
#include "testutil.h"
#include "cluster/cluster.h"
#include "cluster/node.h"
#include "checks/expect.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "inventory/inventory.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reachable record named name with the facts given as "k=v" strings
 * (sorted here) and fails failing findings. */
static void mk(struct node_record *r, const char *name, unsigned fails, const char *const *facts)
{
	*r = (struct node_record){ .node = strdup(name), .version = strdup("0.1.0"), .reachable = true };
	r->counts[STATUS_OK] = 10;
	r->counts[STATUS_FAIL] = fails;
	r->reason = strdup(fails ? "gpuready 1 fail 0 warn: rdma.mtu mlx5_0" : "gpuready ok: 10 ok, 0 skip");
	for (size_t i = 0; facts && facts[i]; i++)
		strv_add(&r->facts, facts[i]);
	strv_sort(&r->facts);
	r->shape = facts_shape(&r->facts);
	if (fails) {
		r->findings = calloc(1, sizeof(*r->findings));
		r->findings[0] = (struct record_finding){ .id = strdup("rdma.mtu"), .subject = strdup("mlx5_0"),
							  .message = strdup("MTU 1500"), .hint = strdup("`ip link`"),
							  .status = STATUS_FAIL };
		r->n_findings = 1;
	}
}

static void free_all(struct node_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		record_free(&r[i]);
}

static char *to_text(const struct node_record *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(record_write_json(r, f), 0);
	fclose(f);
	return buf;
}

/* The record of the healthy fixture, built through the real checks, parses
 * back to the same record. */
static void test_record_roundtrip(void **state)
{
	(void)state;
	char *dir = tu_fixture("h100-8x-cx7-roce");
	struct root *root;
	assert_int_equal(root_open(dir, &root), 0);
	struct site_expect e = { .tos = 104, .min_cuda = "12.0" };
	struct strv none = STRV_INIT;
	struct cluster_node_opts o = { .version = "0.1.0", .expect = &e, .only = &none, .skip = &none,
				       .fallback_name = "x" };
	struct node_record r, back;
	char *err = NULL;
	assert_int_equal(cluster_node_run(root, &o, &r, &err), 0);
	assert_string_equal(r.node, "gpu-h100-01");
	assert_string_equal(facts_get(&r.facts, "gpu.count"), "8");
	assert_string_equal(facts_get(&r.facts, "nic.fw.ConnectX-7"), "28.39.1002");
	assert_non_null(strstr(r.shape, "ConnectX-7"));
	char *text = to_text(&r);
	assert_int_equal(record_parse(text, strlen(text), &back, &err), 0);
	char *again = to_text(&back);
	assert_string_equal(text, again);
	free(text);
	free(again);
	record_free(&r);
	record_free(&back);
	root_free(root);
	free(dir);
}

/* Sets of values per model, keys cleaned, unread values left out. */
static void test_facts_sets(void **state)
{
	(void)state;
	struct rdma_port ports[2] = { { .num = 1, .rate_gbps = 400, .link_layer = "Ethernet", .roce_tos = 104 },
				      { .num = 1, .rate_gbps = 200, .link_layer = "Ethernet", .roce_tos = -1,
					.roce_tos_err = -ENOENT } };
	struct rdma_dev devs[3] = {
		{ .name = "mlx5_0", .hca_type = "MT 4129", .fw_ver = "28.39", .ports = &ports[0], .n_ports = 1 },
		{ .name = "mlx5_1", .hca_type = "MT 4129", .fw_ver = "28.36", .ports = &ports[1], .n_ports = 1 },
		{ .name = "mlx5_2", .hca_type = "MT 4129", .fw_ver = "28.39", .fw_ver_err = 0 },
	};
	struct inventory inv = { .parts = INV_RDMA, .kernel = { .release = "6.8\n" } };
	inv.rdma.v = devs;
	inv.rdma.n = 3;
	inv.modules.proc_err = -ENOENT;
	struct strv f = STRV_INIT;
	facts_collect(&inv, &f);
	assert_string_equal(facts_get(&f, "nic.fw.MT_4129"), "28.36,28.39");
	assert_string_equal(facts_get(&f, "nic.count.MT_4129"), "3");
	assert_string_equal(facts_get(&f, "nic.models"), "MT 4129");
	assert_string_equal(facts_get(&f, "rdma.rate.MT_4129"), "200,400");
	assert_string_equal(facts_get(&f, "rdma.roce_tos"), "104");
	assert_string_equal(facts_get(&f, "kernel.release"), "6.8?");
	assert_null(facts_get(&f, "modules.rdma"));     /* /proc/modules unread: absent */
	assert_null(facts_get(&f, "nvidia.driver"));
	assert_string_equal(facts_get(&f, "gpu.count"), "0");
	for (size_t i = 1; i < f.n; i++)
		assert_true(strcmp(f.v[i - 1], f.v[i]) < 0);
	char *shape = facts_shape(&f);
	assert_string_equal(shape, "no GPU / MT 4129");
	free(shape);
	strv_free(&f);
}

static int parse_err(const char *text, char **err)
{
	struct node_record r = { 0 };
	int ret = record_parse(text, strlen(text), &r, err);
	if (ret == 0)
		record_free(&r);
	return ret;
}

#define HEAD "{\"schema_version\":1,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{\"ok\":1,\"warn\":0," \
	     "\"fail\":0,\"skip\":0,\"info\":0},\"checks\":[]"

/* Every malformed record is refused with a reason; none crashes. */
static void test_record_hostile(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "[]", "null", "{", HEAD ",\"facts\":[]} x", HEAD "}", /* no facts */
		HEAD ",\"facts\":[],\"extra\":1}", HEAD ",\"facts\":[\"b=1\",\"a=1\"]}", HEAD ",\"facts\":[\"a=1\",\"a=2\"]}",
		HEAD ",\"facts\":[\"=1\"]}", HEAD ",\"facts\":[\"novalue\"]}", HEAD ",\"facts\":[\"a b=1\"]}",
		HEAD ",\"facts\":[\"a=\\u0001\"]}", HEAD ",\"facts\":[1]}", HEAD ",\"facts\":{}}",
		HEAD ",\"facts\":[\"a=x\\u0000y\"]}",
		"{\"schema_version\":2,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{},\"checks\":[],\"facts\":[]}",
		"{\"schema_version\":1,\"node\":\"../etc\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{\"ok\":1,\"warn\":0,"
		"\"fail\":0,\"skip\":0,\"info\":0},\"checks\":[],\"facts\":[]}",
		"{\"schema_version\":1,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{\"ok\":-1,\"warn\":0,"
		"\"fail\":0,\"skip\":0,\"info\":0},\"checks\":[],\"facts\":[]}",
		"{\"schema_version\":1,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{\"ok\":1,\"warn\":0,"
		"\"fail\":0,\"skip\":0},\"checks\":[],\"facts\":[]}",
		"{\"schema_version\":1,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{\"ok\":1,\"warn\":0,"
		"\"fail\":0,\"skip\":0,\"info\":0},\"checks\":[{\"id\":\"a\",\"status\":\"ok\",\"subject\":\"s\","
		"\"message\":\"m\"}],\"facts\":[]}",
		"{\"schema_version\":1,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{\"ok\":1,\"warn\":0,"
		"\"fail\":0,\"skip\":0,\"info\":0},\"checks\":[{\"id\":\"a\",\"status\":\"fail\"}],\"facts\":[]}",
		"{\"schema_version\":1,\"node\":1,\"version\":\"1\",\"reason\":\"r\",\"summary\":{},\"checks\":[],\"facts\":[]}",
		"{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}",
		HEAD ",\"facts\":[\"a=\xff\xfe\"]}", /* not UTF-8 */
		HEAD ",\"facts\":[],}",                /* trailing comma: not strict JSON */
		/* "0 fail" beside a failing finding: a record cannot claim success */
		"{\"schema_version\":1,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\",\"summary\":{\"ok\":1,\"warn\":0,"
		"\"fail\":0,\"skip\":0,\"info\":0},\"checks\":[{\"id\":\"a\",\"status\":\"fail\",\"subject\":\"s\","
		"\"message\":\"m\"}],\"facts\":[]}",
		/* a line break in the reason could forge another node's line */
		"{\"schema_version\":1,\"node\":\"n1\",\"version\":\"1\",\"reason\":\"r\\npass gpu07\",\"summary\":{\"ok\":1,"
		"\"warn\":0,\"fail\":0,\"skip\":0,\"info\":0},\"checks\":[],\"facts\":[]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *err = NULL;
		int r = parse_err(bad[i], &err);
		if (r == 0)
			fail_msg("accepted bad record %zu: %s", i, bad[i]);
		assert_non_null(err);
		free(err);
	}
	char *err = NULL;
	assert_int_equal(parse_err(HEAD ",\"facts\":[\"a.b.c=1\",\"a.b=2\"]}", &err), 0);
	/* a string over the bound, and a record over the size bound */
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, HEAD ",\"facts\":[\"a=");
	for (unsigned i = 0; i < RECORD_MAX_STRING; i++)
		strbuf_addch(&sb, 'x');
	strbuf_adds(&sb, "\"]}");
	assert_true(parse_err(sb.buf, &err) < 0);
	free(err);
	err = NULL;
	strbuf_reset(&sb);
	strbuf_adds(&sb, HEAD ",\"facts\":[]}");
	while (sb.len <= RECORD_MAX_BYTES)
		strbuf_addch(&sb, ' ');
	assert_int_equal(parse_err(sb.buf, &err), -E2BIG);
	free(err);
	err = NULL;
	/* a million tiny values is refused before json-c builds them; commas
	 * inside strings do not count */
	strbuf_reset(&sb);
	strbuf_adds(&sb, HEAD ",\"facts\":[],\"x\":[0");
	for (unsigned i = 0; i < 1000000; i++)
		strbuf_adds(&sb, ",0");
	strbuf_adds(&sb, "]}");
	assert_int_equal(parse_err(sb.buf, &err), -E2BIG);
	assert_non_null(strstr(err, "JSON values"));
	free(err);
	err = NULL;
	/* 900 facts of 4,000 commas each: 3.6 million separators, all inside
	 * strings, in a valid record */
	strbuf_reset(&sb);
	strbuf_adds(&sb, HEAD ",\"facts\":[");
	for (unsigned f = 0; f < 900; f++) {
		strbuf_addf(&sb, "%s\"k%04u=", f ? "," : "", f);
		for (unsigned i = 0; i < 4000; i++)
			strbuf_addch(&sb, i % 2 ? '[' : ',');
		strbuf_addch(&sb, '"');
	}
	strbuf_adds(&sb, "]}");
	assert_true(sb.len < RECORD_MAX_BYTES);
	if (parse_err(sb.buf, &err) != 0)
		fail_msg("a record with commas inside its strings: %s", err);
	strbuf_release(&sb);
}

/* Random token soup never crashes the parser nor passes as a record
 * unless it is one. */
static void test_record_garbage(void **state)
{
	(void)state;
	static const char *const tok[] = { "{", "}", "[", "]", ",", ":", "\"node\"", "\"facts\"", "\"a=1\"", "1", "-1",
					   "null", "\"schema_version\"", "\"summary\"", "\"\\u0000\"", "\"\\ud800\"" };
	unsigned seed = 42;
	for (int i = 0; i < 3000; i++) {
		struct strbuf sb = STRBUF_INIT;
		tu_random_tokens(&sb, tok, sizeof(tok) / sizeof(*tok), 1 + (unsigned)i % 40, &seed);
		char *err = NULL;
		(void)parse_err(sb.buf, &err);
		free(err);
		strbuf_release(&sb);
	}
}

static const char *const H100[] = { "gpu.count=8", "gpu.ids=10de:2330", "gpu.model=H100", "nic.models=ConnectX-7",
				    NULL };

/* n nodes of the H100 shape with fw, mtu per node (NULL: absent). */
static void mk_h100(struct node_record *r, const char *name, const char *fw, const char *mtu)
{
	char f[64], m[64];
	snprintf(f, sizeof(f), "nic.fw.ConnectX-7=%s", fw ? fw : "");
	snprintf(m, sizeof(m), "rdma.mtu.ConnectX-7=%s", mtu ? mtu : "");
	const char *facts[] = { H100[0], H100[1], H100[2], H100[3], fw ? f : NULL, NULL, NULL };
	if (mtu)
		facts[fw ? 5 : 4] = m;
	mk(r, name, 0, facts);
}

static const struct drift_row *find_row(const struct drift *d, const char *key, enum drift_kind kind)
{
	for (size_t i = 0; i < d->n_rows; i++)
		if (!strcmp(d->rows[i].key, key) && d->rows[i].kind == kind)
			return &d->rows[i];
	return NULL;
}

/* A majority, a minority value, an absent fact; the GH200 node in its own
 * group of one is not flagged. */
static void test_drift_vote(void **state)
{
	(void)state;
	struct node_record r[6];
	mk_h100(&r[0], "n01", "28.39", "9000");
	mk_h100(&r[1], "n02", "28.39", "9000");
	mk_h100(&r[2], "n03", "28.36", "9000");
	mk_h100(&r[3], "n04", "28.39", NULL);
	mk_h100(&r[4], "n05", "28.39", "9000");
	static const char *const gh[] = { "gpu.model=GH200", "gpu.count=1", "gpu.ids=10de:2342", "nic.models=ConnectX-7",
					  "nic.fw.ConnectX-7=99", NULL };
	mk(&r[5], "gh1", 0, gh);
	struct drift d;
	drift_compute(r, 6, NULL, &d);
	assert_int_equal(d.n_groups, 2);
	assert_int_equal(d.n_rows, 2);
	const struct drift_row *fw = find_row(&d, "nic.fw.ConnectX-7", DRIFT_MINORITY);
	assert_non_null(fw);
	assert_string_equal(fw->values[0].value, "28.39");
	assert_int_equal(fw->values[0].n, 4);
	assert_string_equal(fw->values[1].value, "28.36");
	assert_int_equal(fw->values[1].n, 1);
	assert_int_equal(fw->values[1].nodes[0], 2);
	const struct drift_row *mtu = find_row(&d, "rdma.mtu.ConnectX-7", DRIFT_MINORITY);
	assert_non_null(mtu);
	assert_string_equal(mtu->values[1].value, FACT_ABSENT);
	assert_int_equal(mtu->values[1].nodes[0], 3);
	bool want[6] = { false, false, true, true, false, false };
	for (int i = 0; i < 6; i++)
		assert_int_equal(d.drifts[i], want[i]);
	assert_int_equal(cluster_exit_code(r, 6, &d), 1);
	drift_free(&d);
	free_all(r, 6);
}

/* A node that lost a GPU keeps its shape (the GPUs' PCI IDs) and is found
 * by the vote on gpu.count; a largest value short of half the group is a
 * split, not a majority. */
static void test_drift_lost_gpu(void **state)
{
	(void)state;
	struct node_record r[4];
	for (int i = 0; i < 3; i++)
		mk_h100(&r[i], i == 0 ? "m1" : i == 1 ? "m2" : "m3", "28.39", "9000");
	static const char *const seven[] = { "gpu.count=7", "gpu.ids=10de:2330", "gpu.model=H100",
					     "nic.fw.ConnectX-7=28.39", "nic.models=ConnectX-7",
					     "rdma.mtu.ConnectX-7=9000", NULL };
	mk(&r[3], "m4", 0, seven);
	struct drift d;
	drift_compute(r, 4, NULL, &d);
	assert_int_equal(d.n_groups, 1);
	const struct drift_row *cnt = find_row(&d, "gpu.count", DRIFT_MINORITY);
	assert_non_null(cnt);
	assert_string_equal(cnt->values[1].value, "7");
	assert_true(d.drifts[3]);
	assert_false(d.drifts[0]);
	assert_int_equal(cluster_exit_code(r, 4, &d), 1);
	drift_free(&d);
	free_all(r, 4);

	struct node_record p[5];
	const char *fw[] = { "1", "1", "2", "3", "4" };
	for (int i = 0; i < 5; i++) {
		char name[8];
		snprintf(name, sizeof(name), "p%d", i);
		mk_h100(&p[i], name, fw[i], "9000");
	}
	drift_compute(p, 5, NULL, &d);
	const struct drift_row *split = find_row(&d, "nic.fw.ConnectX-7", DRIFT_SPLIT);
	assert_non_null(split); /* 2 of 5 is no majority */
	for (int i = 0; i < 5; i++)
		assert_true(d.drifts[i]);
	drift_free(&d);
	free_all(p, 5);
}

/* Two against two: a split naming both sides; two nodes cannot vote. */
static void test_drift_tie(void **state)
{
	(void)state;
	struct node_record r[4];
	mk_h100(&r[0], "a1", "1", "9000");
	mk_h100(&r[1], "a2", "1", "9000");
	mk_h100(&r[2], "a3", "2", "9000");
	mk_h100(&r[3], "a4", "2", "9000");
	struct drift d;
	drift_compute(r, 4, NULL, &d);
	assert_int_equal(d.n_rows, 1);
	assert_int_equal(d.rows[0].kind, DRIFT_SPLIT);
	assert_int_equal(d.rows[0].n_values, 2);
	for (int i = 0; i < 4; i++)
		assert_true(d.drifts[i]);
	drift_free(&d);
	drift_compute(r + 1, 2, NULL, &d); /* a2 and a3 differ, but two cannot vote */
	assert_int_equal(d.n_groups, 1);
	assert_false(d.groups[0].votes);
	assert_int_equal(d.n_rows, 0);
	assert_int_equal(cluster_exit_code(r + 1, 2, &d), 0);
	drift_free(&d);
	free_all(r, 4);
}

/* With a golden record: a group of two is compared with it, a fact the
 * golden record has and no node has is named, and the vote still runs. */
static void test_drift_expect(void **state)
{
	(void)state;
	struct node_record r[2], g;
	mk_h100(&r[0], "b1", "28.39", "9000");
	mk_h100(&r[1], "b2", "28.36", NULL);
	static const char *const gf[] = { "gpu.model=H100", "gpu.count=8", "gpu.ids=10de:2330", "nic.models=ConnectX-7",
					  "nic.fw.ConnectX-7=28.39", "rdma.mtu.ConnectX-7=9000", "kernel.release=6.8",
					  NULL };
	mk(&g, "golden", 0, gf);
	struct drift d;
	drift_compute(r, 2, &g, &d);
	assert_true(d.groups[0].expected);
	const struct drift_row *fw = find_row(&d, "nic.fw.ConnectX-7", DRIFT_EXPECT);
	assert_non_null(fw);
	assert_string_equal(fw->values[0].value, "28.39");
	assert_int_equal(fw->values[0].n, 0);
	assert_string_equal(fw->values[1].value, "28.36");
	const struct drift_row *mtu = find_row(&d, "rdma.mtu.ConnectX-7", DRIFT_EXPECT);
	assert_non_null(mtu);
	assert_string_equal(mtu->values[1].value, FACT_ABSENT);
	const struct drift_row *k = find_row(&d, "kernel.release", DRIFT_EXPECT);
	assert_non_null(k);
	assert_int_equal(k->values[1].n, 2);
	assert_false(d.drifts[0] && !d.drifts[1]);
	drift_free(&d);
	free_all(r, 2);
	record_free(&g);
}

static void test_hostlist(void **state)
{
	(void)state;
	const char *names[] = { "node07", "node01", "node02", "node03", "login", "gpu9", "gpu10", "node1" };
	struct node_record r[8];
	size_t idx[8];
	for (size_t i = 0; i < 8; i++) {
		r[i] = (struct node_record){ .node = (char *)names[i] };
		idx[i] = i;
	}
	char *s = hostlist_compress(r, idx, 8);
	assert_string_equal(s, "gpu[9-10],login,node[1,01-03,07]");
	free(s);
}

/* The text names the drifted node and not the healthy ones; the JSON
 * parses; Prometheus series carry the node label. */
static void test_render(void **state)
{
	(void)state;
	struct node_record r[4];
	mk_h100(&r[0], "n01", "28.39", "9000");
	mk_h100(&r[1], "n02", "28.39", "9000");
	mk_h100(&r[2], "n03", "28.36", "9000");
	record_unreachable(&r[3], "n04", "unreadable: gone");
	free(r[1].reason);
	r[1].reason = strdup("gpuready 1 fail 0 warn: rdma.mtu mlx5_0");
	r[1].counts[STATUS_FAIL] = 1;
	struct drift d;
	drift_compute(r, 4, NULL, &d);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(cluster_write_text(r, 4, &d, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "4 nodes: 2 pass, 0 warn, 1 fail, 1 unreachable\n"));
	assert_non_null(strstr(buf, "n03: 28.36"));
	assert_non_null(strstr(buf, "n04: unreadable: gone"));
	assert_null(strstr(buf, "n01:"));
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(cluster_write_json(r, 4, &d, NULL, f), 0);
	fclose(f);
	json_object *o = json_tokener_parse(buf);
	assert_non_null(o);
	json_object_put(o);
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(cluster_write_prom_stream(r, 4, &d, f, 1.0), 0);
	fclose(f);
	assert_non_null(strstr(buf, "gpuready_cluster_drift{scope=\"cluster\",node=\"n03\",fact=\"nic.fw.ConnectX-7\","
				    "kind=\"majority\"} 1\n"));
	assert_non_null(strstr(buf, "gpuready_cluster_node_state{scope=\"cluster\",node=\"n04\",state=\"unreachable\"} 1"));
	free(buf);
	drift_free(&d);
	free_all(r, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_facts_sets),
		cmocka_unit_test(test_record_roundtrip), cmocka_unit_test(test_record_hostile),
		cmocka_unit_test(test_record_garbage),   cmocka_unit_test(test_drift_vote),
		cmocka_unit_test(test_drift_lost_gpu),
		cmocka_unit_test(test_drift_tie),        cmocka_unit_test(test_drift_expect),
		cmocka_unit_test(test_hostlist),         cmocka_unit_test(test_render),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
