/* Unit tests for Slurm's drain and resume (src/cluster/slurm.c): the drain
 * reason from an untrusted --reason line (no byte of it can leave the
 * quoting of the printed command), scontrol's argv and its shell line, the
 * strict reading of `scontrol show node -o NAME`, and running a command
 * that fails or cannot be started. */
#define _GNU_SOURCE
#include "testutil.h"
#include "cluster/cluster.h"
#include "cluster/slurm.h"
#include "cmd/cmd.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_reason(void **state)
{
	(void)state;
	char *r = slurm_reason("gpuready 1 fail 0 warn: gpu.fabricmanager nvidia-fabricmanager-570");
	assert_string_equal(r, "gpuready: 1 fail 0 warn: gpu.fabricmanager nvidia-fabricmanager-570");
	free(r);
	r = slurm_reason("gpuready 2 fail 0 warn: a.b x (+3 more)");
	assert_string_equal(r, "gpuready: 2 fail 0 warn: a.b x (+3 more)");
	free(r);
	/* hostile: quotes, expansions, escapes, control bytes, UTF-8 */
	r = slurm_reason("gpuready 1 fail: \"; rm -rf / $(id) `id` \\ ' ! \n\t*?[] <> & | ~ # \xc3\xa9");
	assert_string_equal(r, "gpuready: 1 fail: __ rm -rf / _(id) _id_ _ _ _ ______ __ _ _ _ _ __");
	for (const char *p = r; *p; p++)
		assert_null(strchr("\"'$`\\!;&|<>*?[]~#\n\t", *p));
	free(r);
	r = slurm_reason(NULL);
	assert_string_equal(r, "gpuready:");
	free(r);
	/* bounded */
	char big[1000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	r = slurm_reason(big);
	assert_int_equal(strlen(r), SLURM_REASON_MAX);
	assert_string_equal(r + SLURM_REASON_MAX - 3, "...");
	assert_memory_equal(r, "gpuready: xxx", 13);
	free(r);
}

static void test_argv(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	slurm_drain_argv("scontrol", "gpu08", "gpuready: 1 fail 0 warn: x y", &a);
	const char *want[] = { "scontrol", "update", "NodeName=gpu08", "State=DRAIN", "Reason=gpuready: 1 fail 0 warn: x y" };
	tu_expect_strv(&a, want, 5, "drain");
	char *line = slurm_command_line(&a);
	assert_string_equal(line, "scontrol update NodeName=gpu08 State=DRAIN Reason=\"gpuready: 1 fail 0 warn: x y\"");
	free(line);
	slurm_resume_argv("/opt/slurm/bin/scontrol", "gpu08", &a);
	const char *want2[] = { "/opt/slurm/bin/scontrol", "update", "NodeName=gpu08", "State=RESUME" };
	tu_expect_strv(&a, want2, 4, "resume");
	slurm_show_argv("scontrol", "n1", &a);
	const char *want3[] = { "scontrol", "show", "node", "-o", "n1" };
	tu_expect_strv(&a, want3, 5, "show");
	/* a word that cannot go in double quotes goes in single quotes */
	strv_free(&a);
	strv_add(&a, "/my dir/scontrol");
	strv_add(&a, "Reason=it's $HOME");
	strv_add(&a, "");
	line = slurm_command_line(&a);
	assert_string_equal(line, "'/my dir/scontrol' 'Reason=it'\\''s $HOME' ''");
	free(line);
	strv_free(&a);
}

static int parse(const char *text, struct slurm_node *n, char **err)
{
	return slurm_parse_node(text, strlen(text), "gpu08", n, err);
}

static void test_parse(void **state)
{
	(void)state;
	struct slurm_node n;
	char *err = NULL;
	/* Slurm 22.05's one-liner, cut */
	assert_int_equal(parse("NodeName=gpu08 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 OS=Linux 6.1 #1 SMP "
			       "State=IDLE+DRAIN ThreadsPerCore=1 Partitions=test Reason=gpuready: 1 fail 0 warn: x "
			       "[root@2026-11-29T01:34:41]\n",
			       &n, &err),
			 0);
	assert_string_equal(n.state, "IDLE+DRAIN");
	assert_string_equal(n.reason, "gpuready: 1 fail 0 warn: x");
	assert_true(n.drain);
	assert_true(n.by_gpuready);
	slurm_node_free(&n);
	/* draining (a job still runs), someone else's reason */
	assert_int_equal(parse("NodeName=gpu08 State=MIXED+DRAIN Reason=bad DIMM, ticket 42 [bob@2026-01-01T00:00:00]",
			       &n, &err),
			 0);
	assert_true(n.drain);
	assert_false(n.by_gpuready);
	assert_string_equal(n.reason, "bad DIMM, ticket 42");
	slurm_node_free(&n);
	/* not drained; a stale gpuready reason on a DOWN node is not ours to resume */
	assert_int_equal(parse("NodeName=gpu08 State=IDLE CPUTot=4", &n, &err), 0);
	assert_false(n.drain);
	assert_string_equal(n.reason, "");
	slurm_node_free(&n);
	assert_int_equal(parse("NodeName=gpu08 State=DOWN+NOT_RESPONDING Reason=gpuready: x [root@t]", &n, &err), 0);
	assert_false(n.drain);
	assert_false(n.by_gpuready);
	slurm_node_free(&n);
	/* a reason that says "State=" cannot change the state: the first field counts */
	assert_int_equal(parse("NodeName=gpu08 State=IDLE Reason=x State=IDLE+DRAIN", &n, &err), 0);
	assert_false(n.drain);
	slurm_node_free(&n);
	/* Slurm 24's fields after the reason; a Comment= that says Reason= on a
	 * node drained without a reason is no reason of gpuready's */
	assert_int_equal(parse("NodeName=gpu08 State=IDLE+DRAIN Reason=gpuready: 1 fail [root@t] Comment=x Extra=y",
			       &n, &err),
			 0);
	assert_string_equal(n.reason, "gpuready: 1 fail");
	assert_true(n.by_gpuready);
	slurm_node_free(&n);
	assert_int_equal(parse("NodeName=gpu08 State=IDLE+DRAIN Comment=see Reason=gpuready: x", &n, &err), 0);
	assert_false(n.by_gpuready);
	assert_string_equal(n.reason, "");
	slurm_node_free(&n);
	/* refused */
	const char *bad[] = {
		"",
		"NodeName=gpu09 State=IDLE+DRAIN Reason=gpuready: x",   /* another node */
		"NodeName=gpu080 State=IDLE+DRAIN",                   /* a prefix of it */
		"NodeName=gpu08 Arch=x86_64",                         /* no state */
		"NodeName=gpu08 State=idle+drain",                    /* not Slurm's */
		"NodeName=gpu08 State=IDLE\nNodeName=gpu08 State=IDLE", /* two lines */
		"Node gpu08 not found",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &n, &err) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(err);
		free(err);
		err = NULL;
	}
	char *huge = calloc(1, SLURM_SHOW_MAX + 2);
	memset(huge, 'a', SLURM_SHOW_MAX + 1);
	memcpy(huge, "NodeName=gpu08 State=IDLE ", 26);
	assert_int_equal(slurm_parse_node(huge, SLURM_SHOW_MAX + 1, "gpu08", &n, &err), -EINVAL);
	free(err);
	free(huge);
}

