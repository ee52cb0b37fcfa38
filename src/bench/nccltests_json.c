/* nccl-tests' JSON file (see nccltests_json.h). The keys, their order and
 * their value forms follow nccl-tests 2.19.6 src/util.cu: jsonOutputInit
 * (version, start_time, args, env, nccl_version), writeDeviceReport
 * (config with devices), writeResultHeader and the row writers (results),
 * writePerIterReport (-I), writeResultFooter (out_of_bounds,
 * average_bus_bandwidth), writeErrors and jsonOutputFinalize (errors,
 * end_time). */
#define _GNU_SOURCE
#include "nccltests_json.h"
#include "coll.h"
#include "core/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define JSON_FILE_VERSION 3
#define TIME_FORMAT "%Y-%m-%d %H:%M:%S"
/* FILE.0 ... FILE.999 are tried after FILE */
#define MAX_SUFFIX 1000

static void format_now(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tmv;
	buf[0] = '\0';
	if (localtime_r(&now, &tmv))
		strftime(buf, len, TIME_FORMAT, &tmv);
}

void nccltests_json_init(struct nccltests_json *j, int argc, char *const *argv)
{
	*j = (struct nccltests_json){ .argc = argc, .argv = argv, .fd = -1 };
	format_now(j->start_time, sizeof(j->start_time));
}

