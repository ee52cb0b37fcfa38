/* `gpuready nccl` (installed as test-nccl): the usual NCCL end-to-end
 * test script, done properly; the engine is bench/nccl_e2e.c.
 *
 * Every rank all-reduces its rank number and says
 * "Rank N: OK (result=X, expected=X)" with X = n(n-1)/2, then all-reduces a
 * larger buffer (--bytes) of verifiable data and checks it element by
 * element. NCCL runs with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,NET
 * writing to a file per process that gpuready owns (NCCL_DEBUG_FILE, as
 * NCCL's environment variable documentation describes it); the file is
 * parsed (bench/nccl_log.c) into a verdict per process: the network NCCL chose (IB/RoCE devices or sockets), GPUDirect
 * RDMA per HCA, DMA-BUF, intra-node transports, NCCL's version. --require
 * turns a fallback (sockets, GDR off) into a failure. Process 0 gathers
 * everyone's verdict and decides the exit status: 0 every rank correct and
 * every requirement met, 1 otherwise, 2 could not run, 3 a rank stalled or
 * was lost. */
#include "cmd.h"
#include "config.h"
#include "job/session.h"
#include "bench/nccl_e2e.h"
#include "bench/nccl_log.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One process's findings, sent to process 0 as JSON text. */
#define FINDINGS_MAX 16384

/* Who this process is, for the engine. */
#define ss_shape(ss) ((struct nccl_e2e_shape){ .proc = (ss)->proc, .local = (ss)->local, .nranks = (ss)->nranks })

static void print_ranks(const struct session *ss, const struct nccl_e2e_rank *rc, size_t bytes)
{
	for (int l = 0; l < ss->local; l++) {
		printf("Rank %d: %s (result=%g, expected=%g)\n", rc[l].rank, rc[l].result == rc[l].expected ? "OK" : "FAIL",
		       rc[l].result, rc[l].expected);
		if (rc[l].wrong)
			printf("Rank %d: FAIL: %zu of %zu elements wrong after all-reducing %zu bytes\n", rc[l].rank,
			       rc[l].wrong, rc[l].checked, bytes);
		else
			printf("Rank %d: OK: %zu bytes all-reduced, every element checked\n", rc[l].rank, bytes);
	}
}

/* The process's findings as JSON text (for process 0) and its pass/fail. */
static char *findings_json(const struct session *ss, const struct nccl_e2e_rank *rc, const struct nccl_log *log,
			   bool have_log, const struct strv *summary, const struct strv *why, bool ok)
{
	json_object *o = json_object_new_object(), *ranks = json_object_new_array(), *sum = json_object_new_array(),
		    *w = json_object_new_array();
	char host[64];
	tcp_hostname(host, sizeof(host));
	json_object_object_add(o, "process", json_object_new_int(ss->proc));
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "ok", json_object_new_boolean(ok));
	for (int l = 0; l < ss->local; l++) {
		json_object *r = json_object_new_object();
		json_object_object_add(r, "rank", json_object_new_int(rc[l].rank));
		json_object_object_add(r, "result", json_object_new_double(rc[l].result));
		json_object_object_add(r, "expected", json_object_new_double(rc[l].expected));
		json_object_object_add(r, "wrong_elements", json_object_new_int64((int64_t)rc[l].wrong));
		json_object_object_add(r, "checked_elements", json_object_new_int64((int64_t)rc[l].checked));
		json_object_array_add(ranks, r);
	}
	json_object_object_add(o, "ranks", ranks);
	json_object_object_add(o, "nccl_log_found", json_object_new_boolean(have_log));
	json_object_object_add(o, "nccl_version", have_log && log->version ? json_object_new_string(log->version) : NULL);
	json_object_object_add(o, "network", have_log && log->net_name ? json_object_new_string(log->net_name) : NULL);
	if (have_log)
		nccl_log_facts_json(o, log);
	for (size_t i = 0; i < summary->n; i++)
		json_object_array_add(sum, json_object_new_string(summary->v[i]));
	for (size_t i = 0; why && i < why->n; i++)
		json_object_array_add(w, json_object_new_string(why->v[i]));
	json_object_object_add(o, "verdict", sum);
	json_object_object_add(o, "unmet", w);
	char *txt = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return txt;
}

/* The NCCL log of this process, summarised; *ok goes false when a
 * requirement is not met. Returns the findings JSON. */
