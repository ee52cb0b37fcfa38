/* The benchmark's text table, verdict and JSON (see output.h). Format
 * strings follow docs/nccl-tests-format.md §1 (generation D). */
#include "output.h"
#include "coll.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/report.h"
#include "core/strbuf.h"
#include "plot.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include <time.h>

/* NCCL_TESTS_MIN_BW fails a run whose average is below 0.9 of it
 * (nccl-tests common.cu run(); docs/nccl-tests-format.md §1.4). */
#define MIN_BW_SLACK 0.9

/* nccl-tests 2.19.6 getFloatStr: the first of 2, 1, 0 decimals whose text
 * fits the width, else an exponent, cut to the width. */
void bench_format_float(char *buf, size_t len, double value, int width)
{
	size_t cap = (size_t)width + 1 < len ? (size_t)width + 1 : len;

	if (snprintf(buf, cap, "%*.2f", width, value) <= width)
		return;
	if (snprintf(buf, cap, "%*.1f", width, value) <= width)
		return;
	if (snprintf(buf, cap, "%*.0f", width, value) <= width)
		return;
	snprintf(buf, cap, width >= 7 ? "%*.1e" : "%*.0e", width, value);
}

/* -S's column: nccl-tests' formatNow ("%Y-%m-%d %H:%M:%S", local time) */
#define TIMESTAMP_FORMAT "%Y-%m-%d %H:%M:%S"

static const char *op_column(const struct bench_row *row)
{
	return row->has_op ? redop_name(row->op) : "none";
}

/* -I's header (util.cu writeResultHeader with per_iter_timing): four more
 * columns per half. */
static void print_iter_columns(FILE *out, const char *tm, int ts_pad, const char *ts_lbl, const char *ts_fmt)
{
	const char *fmt = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  "
			  "%7s  %7s  %7s  %7s %*s\n";
	fprintf(out, "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)                         "
		     "       in-place (+ per-iteration)\n", "", "", "", "", "");
	fprintf(out, fmt, "size", "count", "type", "redop", "root", tm, "algbw", "busbw", "#wrong", "i_min", "i_max",
		"i_p99", "i_cv%", tm, "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%", ts_pad, ts_lbl);
	fprintf(out, fmt, "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)",
		"(%)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)", "(us)", "(%)", ts_pad, ts_fmt);
}

/* util.cu writeResultHeader: -C renames time, -S adds a column, -I four
 * per half */
static void print_columns(FILE *out, const struct bench_params *p)
{
	const char *tm = p->cputime ? "cputime" : "time";
	int ts_pad = p->timestamps ? 19 : 0;
	const char *ts_lbl = p->timestamps ? "timestamp" : "", *ts_fmt = p->timestamps ? TIMESTAMP_FORMAT : "";

	fputs("#\n", out);
	if (p->per_iter) {
		print_iter_columns(out, tm, ts_pad, ts_lbl, ts_fmt);
		return;
	}
	fprintf(out, "#%62sout-of-place%23sin-place%10s\n", "", "", "");
	fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type",
		"redop", "root", tm, "algbw", "busbw", "#wrong", tm, "algbw", "busbw", "#wrong", ts_pad,
		ts_lbl);
	fprintf(out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)", "(elements)", "",
		"", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", ts_pad,
		ts_fmt);
}