int nccltests_json_open(struct nccltests_json *j, const char *path, FILE *out, char **err)
{
	char *try = xstrdup(path);
	int fd;

	for (int n = 0; (fd = open(try, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0; n++) {
		int e = errno;
		if (e != EEXIST || n >= MAX_SUFFIX) {
			*err = xasprintf("-J %s: cannot create %s: %s", path, try, strerror(e));
			free(try);
			return -e;
		}
		free(try);
		try = xasprintf("%s.%d", path, n);
	}
	j->fd = fd;
	free(j->path);
	j->path = try;
	fprintf(out, "# Writing JSON output to %s\n", try);
	return 0;
}

void nccltests_json_close(struct nccltests_json *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	free(j->path);
	j->path = NULL;
}

/* ---- a small writer: a separator before all but the first member ---- */

struct jw {
	FILE *f;
	int depth;
	bool first[16];
};

static void sep(struct jw *w)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
}

static void open_c(struct jw *w, char c)
{
	fputc(c, w->f);
	w->first[++w->depth] = true;
}

static void close_c(struct jw *w, char c)
{
	fputc(c, w->f);
	w->depth--;
}

/* nccl-tests' sanitizeJson escapes " \ / tab and newline; it stops at
 * other control or non-ASCII bytes, which are '?' here. */
static void str(struct jw *w, const char *s)
{
	fputc('"', w->f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\' || c == '/')
			fprintf(w->f, "\\%c", c);
		else if (c == '\t' || c == '\n')
			fputs(c == '\t' ? "\\t" : "\\n", w->f);
		else
			fputc(c < 0x20 || c >= 0x7f ? '?' : c, w->f);
	}
	fputc('"', w->f);
}

static void key(struct jw *w, const char *k)
{
	sep(w);
	str(w, k);
	fputc(':', w->f);
}

/* jsonDouble: %lf, and NaN as the string "nan" (so is infinity here) */
static void dbl(struct jw *w, double d)
{
	if (isfinite(d))
		fprintf(w->f, "%f", d);
	else
		fputs("\"nan\"", w->f);
}

static void kint(struct jw *w, const char *k, long long v)
{
	key(w, k);
	fprintf(w->f, "%lld", v);
}

static void kdbl(struct jw *w, const char *k, double d)
{
	key(w, k);
	dbl(w, d);
}

static void kstr(struct jw *w, const char *k, const char *s)
{
	key(w, k);
	str(w, s);
}

/* jsonBool writes the strings "true" and "false" */
static void kbool(struct jw *w, const char *k, bool b)
{
	kstr(w, k, b ? "true" : "false");
}

/* ---- the document ---- */

static bool secret_name(const char *var)
{
	static const char *const words[] = { "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "_KEY" };
	const char *eq = strchr(var, '=');
	size_t len = eq ? (size_t)(eq - var) : strlen(var);
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		const char *hit = strcasestr(var, words[i]);
		if (hit && hit < var + len)
			return true;
	}
	return false;
}

static void write_env(struct jw *w)
{
	key(w, "env");
	open_c(w, '[');
	for (char **e = environ; e && *e; e++) {
		sep(w);
		if (!secret_name(*e)) {
			str(w, *e);
			continue;
		}
		const char *eq = strchr(*e, '=');
		char *name = eq ? xasprintf("%.*s=(not copied by gpuready)", (int)(eq - *e), *e) : xstrdup(*e);
		str(w, name);
		free(name);
	}
	close_c(w, ']');
}

/* nccl-tests' test_ncclVersion: ncclGetVersion()'s code, here from the
 * "NCCL 2.21.5 (...)" the backend reports; 0 without NCCL (the host-memory
 * backends). */
static int nccl_code(const char *library)
{
	int major, minor, patch;
	if (!library || sscanf(library, "NCCL %d.%d.%d", &major, &minor, &patch) != 3)
		return 0;
	if (major > 2 || (major == 2 && minor >= 9))
		return major * 10000 + minor * 100 + patch;
	return major * 1000 + minor * 100 + patch;
}

static void write_start(struct jw *w, const struct nccltests_json *j, const struct bench_info *info)
{
	kint(w, "version", JSON_FILE_VERSION);
	kstr(w, "start_time", j->start_time);
	key(w, "args");
	open_c(w, '[');
	for (int i = 0; i < j->argc; i++) {
		sep(w);
		str(w, j->argv[i]);
	}
	close_c(w, ']');
	write_env(w);
	kint(w, "nccl_version", nccl_code(info->library));
}

static void write_devices(struct jw *w, const struct bench_info *info)
{
	key(w, "devices");
	open_c(w, '[');
	for (int i = 0; i < info->nranks; i++) {
		const struct bench_dev *d = &info->devs[i];
		sep(w);
		open_c(w, '{');
		kint(w, "rank", d->rank);
		kint(w, "group", 0);
		kint(w, "pid", d->pid);
		kstr(w, "hostname", d->host);
		kint(w, "device", d->ordinal);
		kstr(w, "device_hex", d->bus_id[0] ? d->bus_id : "host");
		kstr(w, "device_info", d->name);
		close_c(w, '}');
	}
	close_c(w, ']');
}

static void write_config(struct jw *w, const struct bench_info *info)
{
	const struct bench_params *p = info->p;
	key(w, "config");
	open_c(w, '{');
	kint(w, "nthreads", 1);
	kint(w, "ngpus", p->ngpus);
	kint(w, "minimum_bytes", (long long)p->min_bytes);
	kint(w, "maximum_bytes", (long long)p->max_bytes);
	if (p->step_factor > 1)
		kint(w, "step_factor", p->step_factor);
	else
		kint(w, "step_bytes", (long long)p->step_bytes);
	kint(w, "warmup_iters", p->warmup);
	kint(w, "iterations", p->iters);
	kint(w, "aggregated_iterations", p->agg);
	kint(w, "validation", p->check);
	kint(w, "graph", p->graph);
	kbool(w, "blocking_collectives", p->blocking != 0);
	kbool(w, "per_iter_timing", p->per_iter);
	kint(w, "per_iter_skip", p->per_iter_skip);
	kbool(w, "parallel_init", false);
	write_devices(w, info);
	close_c(w, '}');
}

static void dbl_list(struct jw *w, const double *v, int n)
{
	open_c(w, '[');
	for (int i = 0; i < n; i++) {
		sep(w);
		dbl(w, v[i] * 1e6);
	}
	close_c(w, ']');
}

static void write_iter(struct jw *w, const char *k, const struct bench_iter *it)
{
	key(w, k);
	open_c(w, '{');
	kint(w, "skipped_iterations", it->skipped);
	kdbl(w, "min_us", it->min * 1e6);
	kdbl(w, "max_us", it->max * 1e6);
	kdbl(w, "avg_us", it->avg * 1e6);
	kdbl(w, "p50_us", it->p50 * 1e6);
	kdbl(w, "p95_us", it->p95 * 1e6);
	kdbl(w, "p99_us", it->p99 * 1e6);
	kdbl(w, "stdev_us", it->stdev * 1e6);
	kdbl(w, "cv_pct", bench_iter_cv(it));
	key(w, "times_us");
	dbl_list(w, it->times, it->n);
	if (it->procs && it->nprocs > 1) {
		key(w, "per_process_max_times_us");
		open_c(w, '[');
		for (int q = 0; q < it->nprocs; q++) {
			sep(w);
			dbl_list(w, it->procs + (size_t)q * (size_t)it->n, it->n);
		}
		close_c(w, ']');
	}
	close_c(w, '}');
}

static void write_row(struct jw *w, const struct bench_params *p, const struct bench_row *r)
{
	char root[16];
	snprintf(root, sizeof(root), "%6i", r->root);
	sep(w);
	open_c(w, '{');
	kint(w, "size", (long long)r->size);
	kint(w, "count", (long long)r->count);
	kstr(w, "type", dtype_name(r->type));
	kstr(w, "redop", r->has_op ? redop_name(r->op) : "none");
	kstr(w, "root", root);
	for (int h = 0; h < 2; h++) {
		const struct bench_half *x = &r->half[h];
		key(w, h ? "in_place" : "out_of_place");
		open_c(w, '{');
		kdbl(w, p->cputime ? "cpu_time" : "time", x->time_us);
		kdbl(w, "alg_bw", x->algbw);
		kdbl(w, "bus_bw", x->busbw);
		key(w, "nwrong");
		if (x->wrong >= 0)
			dbl(w, (double)x->wrong);
		else
			fputs("null", w->f);
		close_c(w, '}');
		if (r->iter[h])
			write_iter(w, h ? "in_place_per_iter" : "out_of_place_per_iter", r->iter[h]);
	}
	kint(w, "actual_iterations", p->iters);
	kstr(w, "experiment_name", "");
	close_c(w, '}');
}

static void write_results(struct jw *w, const struct bench_info *info, const struct bench_result *res,
			  const struct bench_verdict *v)
{
	key(w, "results");
	open_c(w, '[');
	for (size_t i = 0; i < res->n_rows; i++)
		write_row(w, info->p, &res->rows[i]);
	close_c(w, ']');
	key(w, "out_of_bounds");
	open_c(w, '{');
	kint(w, "count", v->out_of_bounds);
	kbool(w, "okay", v->out_of_bounds == 0);
	close_c(w, '}');
	key(w, "average_bus_bandwidth");
	open_c(w, '{');
	kdbl(w, "bandwidth", v->avg_busbw);
	if (v->min_bw_ok < 0)
		kstr(w, "okay", "unchecked");
	else
		kbool(w, "okay", v->min_bw_ok);
	close_c(w, '}');
}

int nccltests_json_write(struct nccltests_json *j, const struct bench_info *info, const struct bench_result *res,
			 const struct bench_verdict *v, const char *error)
{
	char end[32];
	int fd = j->fd >= 0 ? dup(j->fd) : -1;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		int e = j->fd < 0 ? EBADF : errno;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	struct jw w = { .f = f, .first = { true } };
	open_c(&w, '{');
	write_start(&w, j, info);
	if (info->devs)
		write_config(&w, info);
	if (res && v)
		write_results(&w, info, res, v);
	key(&w, "errors");
	open_c(&w, '[');
	if (error) {
		sep(&w);
		str(&w, error);
	}
	close_c(&w, ']');
	format_now(end, sizeof(end));
	kstr(&w, "end_time", end);
	close_c(&w, '}'); /* one line, no newline at the end, as nccl-tests */
	int ret = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	nccltests_json_close(j);
	return ret;
}
