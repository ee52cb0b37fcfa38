/* `gpuready nccl` (installed as test-nccl): the seed's NCCL test, done
 * properly.
 *
 * Every rank all-reduces its rank number and says
 * "Rank N: OK (result=X, expected=X)" with X = n(n-1)/2, then all-reduces a
 * larger buffer (--bytes) of verifiable data and checks it element by
 * element. NCCL runs with NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,NET
 * writing to a file per process that gpuready owns (NCCL_DEBUG_FILE,
 * REFERENCE §8); the file is parsed (bench/nccl_log.c) into a verdict per
 * process: the network NCCL chose (IB/RoCE devices or sockets), GPUDirect
 * RDMA per HCA, DMA-BUF, intra-node transports, NCCL's version. --require
 * turns a fallback (sockets, GDR off) into a failure. Process 0 gathers
 * everyone's verdict and decides the exit status: 0 every rank correct and
 * every requirement met, 1 otherwise, 2 could not run, 3 a rank stalled or
 * was lost. */
#include "cmd.h"
#include "config.h"
#include "job/session.h"
#include "bench/data.h"
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

/* NCCL reads these when it initialises: they must be set before the
 * backend loads it. A subsystem list the user set keeps its entries. */
static int set_nccl_env(const char *dir, char **err)
{
	const char *subsys = getenv("NCCL_DEBUG_SUBSYS");
	_cleanup_free_ char *want = NULL, *file = xasprintf("%s/nccl.%%h.%%p.log", dir);

	if (!subsys || !*subsys || !strcmp(subsys, "ALL"))
		want = xstrdup(subsys && *subsys ? subsys : "INIT,NET");
	else if (subsys[0] == '^')
		/* an exclusion list: INIT and NET must not be in it */
		want = strstr(subsys, "INIT") || strstr(subsys, "NET") ? xstrdup("INIT,NET") : xstrdup(subsys);
	else
		want = xasprintf("%s,INIT,NET", subsys);
	if (setenv("NCCL_DEBUG", "INFO", 1) || setenv("NCCL_DEBUG_SUBSYS", want, 1) ||
	    setenv("NCCL_DEBUG_FILE", file, 1)) {
		*err = xasprintf("setenv: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* This process's log: NCCL expands %h to the host name up to its first
 * dot and %p to the pid (REFERENCE §8); both matter when ranks of several
 * hosts share a --keep-logs directory. */
static char *read_own_log(const char *dir, size_t *len)
{
	char host[64];
	tcp_hostname(host, sizeof(host));
	_cleanup_free_ char *path = xasprintf("%s/nccl.%s.%ld.log", dir, host, (long)getpid());
	FILE *f = fopen(path, "r");
	*len = 0;
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0 && sb.len < (64u << 20))
		strbuf_add(&sb, buf, got);
	fclose(f);
	*len = sb.len;
	return strbuf_detach(&sb);
}

struct rank_check {
	int rank;
	double result, expected;
	size_t wrong, checked;
	bool ok;
};

/* Step 1: every rank's number, summed. */
static int check_rank_sum(struct session *ss, void **buf, struct rank_check *rc, double deadline, char **err)
{
	struct backend *b = ss->b;
	int r = 0;
	for (int l = 0; l < ss->local && r == 0; l++) {
		float v = (float)(ss->proc * ss->local + l);
		r = b->ops->copy_in(b, l, buf[l], &v, sizeof(v));
	}
	if (r == 0)
		r = b->ops->run(b, COLL_ALL_REDUCE, buf, buf, 1, DT_FLOAT, OP_SUM, -1);
	if (r == 0)
		r = b->ops->wait(b, deadline);
	for (int l = 0; l < ss->local && r == 0; l++) {
		float v = -1;
		r = b->ops->copy_out(b, l, &v, buf[l], sizeof(v));
		rc[l].rank = ss->proc * ss->local + l;
		rc[l].result = v;
		rc[l].expected = (double)ss->nranks * (ss->nranks - 1) / 2.0;
		rc[l].ok = v == rc[l].expected;
	}
	if (r < 0)
		*err = xasprintf("all-reduce of the rank numbers: %s", b->error);
	return r;
}

/* Step 2: a large buffer of verifiable data, checked element by element. */
static int check_large(struct session *ss, void **buf, size_t bytes, struct rank_check *rc, double deadline,
		       char **err)
{
	struct backend *b = ss->b;
	size_t count = bytes / sizeof(float);
	struct data_spec spec = { .t = DT_FLOAT, .op = OP_SUM, .nranks = ss->nranks, .seed = 12345 };
	_cleanup_free_ float *host = malloc(count * sizeof(float)), *exp = malloc(count * sizeof(float));
	int r = 0;

	if (!host || !exp) {
		*err = xstrdup("out of host memory for the check (use a smaller --bytes)");
		return -ENOMEM;
	}
	for (int l = 0; l < ss->local && r == 0; l++) {
		data_fill(&spec, ss->proc * ss->local + l, 0, host, count);
		r = b->ops->copy_in(b, l, buf[l], host, count * sizeof(float));
	}
	if (r == 0)
		r = b->ops->run(b, COLL_ALL_REDUCE, buf, buf, count, DT_FLOAT, OP_SUM, -1);
	if (r == 0)
		r = b->ops->wait(b, deadline);
	if (r == 0)
		data_expect_reduce(&spec, 0, exp, count);
	for (int l = 0; l < ss->local && r == 0; l++) {
		r = b->ops->copy_out(b, l, host, buf[l], count * sizeof(float));
		rc[l].checked = count;
		rc[l].wrong = r == 0 ? data_compare(DT_FLOAT, OP_SUM, host, exp, count) : count;
		rc[l].ok = rc[l].ok && rc[l].wrong == 0;
	}
	if (r < 0)
		*err = xasprintf("all-reduce of %zu bytes: %s", bytes, b->error);
	return r;
}

static void print_ranks(const struct session *ss, const struct rank_check *rc, size_t bytes)
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

/* What the NCCL log says, as fields of o: the HCAs NCCL listed (with
 * GPUDirect RDMA true/false, null when not logged), DMA-BUF, the socket
 * interface, intra-node transports and NCCL's warnings. */
static void log_facts_json(json_object *o, const struct nccl_log *log)
{
	json_object *hcas = json_object_new_array(), *tr = json_object_new_array(), *warn = json_object_new_array();
	for (size_t i = 0; i < log->n_hcas; i++) {
		const struct nccl_hca *h = &log->hcas[i];
		json_object *x = json_object_new_object();
		json_object_object_add(x, "name", json_object_new_string(h->name));
		json_object_object_add(x, "port", h->port >= 0 ? json_object_new_int(h->port) : NULL);
		json_object_object_add(x, "link", h->link ? json_object_new_string(h->link) : NULL);
		json_object_object_add(x, "gdr", h->gdr >= 0 ? json_object_new_boolean(h->gdr) : NULL);
		json_object_array_add(hcas, x);
	}
	for (size_t i = 0; i < log->transports.n; i++)
		json_object_array_add(tr, json_object_new_string(log->transports.v[i]));
	for (size_t i = 0; i < log->warnings.n; i++)
		json_object_array_add(warn, json_object_new_string(log->warnings.v[i]));
	json_object_object_add(o, "hcas", hcas);
	json_object_object_add(o, "gdrdma_channels", json_object_new_boolean(log->gdrdma_channels));
	json_object_object_add(o, "dmabuf", json_object_new_boolean(log->dmabuf > 0));
	json_object_object_add(o, "socket_if", log->socket_if ? json_object_new_string(log->socket_if) : NULL);
	json_object_object_add(o, "intra_node", tr);
	json_object_object_add(o, "nccl_warnings", warn);
}

/* The process's findings as JSON text (for process 0) and its pass/fail. */
static char *findings_json(const struct session *ss, const struct rank_check *rc, const struct nccl_log *log,
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
		log_facts_json(o, log);
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
			  const struct rank_check *rc, bool *ok)
{
	size_t len;
	_cleanup_free_ char *text = read_own_log(dir, &len);
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
static void run_checks(struct session *ss, const struct settings *s, struct rank_check *rc)
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
	if ((fr = check_rank_sum(ss, buf, rc, clock_now() + tmo, &err)) < 0)
		session_fail(ss, err, fr);
	job_phase_done(ss->cl);
	job_phase(ss->cl, "test-nccl: all-reduce of the large buffer", clock_now() + tmo);
	if ((fr = check_large(ss, buf, bytes, rc, clock_now() + tmo, &err)) < 0)
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
	struct rank_check rc[64];
	_cleanup_free_ char *err = NULL, *dir = log_dir(s, &err);
	bool ok = true;

	if (!dir) {
		fprintf(stderr, "gpuready nccl: %s\n", err);
		return EXIT_TOOL_ERROR;
	}
	if (set_nccl_env(dir, &err) < 0) {
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
	if (fflush(stdout) != 0)
		code = EXIT_TOOL_ERROR;
	return session_close(&ss, code);
}
