/* Unit tests for cluster fix's grouping (src/cluster/fixgroup.c,
 * fixrender.c): the digest keeps what a plan would do and leaves out the
 * host's own noise, the strict parser refuses what is no plan, groups come
 * largest first with their hostlist, the order of --apply, what counts as
 * a failed apply, and the exit status. */
#define _GNU_SOURCE
#include "testutil.h"
#include "cluster/fixgroup.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plan as `fix --json` prints it: one sysctl remedy, one manual step;
 * its diff against a file that held `old`. */
static char *plan_text_old(const char *host, double ts, const char *value, const char *held, bool manual,
			   const char *old)
{
	return xasprintf(
		"{\"sysroot\":false,\"changes\":1,\"host\":\"%s\",\"timestamp\":%.1f,\"remedies\":[{\"id\":\"sysctl\","
		"\"title\":\"raise\",\"effect\":\"now\",\"disruptive\":false,\"held\":%s,\"pending\":false,"
		"\"targets\":[{\"check\":\"rdma.sockbuf\",\"subject\":\"net.core.rmem_max\"}],\"files\":[{\"path\":"
		"\"/etc/sysctl.d/90-gpuready.conf\",\"action\":\"create\",\"state\":false,\"content\":\"net.core."
		"rmem_max = %s\\n\",\"diff\":\"--- /etc/sysctl.d/90-gpuready.conf\\n-%s\\n\"}],\"commands\":[{\"argv\":[\"sysctl\",\"-w\","
		"\"net.core.rmem_max=%s\"],\"sets_path\":\"/proc/sys/net/core/rmem_max\",\"sets_value\":\"%s\\n\"}],"
		"\"notes\":[]}],\"manual\":[%s]}",
		host, ts, held ? held : "null", value, old, value, value,
		manual ? "{\"check\":\"rdma.mtu\",\"subject\":\"ens1\",\"status\":\"warn\",\"message\":\"m\",\"hint\":null,"
			 "\"why\":null}"
		       : "");
}

static char *plan_text(const char *host, double ts, const char *value, const char *held, bool manual)
{
	return plan_text_old(host, ts, value, held, manual, "net.core.rmem_max = 212992");
}

static void node(struct fix_node *n, const char *name, const char *text, int exit)
{
	char *err = NULL;
	if (fix_node_parse(n, name, text, strlen(text), exit, &err) < 0)
		fail_msg("%s: %s", name, err);
}

/* fix_cluster_text's output (malloc'd). */
static char *text_of(const struct fix_node *v, size_t n, const struct fix_rollout *ro)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(fix_cluster_text(v, n, ro, f), 0);
	fclose(f);
	return buf;
}

static void plan_node(struct fix_node *n, const char *name, const char *value, bool manual)
{
	char *t = plan_text(name, 1700000000.0 + (double)strlen(name), value, NULL, manual);
	node(n, name, t, 1);
	free(t);
}

/* The host, the time and why a remedy is held do not count; the new
 * content, the diff (what the file holds now), the commands, held or not
 * and the manual steps do. */