void bench_print_header(FILE *out, const struct bench_info *info)
{
	const struct bench_params *p = info->p;
	bool factor = p->step_factor > 1;

	fprintf(out, "# gpuready %s bench (nccl-tests output format) backend %s: %s\n", info->version, info->backend,
		info->library);
	fprintf(out, "# Collective test starting: %s\n", info->progname);
	fprintf(out,
		"# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d agg iters: %d "
		"validation: %d graph: %d unalign: %d\n",
		p->ngpus, (unsigned long long)p->min_bytes, (unsigned long long)p->max_bytes,
		(unsigned long long)(factor ? (uint64_t)p->step_factor : p->step_bytes), factor ? "factor" : "bytes",
		p->warmup, p->iters, p->agg, p->check, p->graph, p->unalign);
	/* nccl-tests 2.19.6 util.cu writeDeviceReport's lines */
	if (p->blocking == 1)
		fputs("# Blocking Enabled: wait and barrier after each inner iteration (-m) \n", out);
	else if (p->blocking == 2)
		fputs("# Blocking Enabled: wait after each inner iteration (-m), no barrier \n", out);
	else if (p->blocking == 3)
		fputs("# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier \n", out);
	if (p->per_iter) {
		/* the host-memory backends time on the host clock, not with CUDA events */
		fprintf(out, "# Per-Iteration Report: %s timing; i_* uses max over process rows",
			strcmp(info->backend, "nccl") ? "host clock" : "CUDA event");
		if (p->per_iter_skip)
			fprintf(out, "; summary skips first %d iterations", p->per_iter_skip);
		fputs(" \n", out);
	}
	fputs("#\n# Using devices\n", out);
	for (int i = 0; i < info->nranks; i++) {
		const struct bench_dev *d = &info->devs[i];
		char ord[8];
		snprintf(ord, sizeof(ord), d->ordinal >= 0 ? "%2d" : " -", d->ordinal);
		fprintf(out, "#  Rank %2d Group  0 Pid %6d on %10s device %s [%s] %s\n", d->rank, d->pid, d->host, ord,
			d->bus_id[0] ? d->bus_id : "host", d->name);
	}
	print_columns(out, p);
	fflush(out);
}

/* -I's columns after a half (util.cu writePerIterReport): i_min, i_max,
 * i_p99 in us and the coefficient of variation in percent. */
static void print_iter_stats(FILE *out, const struct bench_iter *it)
{
	char mn[32], mx[32], p99[32], cv[32];
	bench_format_float(mn, sizeof(mn), it->min * 1e6, 7);
	bench_format_float(mx, sizeof(mx), it->max * 1e6, 7);
	bench_format_float(p99, sizeof(p99), it->p99 * 1e6, 7);
	bench_format_float(cv, sizeof(cv), bench_iter_cv(it), 7);
	fprintf(out, "  %7s  %7s  %7s  %7s", mn, mx, p99, cv);
}

void bench_print_row(FILE *out, const struct bench_row *row, bool timestamp)
{
	fprintf(out, "%12llu  %12llu  %8s  %6s  %6d", (unsigned long long)row->size, (unsigned long long)row->count,
		dtype_name(row->type), op_column(row), row->root);
	for (int h = 0; h < 2; h++) {
		const struct bench_half *x = &row->half[h];
		char t[32], a[32], b[32];
		bench_format_float(t, sizeof(t), x->time_us, 7);
		bench_format_float(a, sizeof(a), x->algbw, 6);
		bench_format_float(b, sizeof(b), x->busbw, 6);
		if (x->wrong >= 0)
			fprintf(out, "  %7s  %6s  %6s  %6g", t, a, b, (double)x->wrong);
		else
			fprintf(out, "  %7s  %6s  %6s    N/A", t, a, b);
		if (row->iter[h])
			print_iter_stats(out, row->iter[h]);
	}
	if (timestamp) {
		char ts[64] = "";
		time_t when = (time_t)row->done;
		struct tm tmv;
		if (localtime_r(&when, &tmv))
			strftime(ts, sizeof(ts), TIMESTAMP_FORMAT, &tmv);
		fprintf(out, "%21s", ts);
	}
	fputc('\n', out);
	fflush(out);
}

