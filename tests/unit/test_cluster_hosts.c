/* Unit tests for cluster mode with no launcher (src/cluster/hostlist.c,
 * src/cluster/hosts.c): Slurm hostlist expansion and its bounds against
 * hostile input, the round trip with hostlist_compress, the remote-shell
 * template's words, hosts_collect against programs that fail, stall,
 * send too much or cannot be started, and each node's deadline
 * (cluster_host_timeout: --bench adds the copy measurement's time). */
#define _GNU_SOURCE
#include "testutil.h"
#include "cluster/cluster.h"
#include "cluster/hosts.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "opts/settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int expand(const char *text, struct strv *out, char **err)
{
	return hostlist_expand(text, strlen(text), out, err);
}

static void expect_hosts(const char *text, const char *const *want, size_t n)
{
	struct strv out = STRV_INIT;
	char *err = NULL;
	if (expand(text, &out, &err) < 0)
		fail_msg("%s: %s", text, err);
	tu_expect_strv(&out, want, n, text);
	strv_free(&out);
}

static void test_expand(void **state)
{
	(void)state;
	const char *a[] = { "node01", "node02", "node03", "node20" };
	expect_hosts("node[01-03,20]", a, 4);
	const char *b[] = { "rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02" };
	expect_hosts("rack[1-2]-node[01-02]", b, 4);
	const char *c[] = { "n8", "n9", "n10", "n08", "n09", "n10" };
	expect_hosts("n[8-10] n[08-10]", c, 6);
	const char *d[] = { "login1", "gpu7", "a.b-c_d", "x" };
	expect_hosts(" login1,gpu7\n\ta.b-c_d,,x, ", d, 4);
	const char *e[] = { "n0", "n1", "pre5" };
	expect_hosts("n[0-1],pre[5]", e, 3);
	struct strv out = STRV_INIT;
	char *err = NULL;
	assert_int_equal(expand("", &out, &err), 0);
	assert_int_equal(out.n, 0);

	/* exactly the bound expands; one more does not */
	assert_int_equal(expand("n[0-99999]", &out, &err), 0);
	assert_int_equal(out.n, HOSTLIST_MAX_HOSTS);
	assert_string_equal(out.v[99999], "n99999");
	strv_free(&out);
}

/* Every hostile input is refused with a reason, never expanded blindly. */
static void test_expand_hostile(void **state)
{
	(void)state;
	const char *bad[] = {
		"n[1-", "n[]", "n[5-3]", "n[a-b]", "n[1-2]]", "n[[1]]", "n[1,,2]", "n[1-2-3]", "n[-1]", "n[1-]",
		"n[1234567890123456789]", "-oProxyCommand=x", "a;rm", "$(reboot)", "a`b`", "a/b", "n[0-1]x[0-1]\\",
		"n[0-999999999]", "a[0-999]b[0-999]", "n[0-99999],x", "a[0-9]b[0-9]c[0-9]d[0-9]e[0-9]f[0-9]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct strv out = STRV_INIT;
		char *err = NULL;
		if (expand(bad[i], &out, &err) == 0)
			fail_msg("'%s' expanded to %zu names", bad[i], out.n);
		assert_non_null(err);
		assert_true(strlen(err) < 400);
		free(err);
		strv_free(&out);
	}
	/* too long, and a NUL byte */
	size_t big = HOSTLIST_MAX_TEXT + 1;
	char *t = malloc(big);
	memset(t, 'a', big);
	struct strv out = STRV_INIT;
	char *err = NULL;
	assert_int_equal(hostlist_expand(t, big, &out, &err), -E2BIG);
	free(err);
	err = NULL;
	assert_int_equal(hostlist_expand("a\0b", 3, &out, &err), -EINVAL);
	free(err);
	free(t);
	/* a name longer than a host name may be */
	char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	err = NULL;
	assert_int_equal(expand(longname, &out, &err), -EINVAL);
	free(err);
	strv_free(&out);
}

static void test_file_and_unique(void **state)
{
	(void)state;
	const char *text = "# the H100 racks\ngpu[01-02] # rack 1\n\ngpu03,gpu01\n  # gone: gpu04\nlogin1";
	struct strv out = STRV_INIT, dropped = STRV_INIT;
	char *err = NULL;
	assert_int_equal(hostlist_parse_file(text, strlen(text), &out, &err), 0);
	const char *all[] = { "gpu01", "gpu02", "gpu03", "gpu01", "login1" };
	tu_expect_strv(&out, all, 5, "file");
	hostlist_unique(&out, &dropped);
	const char *once[] = { "gpu01", "gpu02", "gpu03", "login1" };
	tu_expect_strv(&out, once, 4, "unique");
	const char *twice[] = { "gpu01" };
	tu_expect_strv(&dropped, twice, 1, "dropped");
	strv_free(&out);
	strv_free(&dropped);
}

/* Expanding what hostlist_compress wrote gives the same names back. */
static void test_roundtrip(void **state)
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
	const char *want[] = { "gpu9", "gpu10", "login", "node1", "node01", "node02", "node03", "node07" };
	expect_hosts(s, want, 8);
	free(s);
}

