/* `gpuready bench COLLECTIVE` and the aliases all_reduce_perf,
 * all_gather_perf, ...: nccl-tests-grade collective benchmarks.
 *
 * Turns the options into bench_params, brings the processes up
 * (session.c), checks that every rank runs the same benchmark, gathers the
 * devices, runs the harness, and on process 0 prints the nccl-tests table,
 * the verdict, the JSON and the plot. Exit codes: 0 pass, 1 wrong results
 * or bandwidth below what was expected, 2 could not run, 3 a rank stalled
 * or was lost (named on stderr). */
#include "cmd.h"
#include "config.h"
#include "job/session.h"
#include "bench/coll.h"
#include "bench/harness.h"
#include "bench/nccltests_json.h"
#include "bench/output.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/root.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct session_plan cmd_session_plan(const struct settings *s)
{
	return (struct session_plan){
		.rank = s->rank, .nranks = s->nranks, .master = s->master, .bind = s->job_bind,
		.token_file = s->token_file, .connect_timeout = s->connect_timeout,
		.blocking = s->bench.blocking != 0, .graph = s->bench.graph, .memory = s->bench.memory != 0,
		.reg = s->bench.local_register, .nccl_lib = s->nccl_lib,
	};
}

/* Every process must run the same benchmark: process 0 compares. */
static void check_same_params(struct session *ss, const struct bench_params *p, const char *backend)
{
	int fr;
	char mine[256] = { 0 }; /* all of it goes on the wire, the bytes after the text too */
	snprintf(mine, sizeof(mine), "%s %s b%llu e%llu i%llu f%d n%d w%d m%d c%d a%d z%d r%d g%d G%d T%g N%d u%d C%d I%d K%d M%d R%d",
		 backend, coll_name(p->coll), (unsigned long long)p->min_bytes, (unsigned long long)p->max_bytes,
		 (unsigned long long)p->step_bytes, p->step_factor, p->iters, p->warmup, p->agg, p->check, p->average,
		 p->blocking, p->root, p->ngpus, p->graph, p->timeout, p->cycles, p->unalign, p->cputime, p->per_iter,
		 p->per_iter_skip, p->memory, p->reg);
	for (size_t i = 0; i < p->n_dtypes; i++)
		snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), " %s", dtype_name(p->dtypes[i]));
	for (size_t i = 0; i < p->n_ops; i++)
		snprintf(mine + strlen(mine), sizeof(mine) - strlen(mine), " %s", redop_name(p->ops[i]));
	_cleanup_free_ char *all = ss->proc == 0 ? xcalloc((size_t)ss->nprocs, sizeof(mine)) : NULL;
	_cleanup_free_ char *err = NULL;
	if ((fr = job_gather(ss->cl, mine, sizeof(mine), all, clock_now() + 30.0, &err)) < 0)
		session_fail(ss, err, fr);
	if (ss->proc != 0)
		return;
	for (int i = 1; i < ss->nprocs; i++)
		if (strcmp(all, all + (size_t)i * sizeof(mine))) {
			char d[128];
			job_describe(ss->cl, i, d, sizeof(d));
			_cleanup_free_ char *msg = xasprintf("%s runs a different benchmark: '%s' where rank 0 runs '%s'", d,
							     all + (size_t)i * sizeof(mine), all);
			session_fail(ss, msg, -EINVAL);
		}
}

/* Each process describes its ranks' devices; process 0 gets them all. */
static struct bench_dev *gather_devices(struct session *ss)
{
	int fr;
	struct bench_dev *mine = xcalloc((size_t)ss->local, sizeof(*mine));
	struct bench_dev *all = ss->proc == 0 ? xcalloc((size_t)ss->nranks, sizeof(*all)) : NULL;
	char host[64];
	_cleanup_free_ char *err = NULL;