static void test_run(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	char *out = NULL, *err = NULL;
	strv_add(&a, "sh");
	strv_add(&a, "-c");
	strv_add(&a, "echo NodeName=gpu08 State=IDLE+DRAIN Reason=gpuready: x");
	assert_int_equal(slurm_run(&a, &out, &err), 0);
	assert_string_equal(out, "NodeName=gpu08 State=IDLE+DRAIN Reason=gpuready: x\n");
	free(out);
	strv_free(&a);
	strv_add(&a, "sh");
	strv_add(&a, "-c");
	strv_add(&a, "echo noise >&2; printf 'slurm_update error: Invalid node name specified\\n' >&2; exit 1");
	assert_int_equal(slurm_run(&a, NULL, &err), -1);
	assert_string_equal(err, "sh exited with 1: slurm_update error: Invalid node name specified");
	free(err);
	strv_free(&a);
	strv_add(&a, "/nonexistent/scontrol");
	assert_int_equal(slurm_run(&a, NULL, &err), -1);
	assert_non_null(strstr(err, "cannot run /nonexistent/scontrol"));
	free(err);
	struct slurm_node n;
	assert_int_equal(slurm_query("/nonexistent/scontrol", "gpu08", &n, &err), -1);
	free(err);
	strv_free(&a);
}

/* A passing record resumes a node gpuready drained, unless the caller
 * says why not (check --health whose live probes were cut off). */
static void test_no_resume(void **state)
{
	(void)state;
	char dir[] = "/tmp/gpuready-slurm-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *script = xasprintf("%s/scontrol", dir), *calls = xasprintf("%s/calls", dir);
	FILE *f = fopen(script, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nif [ \"$1\" = show ]; then echo \"NodeName=$4 Arch=x86_64 State=IDLE+DRAIN "
		   "Reason=gpuready: 1 fail 0 warn: gpu.nvml [root@2026-01-01T00:00:00]\"; exit 0; fi\n"
		   "echo \"$*\" >>%s\n", calls);
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	struct node_record rec = { 0 };
	record_unreachable(&rec, "n1", "x");
	rec.reachable = true;
	free(rec.why);
	rec.why = NULL;
	rec.reason = xstrdup("gpuready ok: 10 ok");
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	struct slurm_act_opts opts = { .scontrol = script, .resume = true, .apply = true,
				       .no_resume = "live probes cut off at the 2 s budget" };
	assert_int_equal(slurm_act(&opts, &rec, o), 0);
	fclose(o);
	if (!strstr(out, "# n1: left drained: live probes cut off at the 2 s budget"))
		fail_msg("said: %s", out);
	assert_int_equal(access(calls, F_OK), -1); /* no update ran */
	free(out);
	opts.no_resume = NULL;
	o = open_memstream(&out, &len);
	assert_int_equal(slurm_act(&opts, &rec, o), 0);
	fclose(o);
	assert_int_equal(access(calls, F_OK), 0); /* now it resumed */
	free(out);
	record_free(&rec);
	unlink(calls);
	unlink(script);
	rmdir(dir);
	free(script);
	free(calls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_no_resume),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