void bench_verdict_compute(const struct bench_info *info, const struct bench_result *res, struct bench_verdict *v)
{
	*v = (struct bench_verdict){ .min_bw_ok = -1, .expect_ok = -1, .out_of_bounds = res->out_of_bounds };
	v->avg_busbw = res->busbw_n ? res->busbw_sum / (double)res->busbw_n : 0;
	v->has_mem = res->has_mem;
	memcpy(v->mem, res->mem, sizeof(v->mem));
	for (size_t i = 0; i < res->n_rows; i++) {
		const struct bench_row *r = &res->rows[i];
		double best = fmax(r->half[0].busbw, r->half[1].busbw);
		if (r->size > v->large_size || (r->size == v->large_size && best > v->large_busbw)) {
			v->large_size = r->size;
			v->large_busbw = best;
		}
	}
	if (info->min_bw_set)
		v->min_bw_ok = v->avg_busbw >= info->min_bw * MIN_BW_SLACK;
	if (info->expect_busbw > 0)
		v->expect_ok = v->large_busbw >= info->expect_busbw;
	v->pass = v->out_of_bounds == 0 && v->min_bw_ok != 0 && v->expect_ok != 0;
}

/* util.cu getMemString: B, KB, MB or GB (powers of 1024), 2 decimals
 * below 10, 1 below 100, else none. */
static void mem_string(char *buf, size_t len, int64_t bytes)
{
	static const char *const units[] = { " B", " KB", " MB", " GB" };
	double a = (double)bytes;
	int u = 0;
	for (int i = 3; i > 0 && !u; i--)
		if (fabs(a) >= pow(1024.0, i)) {
			u = i;
			a /= pow(1024.0, i);
		}
	snprintf(buf, len, "%.*f%s", fabs(a) < 10.0 ? 2 : fabs(a) < 100.0 ? 1 : 0, a, units[u]);
}

/* -M: util.cu writeMemInfo's line, after the "concluded" line */
static void print_mem(FILE *out, const int64_t mem[3])
{
	static const char *const phase[] = { "Initialization", "User-Allocated", "Collective" };
	char s[4][48];
	for (int i = 0; i < 3; i++)
		mem_string(s[i], sizeof(s[i]), mem[i]);
	mem_string(s[3], sizeof(s[3]), mem[0] + mem[1] + mem[2]);
	fprintf(out, "# %-20s : %s %s | %s %s | %s %s | Total  %s\n", "GPU memory usage", phase[0], s[0], phase[1],
		s[1], phase[2], s[2], s[3]);
}

void bench_print_footer(FILE *out, const struct bench_info *info, const struct bench_verdict *v)
{
	fprintf(out, "# %-20s : %lld %s\n", "Out of bounds values", (long long)v->out_of_bounds,
		v->out_of_bounds ? "FAILED" : "OK");
	fprintf(out, "# %-20s : %g %s\n", "Avg bus bandwidth", v->avg_busbw,
		v->min_bw_ok < 0 ? "" : v->min_bw_ok ? "OK" : "FAILED");
	fprintf(out, "#\n# Collective test concluded: %s\n", info->progname);
	if (v->has_mem)
		print_mem(out, v->mem);
	fputs("#\n\n", out);
	if (v->min_bw_ok == 0)
		fprintf(out, "# gpuready: FAILED: average bus bandwidth %g GB/s is below 0.9 x NCCL_TESTS_MIN_BW=%g\n",
			v->avg_busbw, info->min_bw);
	if (v->expect_ok >= 0)
		fprintf(out, "# gpuready: %s: bus bandwidth at %llu B is %.2f GB/s, %s the expected %.2f GB/s (%s)\n",
			v->expect_ok ? "OK" : "FAILED", (unsigned long long)v->large_size, v->large_busbw,
			v->expect_ok ? "at or above" : "below", info->expect_busbw, info->expect_source);
	if (v->out_of_bounds)
		fprintf(out, "# gpuready: FAILED: %lld half-rows had wrong results on some rank (#wrong column): "
			     "the data path corrupts data\n", (long long)v->out_of_bounds);
	fflush(out);
}

/* ---- JSON ---- */

static json_object *jnum(double d)
{
	return json_object_new_double(isfinite(d) ? d : 0.0);
}