static void test_rsh_split(void **state)
{
	(void)state;
	struct strv w = STRV_INIT, argv = STRV_INIT;
	char *err = NULL;
	assert_int_equal(rsh_split("  sh -c 'a  b' \"{host}\"x root@{host} ", &w, &err), 0);
	const char *want[] = { "sh", "-c", "a  b", "{host}x", "root@{host}" };
	tu_expect_strv(&w, want, 5, "split");
	struct hosts_opts o = { .remote = "/opt/gpuready", .extra = (const char *const[]){ "--json", NULL } };
	rsh_argv(&w, &o, "gpu01", &argv);
	const char *full[] = { "sh", "-c", "a  b", "gpu01x", "root@gpu01", "/opt/gpuready", "cluster", "facts",
			       "--node-name", "gpu01", "--json" };
	tu_expect_strv(&argv, full, 11, "argv");
	strv_free(&w);
	strv_free(&argv);
	const char *bad[] = { "", "   ", "ssh gpu01", "ssh '{host}", "ssh \"{host}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err = NULL;
		if (rsh_split(bad[i], &w, &err) == 0)
			fail_msg("--rsh '%s' accepted", bad[i]);
		free(err);
	}
	struct strbuf many = STRBUF_INIT;
	for (int i = 0; i <= RSH_MAX_WORDS; i++)
		strbuf_adds(&many, "{host} ");
	err = NULL;
	assert_int_equal(rsh_split(many.buf, &w, &err), -EINVAL);
	free(err);
	strbuf_release(&many);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One host through template rsh; its row's why must contain want. */
static void expect_row(const char *rsh, int timeout_s, const char *want)
{
	const char *hosts[] = { "h1" };
	struct node_record rec;
	struct hosts_opts o = { .rsh = rsh, .remote = "gpuready", .parallel = 4, .timeout_s = timeout_s };
	char *err = NULL;
	assert_int_equal(hosts_collect(hosts, 1, &o, &rec, &err), 0);
	assert_false(rec.reachable);
	assert_string_equal(rec.node, "h1");
	if (!strstr(rec.why, want))
		fail_msg("--rsh %s: '%s' lacks '%s'", rsh, rec.why, want);
	record_free(&rec);
}

/* Every way a host can fail is a row with its reason; nothing hangs. */
static void test_collect_failures(void **state)
{
	(void)state;
	expect_row("sh -c 'echo first >&2; echo Permission denied >&2; exit 255' {host}", 10,
		   "remote shell exited with 255: Permission denied");
	expect_row("sh -c 'kill -9 $$' {host}", 10, "killed by signal 9");
	expect_row("/nonexistent/rsh {host}", 10, "cannot start /nonexistent/rsh");
	expect_row("sh -c 'exit 0' {host}", 10, "no record on stdout");
	expect_row("sh -c 'echo {}' {host}", 10, "no node record");
	expect_row("sh -c 'head -c 5000000 /dev/zero' {host}", 10, "answered more than");
	expect_row("sh -c 'printf \"\\033[31mred\\n\" >&2; exit 1' {host}", 10, "exited with 1: ?[31mred");
	double t0 = now_s();
	/* a stall, and one that closes its pipes and stays */
	expect_row("sh -c 'sleep 1000' {host}", 1, "no answer within 1 s");
	expect_row("sh -c 'exec >&- 2>&-; sleep 1000' {host}", 1, "no answer within 1 s");
	/* one that ignores SIGTERM is killed */
	expect_row("sh -c 'trap \"\" TERM; sleep 1000' {host}", 1, "no answer within 1 s");
	assert_true(now_s() - t0 < 20);
	char *err = NULL;
	struct hosts_opts o = { .rsh = "ssh", .remote = "gpuready", .parallel = 1, .timeout_s = 1 };
	assert_int_equal(hosts_collect((const char *const[]){ "h1" }, 1, &o, NULL, &err), -EINVAL);
	free(err);
}

/* More hosts than --parallel: each gets its own row, in order. */
static void test_collect_parallel(void **state)
{
	(void)state;
	const char *hosts[] = { "a1", "a2", "a3", "a4", "a5" };
	struct node_record rec[5];
	struct hosts_opts o = { .rsh = "sh -c 'echo $0 down >&2; exit 1' {host}", .remote = "gpuready",
				.parallel = 2, .timeout_s = 10 };
	char *err = NULL;
	assert_int_equal(hosts_collect(hosts, 5, &o, rec, &err), 0);
	for (size_t i = 0; i < 5; i++) {
		assert_string_equal(rec[i].node, hosts[i]);
		char want[32];
		snprintf(want, sizeof(want), ": %s down", hosts[i]);
		if (!strstr(rec[i].why, want))
			fail_msg("%s: %s", hosts[i], rec[i].why);
		record_free(&rec[i]);
	}
}

/* --host-timeout as given (default 120 s), 180 s more with --bench: the
 * copy measurement's 120 s for a CUDA call that hangs, and its start. */
static void test_host_timeout(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	assert_int_equal(cluster_host_timeout(&s), 120);
	s.cluster.bench = true;
	assert_int_equal(cluster_host_timeout(&s), 300);
	s.cluster.host_timeout = 1;
	assert_int_equal(cluster_host_timeout(&s), 181);
	s.cluster.bench = false;
	assert_int_equal(cluster_host_timeout(&s), 1);
	settings_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expand),        cmocka_unit_test(test_expand_hostile),
		cmocka_unit_test(test_file_and_unique), cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_rsh_split),     cmocka_unit_test(test_collect_failures),
		cmocka_unit_test(test_collect_parallel),
		cmocka_unit_test(test_host_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