	tcp_hostname(host, sizeof(host));
	for (int l = 0; l < ss->local; l++) {
		struct backend_device d = { .ordinal = -1 };
		ss->b->ops->device(ss->b, l, &d);
		mine[l] = (struct bench_dev){ .rank = ss->proc * ss->local + l, .proc = ss->proc, .pid = getpid(),
					      .ordinal = d.ordinal };
		snprintf(mine[l].host, sizeof(mine[l].host), "%s", host);
		snprintf(mine[l].bus_id, sizeof(mine[l].bus_id), "%s", d.bus_id);
		snprintf(mine[l].name, sizeof(mine[l].name), "%s", d.name);
	}
	if ((fr = job_gather(ss->cl, mine, (size_t)ss->local * sizeof(*mine), all, clock_now() + 30.0, &err)) < 0)
		session_fail(ss, err, fr);
	free(mine);
	return all;
}

struct bench_run_ctx {
	struct bench_info info;
	const char *json_file;
	const char *nt_file;      /* -J: nccl-tests' JSON */
	struct nccltests_json nt;
	bool nt_tried;            /* its file was opened, or could not be */
	const struct session *ss; /* for the library a failed start loaded */
};

static void on_row(void *ctx, const struct bench_row *row)
{
	const struct bench_run_ctx *rc = ctx;
	bench_print_row(stdout, row, rc->info.p->timestamps);
}

/* Process 0 on a fatal error: the JSON records it (without rows). */
static void on_fatal(void *ctx, const char *why)
{
	struct bench_run_ctx *rc = ctx;
	/* a start that failed after loading the library still names it */
	if (!rc->info.library[0] && rc->ss && rc->ss->b)
		rc->info.library = rc->ss->b->ops->version(rc->ss->b);
	if (rc->json_file && bench_write_json(rc->json_file, &rc->info, NULL, NULL, why) < 0)
		fprintf(stderr, "gpuready bench: cannot write %s\n", rc->json_file);
	_cleanup_free_ char *err = NULL;
	if (rc->nt_file && !rc->nt_tried && nccltests_json_open(&rc->nt, rc->nt_file, stdout, &err) < 0)
		fprintf(stderr, "gpuready bench: %s\n", err);
	if (rc->nt.fd >= 0 && nccltests_json_write(&rc->nt, &rc->info, NULL, NULL, why) < 0)
		fprintf(stderr, "gpuready bench: cannot write %s\n", rc->nt_file);
}