static void test_digest(void **state)
{
	(void)state;
	struct fix_node a, b, c, d, e;
	char *ta = plan_text("gpu01", 1.0, "268435456", NULL, true), *tb = plan_text("gpu02", 2.0, "268435456", NULL, true),
	     *tc = plan_text("gpu03", 3.0, "134217728", NULL, true), *td = plan_text("gpu04", 4.0, "268435456", "\"pid 1\"", true),
	     *te = plan_text("gpu05", 5.0, "268435456", NULL, false);
	node(&a, "gpu01", ta, 1);
	node(&b, "gpu02", tb, 1);
	node(&c, "gpu03", tc, 1);
	node(&d, "gpu04", td, 1);
	node(&e, "gpu05", te, 1);
	assert_string_equal(a.digest, b.digest);
	assert_string_not_equal(a.digest, c.digest);
	assert_string_not_equal(a.digest, d.digest);
	assert_string_not_equal(a.digest, e.digest);
	struct fix_node g;
	char *tg = plan_text_old("gpu06", 6.0, "268435456", NULL, true, "net.core.rmem_max = 4096");
	node(&g, "gpu06", tg, 1);
	assert_string_not_equal(a.digest, g.digest); /* the same change to another file: another group */
	fix_node_free(&g);
	free(tg);
	assert_int_equal(strlen(a.digest), FIX_DIGEST_HEX);
	assert_int_equal(a.changes, 1);

	/* held for another reason (other processes) is the same plan */
	char *td2 = plan_text("gpu06", 6.0, "268435456", "\"pid 2\"", true);
	struct fix_node d2;
	node(&d2, "gpu06", td2, 1);
	assert_string_equal(d.digest, d2.digest);

	/* the canonical text names what counts */
	struct strbuf sb = STRBUF_INIT;
	fix_plan_canon(a.plan, &sb);
	tu_assert_has(sb.buf, "file 30:/etc/sysctl.d/90-gpuready.conf");
	tu_assert_has(sb.buf, "arg 27:net.core.rmem_max=268435456");
	tu_assert_has(sb.buf, "manual 8:rdma.mtu");
	assert_null(strstr(sb.buf, "gpu01"));
	strbuf_release(&sb);
	struct fix_node *all[] = { &a, &b, &c, &d, &e, &d2 };
	for (size_t i = 0; i < 6; i++)
		fix_node_free(all[i]);
	free(ta), free(tb), free(tc), free(td), free(te), free(td2);
}

/* Field boundaries are part of the text: moving a byte from one field to
 * the next changes the digest. */
static void test_digest_boundaries(void **state)
{
	(void)state;
	const char *x = "{\"changes\":1,\"remedies\":[{\"id\":\"a\",\"held\":null,\"pending\":false,\"files\":[],"
			"\"commands\":[{\"argv\":[\"ab\",\"c\"]}]}],\"manual\":[]}";
	const char *y = "{\"changes\":1,\"remedies\":[{\"id\":\"a\",\"held\":null,\"pending\":false,\"files\":[],"
			"\"commands\":[{\"argv\":[\"a\",\"bc\"]}]}],\"manual\":[]}";
	struct fix_node a, b;
	node(&a, "a", x, 1);
	node(&b, "b", y, 1);
	assert_string_not_equal(a.digest, b.digest);
	fix_node_free(&a);
	fix_node_free(&b);
}

/* What is no plan is refused with a reason, and nothing is kept. */
static void test_parse_hostile(void **state)
{
	(void)state;
	const char *bad[] = {
		"",
		"Welcome to gpu07!",
		"[]",
		"{\"changes\":-1,\"remedies\":[],\"manual\":[]}",
		"{\"changes\":\"1\",\"remedies\":[],\"manual\":[]}",
		"{\"changes\":1,\"remedies\":{},\"manual\":[]}",
		"{\"changes\":1,\"remedies\":[{\"id\":1}],\"manual\":[]}",
		"{\"changes\":1,\"remedies\":[{\"id\":\"a\",\"pending\":false,\"files\":[{\"path\":\"/x\"}],"
		"\"commands\":[]}],\"manual\":[]}",
		"{\"changes\":1,\"remedies\":[{\"id\":\"a\",\"pending\":false,\"files\":[],\"commands\":[{\"argv\":[1]}]}],"
		"\"manual\":[]}",
		"{\"changes\":0,\"remedies\":[],\"manual\":[{\"check\":\"x\"}]}",
		"{\"changes\":0,\"remedies\":[],\"manual\":[]} trailing",
		"{\"changes\":0,\"remedies\":[],\"manual\":[]",
	};
	/* a NUL after the plan is not blank space */
	const char nul[] = "{\"changes\":0,\"remedies\":[],\"manual\":[]}\n\0x";
	struct fix_node z = { 0 };
	char *zerr = NULL;
	assert_int_equal(fix_node_parse(&z, "h", nul, sizeof(nul) - 1, 0, &zerr), -EINVAL);
	free(zerr);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct fix_node n = { 0 };
		char *err = NULL;
		if (fix_node_parse(&n, "h", bad[i], strlen(bad[i]), 1, &err) == 0)
			fail_msg("accepted: %s", bad[i]);
		tu_assert_has(err, "no fix plan");
		assert_null(n.plan);
		free(err);
	}
	const char *ok = "{\"changes\":0,\"remedies\":[],\"manual\":[]}\n";
	struct fix_node n;
	node(&n, "h", ok, 0);
	assert_int_equal(n.changes, 0);
	fix_node_free(&n);
}