static char *read_verdict(const struct session *ss, const struct settings *s, const char *dir,
			  const struct nccl_e2e_rank *rc, bool *ok)
{
	size_t len;
	_cleanup_free_ char *text = nccl_e2e_read_log(dir, &len);
	struct nccl_log log = { 0 };
	_cleanup_strv_ struct strv summary = STRV_INIT, why = STRV_INIT;
	int first = ss->proc * ss->local, last = first + ss->local - 1;
	char ranks[32], host[64];

	tcp_hostname(host, sizeof(host));
	snprintf(ranks, sizeof(ranks), first == last ? "Rank %d" : "Ranks %d-%d", first, last);
	if (text) {
		nccl_log_parse(text, len, &log);
		nccl_log_summary(&log, &summary);
		for (size_t i = 0; i < summary.n; i++)
			printf("%s: %s\n", ranks, summary.v[i]);
	} else {
		printf("%s: no NCCL log was written to %s (is NCCL_DEBUG_FILE honoured by this NCCL?)\n", ranks, dir);
	}
	if (s->require && !(text && nccl_log_meets(&log, s->require, &why))) {
		if (!text)
			strv_add(&why, "no NCCL log to check the requirements against");
		for (size_t i = 0; i < why.n; i++)
			printf("%s: FAIL: --require %s: %s\n", ranks, s->require, why.v[i]);
		*ok = false;
	}
	char *json = findings_json(ss, rc, &log, text != NULL, &summary, &why, *ok);
	nccl_log_free(&log);
	return json;
}