static json_object *json_params(const struct bench_params *p)
{
	json_object *o = json_object_new_object(), *types = json_object_new_array(), *ops = json_object_new_array();
	json_object_object_add(o, "min_bytes", json_object_new_uint64(p->min_bytes));
	json_object_object_add(o, "max_bytes", json_object_new_uint64(p->max_bytes));
	if (p->step_factor > 1)
		json_object_object_add(o, "step_factor", json_object_new_int(p->step_factor));
	else
		json_object_object_add(o, "step_bytes", json_object_new_uint64(p->step_bytes));
	json_object_object_add(o, "iters", json_object_new_int(p->iters));
	json_object_object_add(o, "warmup_iters", json_object_new_int(p->warmup));
	json_object_object_add(o, "agg_iters", json_object_new_int(p->agg));
	json_object_object_add(o, "check", json_object_new_int(p->check));
	json_object_object_add(o, "average", json_object_new_int(p->average));
	json_object_object_add(o, "blocking", json_object_new_int(p->blocking));
	json_object_object_add(o, "root", json_object_new_int(p->root));
	json_object_object_add(o, "ngpus", json_object_new_int(p->ngpus));
	json_object_object_add(o, "graph", json_object_new_int(p->graph));
	json_object_object_add(o, "timeout_s", jnum(p->timeout));
	for (size_t i = 0; i < p->n_dtypes; i++)
		json_object_array_add(types, json_object_new_string(dtype_name(p->dtypes[i])));
	for (size_t i = 0; i < p->n_ops; i++)
		json_object_array_add(ops, json_object_new_string(redop_name(p->ops[i])));
	json_object_object_add(o, "types", types);
	json_object_object_add(o, "ops", ops);
	return o;
}

static json_object *json_devices(const struct bench_info *info)
{
	json_object *a = json_object_new_array();
	for (int i = 0; i < info->nranks; i++) {
		const struct bench_dev *d = &info->devs[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "rank", json_object_new_int(d->rank));
		json_object_object_add(o, "process", json_object_new_int(d->proc));
		json_object_object_add(o, "host", utf8_json_string(d->host));
		json_object_object_add(o, "pid", json_object_new_int(d->pid));
		json_object_object_add(o, "device", d->ordinal >= 0 ? json_object_new_int(d->ordinal) : NULL);
		json_object_object_add(o, "bus_id", d->bus_id[0] ? utf8_json_string(d->bus_id) : NULL);
		json_object_object_add(o, "name", utf8_json_string(d->name));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *json_half(const struct bench_half *h)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "time_us", jnum(h->time_us));
	json_object_object_add(o, "algbw_gbps", jnum(h->algbw));
	json_object_object_add(o, "busbw_gbps", jnum(h->busbw));
	json_object_object_add(o, "wrong", h->wrong >= 0 ? json_object_new_int64(h->wrong) : NULL);
	return o;
}

static json_object *json_rows(const struct bench_result *res)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; res && i < res->n_rows; i++) {
		const struct bench_row *r = &res->rows[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "size", json_object_new_uint64(r->size));
		json_object_object_add(o, "count", json_object_new_uint64(r->count));
		json_object_object_add(o, "type", json_object_new_string(dtype_name(r->type)));
		json_object_object_add(o, "redop", r->has_op ? json_object_new_string(redop_name(r->op)) : NULL);
		json_object_object_add(o, "root", r->root >= 0 ? json_object_new_int(r->root) : NULL);
		json_object_object_add(o, "out_of_place", json_half(&r->half[0]));
		json_object_object_add(o, "in_place", json_half(&r->half[1]));
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *json_verdict(const struct bench_info *info, const struct bench_verdict *v, const char *error)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "result", json_object_new_string(error ? "error" : v->pass ? "pass" : "fail"));
	json_object_object_add(o, "error", error ? utf8_json_string(error) : NULL);
	json_object_object_add(o, "avg_busbw_gbps", jnum(v->avg_busbw));
	json_object_object_add(o, "out_of_bounds", json_object_new_int64(v->out_of_bounds));
	json_object_object_add(o, "large_message_bytes", json_object_new_uint64(v->large_size));
	json_object_object_add(o, "large_message_busbw_gbps", jnum(v->large_busbw));
	json_object_object_add(o, "nccl_tests_min_bw_gbps", info->min_bw_set ? jnum(info->min_bw) : NULL);
	json_object_object_add(o, "min_bw_ok", v->min_bw_ok >= 0 ? json_object_new_boolean(v->min_bw_ok) : NULL);
	json_object_object_add(o, "expect_busbw_gbps", info->expect_busbw > 0 ? jnum(info->expect_busbw) : NULL);
	json_object_object_add(o, "expect_busbw_ok", v->expect_ok >= 0 ? json_object_new_boolean(v->expect_ok) : NULL);
	return o;
}