/* Groups: the largest first, ties by the first name; unreachable nodes in
 * none; the hostlist in the text. */
static void test_groups(void **state)
{
	(void)state;
	struct fix_node v[7];
	const char *same[] = { "node01", "node02", "node03", "node05" };
	for (size_t i = 0; i < 4; i++)
		plan_node(&v[i], same[i], "268435456", true);
	plan_node(&v[4], "node04", "134217728", true);
	plan_node(&v[5], "gpu9", "1", false);
	fix_node_unreachable(&v[6], "node06", "remote shell exited with 255: refused");
	fix_nodes_sort(v, 7);
	struct fix_group *g = NULL;
	size_t ng = fix_nodes_group(v, 7, &g);
	assert_int_equal(ng, 3);
	assert_int_equal(g[0].n, 4);
	assert_string_equal(v[g[0].idx[0]].name, "node01");
	assert_string_equal(v[g[0].idx[3]].name, "node05");
	assert_int_equal(g[1].n, 1);
	assert_string_equal(v[g[1].idx[0]].name, "gpu9");
	assert_string_equal(v[g[2].idx[0]].name, "node04");
	fix_groups_free(g, ng);

	struct fix_rollout ro = { 0 };
	char *buf = text_of(v, 7, &ro);
	tu_assert_has(buf, "7 nodes: 6 planned (3 distinct plans), 1 could not be planned");
	tu_assert_has(buf, "nodes node[01-03,05]: same 1 change, 1 manual step (plan ");
	tu_assert_has(buf, "node node04: other plan: 1 change");
	tu_assert_has(buf, "  node06: remote shell exited with 255: refused");
	assert_null(strstr(buf, "--apply"));
	free(buf);
	assert_int_equal(fix_cluster_exit(v, 7, &ro), 1);
	for (size_t i = 0; i < 7; i++)
		fix_node_free(&v[i]);
}

/* --apply: only planned nodes with changes, in name order; a failed batch
 * leaves the later ones untouched, and the output says so. */