/* Process 0: everyone's findings, the overall verdict, the JSON file. */
static int overall(struct session *ss, const struct settings *s, char *mine)
{
	int fr;
	_cleanup_free_ char *all = ss->proc == 0 ? xcalloc((size_t)ss->nprocs, FINDINGS_MAX) : NULL;
	_cleanup_free_ char *err = NULL;
	char buf[FINDINGS_MAX] = "";
	int failed = 0, code = EXIT_OK;

	snprintf(buf, sizeof(buf), "%s", strlen(mine) < sizeof(buf) ? mine : "{\"ok\":false,\"truncated\":true}");
	if ((fr = job_gather(ss->cl, buf, sizeof(buf), all, clock_now() + 30.0, &err)) < 0)
		session_fail(ss, err, fr);
	if (ss->proc != 0)
		return EXIT_OK;
	json_object *procs = json_object_new_array();
	for (int p = 0; p < ss->nprocs; p++) {
		json_object *o = json_tokener_parse(all + (size_t)p * FINDINGS_MAX);
		json_object *okv = NULL;
		if (!o || !json_object_object_get_ex(o, "ok", &okv) || !json_object_get_boolean(okv))
			failed++;
		json_object_array_add(procs, o ? o : json_object_new_null());
	}
	printf("test-nccl: %s: %d rank%s in %d process%s, %d process%s with failures\n", failed ? "FAILED" : "PASSED",
	       ss->nranks, ss->nranks == 1 ? "" : "s", ss->nprocs, ss->nprocs == 1 ? "" : "es", failed,
	       failed == 1 ? "" : "es");
	code = failed ? EXIT_CHECK_FAILED : EXIT_OK;
	if (s->json_file) {
		json_object *doc = json_object_new_object();
		json_object_object_add(doc, "tool", json_object_new_string("gpuready"));
		json_object_object_add(doc, "version", json_object_new_string(GPUREADY_VERSION));
		json_object_object_add(doc, "kind", json_object_new_string("nccl"));
		json_object_object_add(doc, "nranks", json_object_new_int(ss->nranks));
		json_object_object_add(doc, "require", s->require ? json_object_new_string(s->require) : NULL);
		json_object_object_add(doc, "result", json_object_new_string(failed ? "fail" : "pass"));
		json_object_object_add(doc, "processes", procs);
		int w = file_write_json(s->json_file, doc);
		if (w < 0) {
			fprintf(stderr, "gpuready nccl: cannot write %s: %s\n", s->json_file, strerror(-w));
			code = EXIT_TOOL_ERROR;
		}
		json_object_put(doc);
	} else {
		json_object_put(procs);
	}
	return code;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			_cleanup_free_ char *p = xasprintf("%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

static char *log_dir(const struct settings *s, char **err)
{
	if (s->keep_logs) {
		if (mkdir(s->keep_logs, 0755) < 0 && errno != EEXIST) {
			*err = xasprintf("--keep-logs %s: %s", s->keep_logs, strerror(errno));
			return NULL;
		}
		return xstrdup(s->keep_logs);
	}
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/gpuready-nccl.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		*err = xasprintf("cannot make a directory for NCCL's log (%s): %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

/* The two all-reduces; returns 0 or ends the job. */
static void run_checks(struct session *ss, const struct settings *s, struct nccl_e2e_rank *rc)
{
	int fr;
	size_t bytes = s->nccl_bytes / sizeof(float) * sizeof(float);
	double tmo = s->bench.timeout > 0 ? s->bench.timeout : 60.0 + (double)bytes / 1e8;
	void *buf[64] = { 0 };
	_cleanup_free_ char *err = NULL;

	for (int l = 0; l < ss->local; l++)
		if (ss->b->ops->alloc(ss->b, l, bytes, &buf[l]) < 0) {
			err = xasprintf("allocating %zu bytes on rank %d: %s", bytes, ss->proc * ss->local + l, ss->b->error);
			session_fail(ss, err, -ENOMEM);
		}
	job_phase(ss->cl, "test-nccl: all-reduce of the rank numbers", clock_now() + tmo);
	if ((fr = nccl_e2e_rank_sum(ss->b, &ss_shape(ss), buf, rc, clock_now() + tmo, &err)) < 0)
		session_fail(ss, err, fr);
	job_phase_done(ss->cl);
	job_phase(ss->cl, "test-nccl: all-reduce of the large buffer", clock_now() + tmo);
	if ((fr = nccl_e2e_large(ss->b, &ss_shape(ss), buf, bytes, rc, clock_now() + tmo, &err)) < 0)
		session_fail(ss, err, fr);
	job_phase_done(ss->cl);
	for (int l = 0; l < ss->local; l++)
		ss->b->ops->free(ss->b, l, buf[l]);
	print_ranks(ss, rc, bytes);
}

/* Process 0 when the run ends early: the JSON says why. */
static void on_fatal(void *ctx, const char *why)
{
	const char *path = ctx;
	json_object *doc = json_object_new_object();
	json_object_object_add(doc, "tool", json_object_new_string("gpuready"));
	json_object_object_add(doc, "version", json_object_new_string(GPUREADY_VERSION));
	json_object_object_add(doc, "kind", json_object_new_string("nccl"));
	json_object_object_add(doc, "result", json_object_new_string("error"));
	json_object_object_add(doc, "error", json_object_new_string(why));
	if (path)
		file_write_json(path, doc); /* best effort: the run is ending with its error already */
	json_object_put(doc);
}

int cmd_nccl(struct cmd_env *env)
{
	struct settings *s = env->set;
	struct session ss;
	struct nccl_e2e_rank rc[64];
	_cleanup_free_ char *err = NULL, *dir = log_dir(s, &err);
	bool ok = true;

	if (!dir) {
		fprintf(stderr, "gpuready nccl: %s\n", err);
		return EXIT_TOOL_ERROR;
	}
	if (nccl_e2e_log_env(dir, &err) < 0) {
		fprintf(stderr, "gpuready nccl: %s\n", err);
		return EXIT_TOOL_ERROR;
	}
	struct session_plan plan = cmd_session_plan(s);
	int r = session_open(&ss, &plan, "nccl", "nccl", s->bench.ngpus, s->json_file ? on_fatal : NULL, s->json_file);
	if (r) {
		if (!s->keep_logs)
			remove_dir(dir);
		return r;
	}
	memset(rc, 0, sizeof(rc));
	run_checks(&ss, s, rc);
	/* NCCL writes its log until its communicators are gone */
	ss.b->ops->fini(ss.b);
	ss.b = NULL;
	for (int l = 0; l < ss.local; l++)
		ok = ok && rc[l].ok;
	_cleanup_free_ char *mine = read_verdict(&ss, s, dir, rc, &ok);
	fflush(stdout);
	int code = overall(&ss, s, mine);
	if (!s->keep_logs)
		remove_dir(dir);
	else if (ss.proc == 0)
		printf("test-nccl: NCCL's logs are in %s\n", dir);
	if (fflush(stdout) != 0 || ferror(stdout))
		code = EXIT_TOOL_ERROR; /* the job's verdict; main() names the error */
	return session_close(&ss, code);
}