struct json_job {
	const struct bench_info *info;
	const struct bench_result *res;
	const struct bench_verdict *v;
	const char *error;
};

static json_object *json_doc(const struct json_job *j)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "tool", json_object_new_string("gpuready"));
	json_object_object_add(o, "version", utf8_json_string(j->info->version));
	json_object_object_add(o, "kind", json_object_new_string("collective"));
	json_object_object_add(o, "collective", json_object_new_string(coll_name(j->info->p->coll)));
	json_object_object_add(o, "program", utf8_json_string(j->info->progname));
	json_object_object_add(o, "timestamp", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(o, "backend", json_object_new_string(j->info->backend));
	json_object_object_add(o, "library", utf8_json_string(j->info->library));
	json_object_object_add(o, "nranks", json_object_new_int(j->info->nranks));
	json_object_object_add(o, "nprocs", json_object_new_int(j->info->nprocs));
	json_object_object_add(o, "params", json_params(j->info->p));
	json_object_object_add(o, "devices", j->info->devs ? json_devices(j->info) : json_object_new_array());
	json_object_object_add(o, "rows", json_rows(j->res));
	json_object_object_add(o, "verdict", json_verdict(j->info, j->v, j->error));
	return o;
}

int bench_write_json(const char *path, const struct bench_info *info, const struct bench_result *res,
		     const struct bench_verdict *v, const char *error)
{
	struct bench_verdict none = { .min_bw_ok = -1, .expect_ok = -1 };
	struct json_job j = { info, res, v ? v : &none, error };
	json_object *o = json_doc(&j);
	int ret = file_write_json(path, o);
	json_object_put(o);
	return ret;
}

struct plot_doc {
	const char *title, *sub;
	const struct plot_series *series;
};

static int plot_doc_write(FILE *f, void *ctx)
{
	const struct plot_doc *d = ctx;
	return plot_write_svg(f, d->title, d->sub, d->series, 2);
}

int bench_write_plot(const char *path, const struct bench_info *info, const struct bench_result *res)
{
	struct plot_point *pts[2] = { xcalloc(res->n_rows + 1, sizeof(struct plot_point)),
				      xcalloc(res->n_rows + 1, sizeof(struct plot_point)) };
	for (size_t i = 0; i < res->n_rows; i++)
		for (int h = 0; h < 2; h++)
			pts[h][i] = (struct plot_point){ .bytes = (double)res->rows[i].size,
							 .busbw = res->rows[i].half[h].busbw,
							 .time_us = res->rows[i].half[h].time_us };
	struct plot_series series[2] = { { "out-of-place", pts[0], res->n_rows }, { "in-place", pts[1], res->n_rows } };
	_cleanup_free_ char *title = xasprintf("%s, %d ranks, %s backend", info->progname, info->nranks, info->backend);
	_cleanup_free_ char *sub = xasprintf("%s; %s", info->library, info->devs ? info->devs[0].name : "");
	struct plot_doc doc = { .title = title, .sub = sub, .series = series };
	int ret = file_write_atomic(path, plot_doc_write, &doc);
	free(pts[0]);
	free(pts[1]);
	return ret;
}