static void test_apply_order(void **state)
{
	(void)state;
	struct fix_node v[5];
	plan_node(&v[0], "n3", "1", false);
	plan_node(&v[1], "n1", "1", false);
	node(&v[2], "n2", "{\"changes\":0,\"remedies\":[],\"manual\":[]}", 0);
	fix_node_unreachable(&v[3], "n0", "no answer within 120 s");
	plan_node(&v[4], "n4", "1", false);
	fix_nodes_sort(v, 5);
	size_t order[6];
	size_t m = fix_apply_order(v, 5, order);
	assert_int_equal(m, 3);
	assert_string_equal(v[order[0]].name, "n1");
	assert_string_equal(v[order[1]].name, "n3");
	assert_string_equal(v[order[2]].name, "n4");

	struct fix_rollout ro = { .asked = true, .batch = 1, .batches = 3, .done = 1, .stopped = true };
	v[order[0]].apply = FIXA_APPLIED, v[order[0]].batch = 1;
	v[order[1]].apply = FIXA_FAILED, v[order[1]].batch = 2;
	v[order[1]].apply_why = xstrdup("1 remedy failed; FAILED /etc/sysctl.d/90-gpuready.conf: Read-only file system");
	fix_nodes_untouched(v, order, 2, m);
	assert_int_equal(v[order[2]].apply, FIXA_UNTOUCHED);
	char *buf = text_of(v, 5, &ro);
	tu_assert_has(buf, "--apply in batches of 1: 1 of 3 batches done, stopped at the first batch with a failure");
	tu_assert_has(buf, "  batch 1: n1 applied\n");
	tu_assert_has(buf, "  batch 2: n3 FAILED\n");
	tu_assert_has(buf, "failed n3: 1 remedy failed; FAILED /etc/sysctl.d/90-gpuready.conf: Read-only file system");
	tu_assert_has(buf, "not touched: n4\n");
	free(buf);
	assert_int_equal(fix_cluster_exit(v, 5, &ro), 1);

	/* the JSON has the rollout */
	buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(fix_cluster_json(v, 5, &ro, f), 0);
	fclose(f);
	struct json_object *o = json_tokener_parse(buf), *x;
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "apply", &x));
	assert_int_equal(json_object_get_int(json_object_object_get(x, "done")), 1);
	assert_true(json_object_get_boolean(json_object_object_get(x, "stopped")));
	assert_int_equal(json_object_array_length(json_object_object_get(x, "nodes")), 3);
	assert_int_equal(json_object_array_length(json_object_object_get(o, "unplanned")), 1);
	json_object_put(o);
	free(buf);
	for (size_t i = 0; i < 5; i++)
		fix_node_free(&v[i]);
}

/* A failed apply: exit 1 with failed remedies (the lines that failed are
 * quoted), or exit 2; exit 1 with none failed is a check that still fails. */
static void test_apply_failed(void **state)
{
	(void)state;
	char *why = NULL;
	struct json_object *ok = json_tokener_parse("{\"failed\":0,\"applied\":[\"ran: sysctl -w a=1: exit 0\"]}");
	struct json_object *bad = json_tokener_parse(
		"{\"failed\":1,\"applied\":[\"ran: sysctl -w a=1: exit 0\",\"ran: sysctl -w b=1: exit 255: sysctl: "
		"permission denied\",\"wrote /etc/x\"]}");
	assert_false(fix_apply_failed(0, ok, &why));
	assert_false(fix_apply_failed(1, ok, &why));
	assert_true(fix_apply_failed(1, bad, &why));
	assert_string_equal(why, "1 remedy failed; ran: sysctl -w b=1: exit 255: sysctl: permission denied");
	free(why);
	assert_true(fix_apply_failed(2, ok, &why));
	tu_assert_has(why, "exited with 2");
	free(why);
	assert_true(fix_apply_failed(1, NULL, &why));
	free(why);
	json_object_put(ok);
	json_object_put(bad);
}

/* Nothing to change anywhere: exit 0. */
static void test_exit_clean(void **state)
{
	(void)state;
	struct fix_node v[2];
	node(&v[0], "a", "{\"changes\":0,\"remedies\":[],\"manual\":[]}", 0);
	node(&v[1], "b", "{\"changes\":0,\"remedies\":[],\"manual\":[]}", 0);
	struct fix_rollout ro = { 0 };
	assert_int_equal(fix_cluster_exit(v, 2, &ro), 0);
	char *buf = text_of(v, 2, &ro);
	tu_assert_has(buf, "nodes a,b: same 0 changes");
	free(buf);
	fix_node_free(&v[0]);
	fix_node_free(&v[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest),     cmocka_unit_test(test_digest_boundaries),
		cmocka_unit_test(test_parse_hostile), cmocka_unit_test(test_groups),
		cmocka_unit_test(test_apply_order), cmocka_unit_test(test_apply_failed),
		cmocka_unit_test(test_exit_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