/* Process 0's end of the run: footer, verdict, files. Returns the exit code. */
static int finish(struct bench_run_ctx *rc, const struct settings *s, const struct bench_result *res)
{
	struct bench_verdict v;
	int code;

	bench_verdict_compute(&rc->info, res, &v);
	bench_print_footer(stdout, &rc->info, &v);
	code = v.pass ? EXIT_OK : EXIT_CHECK_FAILED;
	int w = s->json_file ? bench_write_json(s->json_file, &rc->info, res, &v, NULL) : 0;
	if (w < 0) {
		fprintf(stderr, "gpuready bench: cannot write %s: %s\n", s->json_file, strerror(-w));
		code = EXIT_TOOL_ERROR;
	}
	if (rc->nt.fd >= 0 && (w = nccltests_json_write(&rc->nt, &rc->info, res, &v, NULL)) < 0) {
		fprintf(stderr, "gpuready bench: cannot write %s: %s\n", rc->nt_file, strerror(-w));
		code = EXIT_TOOL_ERROR;
	}
	if (s->plot) {
		int r = bench_write_plot(s->plot, &rc->info, res);
		if (r < 0) {
			fprintf(stderr, "gpuready bench: cannot write %s: %s\n", s->plot, strerror(-r));
			code = EXIT_TOOL_ERROR;
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		code = EXIT_TOOL_ERROR; /* the job's verdict; main() names the error */
	return code;
}

static int load_expectations(struct cmd_env *env, struct bench_run_ctx *rc)
{
	struct settings *s = env->set;
	struct root *root = NULL;
	_cleanup_free_ char *err = NULL;
	bool cli = opt_seen_name(env->cli, "expect-busbw") != NULL;

	if (root_open("/", &root) == 0) {
		int r = settings_load_config(s, env->cli, root, &err);
		root_free(root);
		if (r < 0) {
			fprintf(stderr, "gpuready bench: %s\n", err);
			return EXIT_TOOL_ERROR;
		}
	}
	rc->info.expect_busbw = s->expect_busbw;
	rc->info.expect_source = cli ? "--expect-busbw" : "expect_busbw in the config file";
	const char *min = getenv("NCCL_TESTS_MIN_BW");
	if (min && *min) {
		/* nccl-tests reads it with atof: unparsable means 0 */
		rc->info.min_bw_set = true;
		rc->info.min_bw = atof(min);
	}
	return 0;
}

bool bench_alias(const char *progname)
{
	size_t n = strlen(progname);
	return n > 5 && !strcmp(progname + n - 5, "_perf") && coll_parse(progname) >= 0;
}

int cmd_bench(struct cmd_env *env)
{
	int fr;
	struct settings *s = env->set;
	const char *name = env->args.n ? env->args.v[0] : strcmp(env->progname, "gpuready") ? env->progname : "all_reduce";
	int c = coll_parse(name);
	struct bench_params p;
	struct bench_run_ctx rc = { .json_file = s->json_file, .nt_file = s->bench.output_file };
	struct session ss;
	struct bench_result res;
	_cleanup_free_ char *err = NULL, *progname = NULL;

	nccltests_json_init(&rc.nt, env->argc, env->argv);
	if (c < 0) {
		fprintf(stderr, "gpuready bench: unknown collective '%s' (all_reduce, all_gather, reduce_scatter, "
				"broadcast, reduce, alltoall, sendrecv)\n", name);
		return EXIT_TOOL_ERROR;
	}
	err = bench_params_from(s, c, &p);
	if (err) {
		fprintf(stderr, "gpuready bench: %s\n", err);
		return EXIT_TOOL_ERROR;
	}
	if (load_expectations(env, &rc))
		return EXIT_TOOL_ERROR;
	const char *backend = s->backend ? s->backend : "nccl";
	progname = xasprintf("%s_perf", coll_name(p.coll));
	/* what the JSON says even when the run cannot start */
	rc.info.progname = progname;
	rc.info.version = GPUREADY_VERSION;
	rc.info.p = &p;
	rc.info.backend = backend;
	rc.info.library = "";
	rc.info.nranks = rc.info.nprocs = 1;
	rc.ss = &ss;
	struct session_plan plan = cmd_session_plan(s);
	int r = session_open(&ss, &plan, "bench", backend, p.ngpus, on_fatal, &rc);
	if (r)
		return r;
	rc.info.library = ss.b->ops->version(ss.b);
	rc.info.nranks = ss.nranks;
	rc.info.nprocs = ss.nprocs;
	check_same_params(&ss, &p, backend);
	_cleanup_free_ struct bench_dev *devs = gather_devices(&ss);
	rc.info.devs = devs;
	rc.nt_tried = true;
	if (ss.proc == 0 && rc.nt_file && (fr = nccltests_json_open(&rc.nt, rc.nt_file, stdout, &err)) < 0)
		session_fail(&ss, err, fr);
	if (ss.proc == 0)
		bench_print_header(stdout, &rc.info);
	struct bench_ctx ctx = { .p = &p, .b = ss.b, .sync = ss.sync, .nranks = ss.nranks, .local = ss.local,
				 .proc = ss.proc, .on_row = on_row, .row_ctx = &rc };
	free(err);
	err = NULL;
	if ((fr = bench_run(&ctx, &res, &err)) < 0)
		session_fail(&ss, err, fr);
	int code = ss.proc == 0 ? finish(&rc, s, &res) : EXIT_OK;
	bench_result_free(&res);
	nccltests_json_close(&rc.nt);
	return session_close(&ss, code);
}
