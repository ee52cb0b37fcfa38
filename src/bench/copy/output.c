/* nvbandwidth's text, gpuready's verdict lines and the JSON document of
 * `bench copy` (output.h says what each looks like and where the layout
 * comes from). */
#include "bench/copy/output.h"
#include "core/strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct copy_test *test_of(const struct copy_result *r)
{
	return copy_test_find(r->test);
}

static double cell(const struct copy_result *r, int m, int row, int col)
{
	const double *v = r->value[m];
	return v ? v[(size_t)row * (size_t)r->cols + (size_t)col] : NAN;
}

static const struct copy_limit *cell_limit(const struct copy_result *r, int m, int row, int col)
{
	const struct copy_limit *l = r->limit[m];
	return l ? &l[(size_t)row * (size_t)r->cols + (size_t)col] : NULL;
}

static int n_matrices(const struct copy_result *r)
{
	const struct copy_test *t = test_of(r);
	return t ? t->n_matrices : 1;
}

/* The expectation a test is held to, and the option that sets it. */
static double expectation(const struct copy_run *run, const struct copy_test *t, const char **option)
{
	switch (t ? t->expect : COPY_EXPECT_NONE) {
	case COPY_EXPECT_H2D: *option = "--expect-h2d"; return run->expect.h2d;
	case COPY_EXPECT_D2H: *option = "--expect-d2h"; return run->expect.d2h;
	case COPY_EXPECT_P2P: *option = "--expect-p2p"; return run->expect.p2p;
	case COPY_EXPECT_NONE: break;
	}
	*option = NULL;
	return 0;
}

/* Whether cell (m, row, col) is weaker than the weakest so far: a lower
 * share of its limit where both limits are known, else a lower value
 * (a higher one for latencies), whether or not one of them has a limit. */
static bool weaker(const struct copy_verdict *v, double x, const struct copy_limit *l, bool ns)
{
	if (v->lo_m < 0)
		return true;
	bool lk = l && l->known, vk = v->lo_limit && v->lo_limit->known;
	if (lk && vk)
		return x / l->encoded_gbps < v->lo_value / v->lo_limit->encoded_gbps;
	/* otherwise the figures themselves: a cell without a known limit is
	 * not named over a slower one with a limit (its own line says unknown) */
	return ns ? x > v->lo_value : x < v->lo_value;
}

void copy_verdict_compute(const struct copy_run *run, const struct copy_result *r, struct copy_verdict *v)
{
	const struct copy_test *t = test_of(r);
	bool ns = t && t->unit == COPY_UNIT_NS;
	memset(v, 0, sizeof(*v));
	v->lo_m = v->lo_r = v->lo_c = -1;
	v->expect = expectation(run, t, &v->option);
	if (v->expect <= 0) {
		v->expect = 0;
		v->option = NULL;
	}
	for (int m = 0; r->status == COPY_RAN && m < n_matrices(r); m++)
		for (int i = 0; i < r->rows; i++)
			for (int j = 0; j < r->cols; j++) {
				double x = cell(r, m, i, j);
				if (isnan(x)) {
					/* a pair's own diagonal is N/A by design; any other gap is not */
					v->missing += m == 0 && !(r->rows > 1 && i == j);
					continue;
				}
				const struct copy_limit *l = cell_limit(r, m, i, j);
				if (m == 0) {
					v->measured++;
					v->below += v->expect > 0 && x < v->expect;
				}
				if (weaker(v, x, l, ns)) {
					v->lo_m = m, v->lo_r = i, v->lo_c = j;
					v->lo_value = x;
					v->lo_limit = l;
				}
			}
	/* An expectation is met only by figures: a test waived or failed, or a
	 * pair without peer access (N/A), fails it, because lost peer access
	 * is what --expect-p2p is there to catch. */
	if (r->status == COPY_BAD_DATA)
		v->status = COPY_VERDICT_FAIL; /* with or without an expectation */
	else if (!v->expect)
		v->status = COPY_VERDICT_NONE;
	else
		v->status = v->below || v->missing || !v->measured || r->status != COPY_RAN ? COPY_VERDICT_FAIL
											     : COPY_VERDICT_PASS;
}

/* The label of the GPU at position pos of the run: its CUDA index where
 * known (a -d subset keeps the indexes it was given), else pos. */
static int glabel(const struct copy_run *run, int pos)
{
	return run && pos >= 0 && pos < run->n_gpus && run->gpus[pos].index_known ? run->gpus[pos].index : pos;
}

/* "GPU 3", "GPU 1 -> GPU 0", "GPU 0 <-> GPU 1, read2". */
static void cell_name(struct strbuf *sb, const struct copy_run *run, const struct copy_result *r, int m, int row,
		      int col)
{
	const struct copy_test *t = test_of(r);
	enum copy_flow flow = t ? t->flow : COPY_FLOW_PAIR;
	int gr = glabel(run, row), gc = glabel(run, col);
	if (r->rows == 1 && flow == COPY_FLOW_GPU)
		strbuf_addf(sb, "GPU %d", gc);
	else if (flow == COPY_FLOW_COL_TO_ROW)
		strbuf_addf(sb, "GPU %d -> GPU %d", gc, gr);
	else if (flow == COPY_FLOW_ROW_TO_COL)
		strbuf_addf(sb, "GPU %d -> GPU %d", gr, gc);
	else
		strbuf_addf(sb, "GPU %d <-> GPU %d", gr, gc);
	if (t && t->n_matrices > 1)
		strbuf_addf(sb, ", %s", t->key_suffix[m] + 1);
}

/* Up to 8 of the cells below the expectation, then how many more. */
static void below_names(struct strbuf *sb, const struct copy_run *run, const struct copy_result *r, double expect)
{
	int shown = 0, more = 0;
	for (int i = 0; i < r->rows; i++)
		for (int j = 0; j < r->cols; j++) {
			double x = cell(r, 0, i, j);
			if (isnan(x) || x >= expect)
				continue;
			if (shown == 8) {
				more++;
				continue;
			}
			strbuf_adds(sb, shown++ ? ", " : ": ");
			cell_name(sb, run, r, 0, i, j);
			strbuf_addf(sb, " %.1f", x);
		}
	if (more)
		strbuf_addf(sb, " and %d more", more);
}

static void add_limit(struct strbuf *sb, const struct copy_verdict *v)
{
	const struct copy_limit *l = v->lo_limit;
	if (!l)
		return;
	if (!l->known) {
		strbuf_addf(sb, ", limit unknown (%s)", l->label);
		return;
	}
	strbuf_addf(sb, ", %.0f%% of %s (%.1f GB/s encoded, %.1f GB/s expected)", 100.0 * v->lo_value / l->encoded_gbps,
		    l->label, l->encoded_gbps, l->expected_gbps);
}

char *copy_verdict_line(const struct copy_run *run, const struct copy_result *r, const struct copy_verdict *v)
{
	(void)run;
	const struct copy_test *t = test_of(r);
	bool ns = t && t->unit == COPY_UNIT_NS;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s: ", r->test);
	if (r->status == COPY_BAD_DATA) {
		strbuf_addf(&sb, "FAIL: %s", r->message ? r->message : "a copy failed its data check");
		return strbuf_detach(&sb);
	}
	if (r->status == COPY_ERROR)
		strbuf_addf(&sb, "error: %s", r->message ? r->message : "the test failed");
	else if (r->status == COPY_WAIVED)
		strbuf_addf(&sb, "waived: %s", r->message ? r->message : "not applicable on this node");
	else if (v->lo_m < 0)
		strbuf_adds(&sb, "nothing measured (no GPU pair with peer access)");
	if (v->lo_m >= 0) {
		int cells = r->rows * r->cols * (t ? t->n_matrices : 1);
		strbuf_addf(&sb, "%s%.1f %s", cells > 1 ? (ns ? "highest " : "lowest ") : "", v->lo_value,
			    ns ? "ns" : "GB/s");
		if (cells > 1) {
			strbuf_adds(&sb, " (");
			cell_name(&sb, run, r, v->lo_m, v->lo_r, v->lo_c);
			strbuf_addch(&sb, ')');
		}
		if (ns) /* a latency has no link limit to be a share of */
			strbuf_adds(&sb, " per access, lower is better");
		add_limit(&sb, v);
	}
	if (v->status == COPY_VERDICT_PASS)
		strbuf_addf(&sb, "; pass: %s%s %.1f GB/s", v->measured > 1 ? "all at least " : "at least ", v->option,
			    v->expect);
	else if (v->status == COPY_VERDICT_FAIL && (v->below || v->measured)) {
		strbuf_addf(&sb, "; FAIL: %d of %d below %s %.1f GB/s", v->below, v->measured, v->option, v->expect);
		if (v->below)
			below_names(&sb, run, r, v->expect);
		if (v->missing)
			strbuf_addf(&sb, "; %d not measured (N/A)", v->missing);
	} else if (v->status == COPY_VERDICT_FAIL)
		strbuf_addf(&sb, "; FAIL: %s %.1f GB/s not met: nothing measured", v->option, v->expect);
	else if (v->status == COPY_VERDICT_SKIP)
		strbuf_addf(&sb, "; %s %.1f GB/s not checked: nothing measured", v->option, v->expect);
	return strbuf_detach(&sb);
}

/* nvbandwidth's matrix: corner of 2 spaces, columns in 10, rows in 2. */
static void print_matrix(FILE *out, const struct copy_run *run, const struct copy_result *r, int m, const char *key)
{
	double sum = 0;
	fputs("  ", out);
	for (int j = 0; j < r->cols; j++)
		fprintf(out, "%10d", glabel(run, j));
	fputc('\n', out);
	for (int i = 0; i < r->rows; i++) {
		fprintf(out, "%2d", r->rows > 1 ? glabel(run, i) : i);
		for (int j = 0; j < r->cols; j++) {
			double x = cell(r, m, i, j);
			if (isnan(x))
				fprintf(out, "%10s", "N/A");
			else
				fprintf(out, "%10.2f", x);
			sum += isnan(x) ? 0 : x;
		}
		fputc('\n', out);
	}
	fprintf(out, "\nSUM %s %.2f\n\n", key, sum);
}

void copy_print_result(FILE *out, const struct copy_run *run, const struct copy_result *r)
{
	const struct copy_test *t = test_of(r);
	struct copy_verdict v;
	copy_verdict_compute(run, r, &v);
	if (r->status == COPY_WAIVED) {
		fputs("Waived: \n", out);
	} else {
		fprintf(out, "Running %s.\n", r->test);
		if (r->status == COPY_ERROR || r->status == COPY_BAD_DATA)
			fprintf(out, "Error: %s\n", r->message ? r->message : "the test failed");
	}
	for (int m = 0; t && r->status == COPY_RAN && m < t->n_matrices; m++) {
		char *key = xasprintf("%s%s", r->test, t->key_suffix[m]);
		fprintf(out, "%s\n", t->header[m]);
		print_matrix(out, run, r, m, key);
		free(key);
	}
	char *line = copy_verdict_line(run, r, &v);
	fprintf(out, "# %s\n", line);
	if (r->status == COPY_RAN && r->message)
		fprintf(out, "# %s: %s\n", r->test, r->message);
	fputc('\n', out);
	free(line);
}

/* nvbandwidth's device line names the PCI device as domain (8 hex
 * digits):bus:device, without the function. */
static void print_device(FILE *out, int i, const struct copy_gpu *g)
{
	unsigned dom, bus, dev, fn;
	fprintf(out, "Device %d: %s", i, g->name ? g->name : "unknown");
	if (g->bdf && sscanf(g->bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
		fprintf(out, " (%08x:%02x:%02x)\n", dom, bus, dev);
	else
		fprintf(out, " (%s)\n", g->bdf ? g->bdf : "unknown");
}

/* Where the host buffers are: --numa's node, or each GPU's own, naming
 * the GPUs whose node is not known or could not be bound. */
static void print_numa(FILE *out, const struct copy_run *run)
{
	bool forced = run->numa && strcmp(run->numa, "auto"), all = true;
	if (!run->host_buffers) {
		fputc('\n', out);
		return;
	}
	for (int i = 0; i < run->n_gpus; i++)
		all &= run->gpus[i].numa_node >= 0;
	if (forced)
		fprintf(out, ", host buffers on NUMA node %s\n", run->numa);
	else
		fprintf(out, ", host buffers on each GPU's NUMA node%s\n", all ? "" : " where known");
	for (int i = 0; i < run->n_gpus && !forced; i++) {
		const struct copy_gpu *g = &run->gpus[i];
		if (g->numa_note)
			fprintf(out, "# GPU %d: %s\n", glabel(run, i), g->numa_note);
		else if (g->numa_node < 0)
			fprintf(out, "# GPU %d: its NUMA node is not known (sysfs numa_node): its host buffers follow "
				"the default policy\n", glabel(run, i));
	}
}

void copy_print_header(FILE *out, const struct copy_run *run)
{
	fprintf(out, "gpuready %s bench copy (nvbandwidth's tests and layout)\n\n", run->version ? run->version : "");
	if (run->cuda_driver > 0)
		fprintf(out, "CUDA Driver Version: %d\n", run->cuda_driver);
	fprintf(out, "Driver Version: %s\n\n", run->driver ? run->driver : "unknown");
	fprintf(out, "%s\n", run->host ? run->host : "unknown");
	for (int i = 0; i < run->n_gpus; i++)
		print_device(out, glabel(run, i), &run->gpus[i]);
	fprintf(out, "\n# buffer %llu MiB, %d copies per sample, median of %d samples", (unsigned long long)run->size_mib,
		run->loop_count, run->samples);
	print_numa(out, run);
	if (run->size_mib < 512)
		fputs("# the buffer is below the default 512 MiB: figures may stay below the link's peak\n", out);
	fputc('\n', out);
}

void copy_print_text(FILE *out, const struct copy_run *run)
{
	copy_print_header(out, run);
	for (int i = 0; i < run->n_results; i++)
		copy_print_result(out, run, &run->results[i]);
	fputs("NOTE: The reported results may not reflect the full capabilities of the platform.\n"
	      "Performance can vary with software drivers, hardware clocks, and system topology.\n\n",
	      out);
}

const char *copy_run_result(const struct copy_run *run)
{
	bool error = false;
	for (int i = 0; i < run->n_results; i++) {
		struct copy_verdict v;
		copy_verdict_compute(run, &run->results[i], &v);
		if (v.status == COPY_VERDICT_FAIL)
			return "fail";
		error |= run->results[i].status == COPY_ERROR;
	}
	return error ? "error" : "pass";
}

/* ---- JSON (docs/bench-copy.schema.json) ---- */

static json_object *jnum(double d)
{
	return isfinite(d) ? json_object_new_double(d) : NULL;
}

static json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static json_object *jlimit(const struct copy_limit *l)
{
	static const char *const kinds[] = { "unknown", "pcie", "nvlink", "other" };
	json_object *o = json_object_new_object();
	json_object_object_add(o, "known", json_object_new_boolean(l->known));
	json_object_object_add(o, "kind", json_object_new_string(kinds[l->known ? l->kind : COPY_LINK_UNKNOWN]));
	json_object_object_add(o, "label", json_object_new_string(l->label));
	json_object_object_add(o, "generation", l->known && l->gen ? json_object_new_int(l->gen) : NULL);
	json_object_object_add(o, "width", l->known && l->width ? json_object_new_int(l->width) : NULL);
	json_object_object_add(o, "encoded_gbps", l->known ? jnum(l->encoded_gbps) : NULL);
	json_object_object_add(o, "efficiency", l->known ? jnum(l->efficiency) : NULL);
	json_object_object_add(o, "expected_gbps", l->known ? jnum(l->expected_gbps) : NULL);
	return o;
}

static json_object *jmatrix(const struct copy_result *r, const struct copy_test *t, int m)
{
	json_object *o = json_object_new_object(), *vals = json_object_new_array();
	json_object *lims = r->limit[m] ? json_object_new_array() : NULL;
	double sum = 0;
	char *key = xasprintf("%s%s", r->test, t->key_suffix[m]);
	json_object_object_add(o, "key", json_object_new_string(key));
	free(key);
	json_object_object_add(o, "description", json_object_new_string(t->header[m]));
	json_object_object_add(o, "rows", json_object_new_int(r->rows));
	json_object_object_add(o, "cols", json_object_new_int(r->cols));
	for (int i = 0; i < r->rows; i++) {
		json_object *row = json_object_new_array(), *lrow = lims ? json_object_new_array() : NULL;
		for (int j = 0; j < r->cols; j++) {
			double x = cell(r, m, i, j);
			json_object_array_add(row, jnum(x));
			sum += isnan(x) ? 0 : x;
			if (lrow)
				json_object_array_add(lrow, jlimit(cell_limit(r, m, i, j)));
		}
		json_object_array_add(vals, row);
		if (lims)
			json_object_array_add(lims, lrow);
	}
	json_object_object_add(o, "values", vals);
	json_object_object_add(o, "sum", json_object_new_double(sum));
	json_object_object_add(o, "limits", lims);
	return o;
}

static json_object *jverdict(const struct copy_run *run, const struct copy_result *r, const struct copy_verdict *v)
{
	static const char *const st[] = { "none", "pass", "fail", "skip" };
	json_object *o = json_object_new_object(), *lo = NULL;
	json_object_object_add(o, "status", json_object_new_string(st[v->status]));
	json_object_object_add(o, "option", jstr(v->option));
	json_object_object_add(o, "expect_gbps", v->expect > 0 ? json_object_new_double(v->expect) : NULL);
	json_object_object_add(o, "measured", json_object_new_int(v->measured));
	json_object_object_add(o, "below", json_object_new_int(v->below));
	json_object_object_add(o, "missing", json_object_new_int(v->missing));
	if (v->lo_m >= 0) {
		const struct copy_limit *l = v->lo_limit;
		lo = json_object_new_object();
		json_object_object_add(lo, "matrix", json_object_new_int(v->lo_m));
		json_object_object_add(lo, "row", json_object_new_int(v->lo_r));
		json_object_object_add(lo, "col", json_object_new_int(v->lo_c));
		json_object_object_add(lo, "value", json_object_new_double(v->lo_value));
		json_object_object_add(lo, "share", l && l->known ? jnum(v->lo_value / l->encoded_gbps) : NULL);
		json_object_object_add(lo, "limit", l ? jlimit(l) : NULL);
	}
	json_object_object_add(o, "weakest", lo);
	char *line = copy_verdict_line(run, r, v);
	json_object_object_add(o, "text", json_object_new_string(line));
	free(line);
	return o;
}

static json_object *jresult(const struct copy_run *run, const struct copy_result *r)
{
	static const char *const st[] = { "ran", "waived", "error", "bad_data" };
	const struct copy_test *t = test_of(r);
	json_object *o = json_object_new_object(), *ms = json_object_new_array();
	struct copy_verdict v;
	copy_verdict_compute(run, r, &v);
	json_object_object_add(o, "name", json_object_new_string(r->test));
	json_object_object_add(o, "index", t ? json_object_new_int(copy_test_index(t)) : NULL);
	json_object_object_add(o, "status", json_object_new_string(st[r->status]));
	json_object_object_add(o, "message", jstr(r->message));
	json_object_object_add(o, "unit", json_object_new_string(t && t->unit == COPY_UNIT_NS ? "ns" : "GB/s"));
	for (int m = 0; t && r->status == COPY_RAN && m < t->n_matrices; m++)
		json_object_array_add(ms, jmatrix(r, t, m));
	json_object_object_add(o, "matrices", ms);
	json_object_object_add(o, "verdict", jverdict(run, r, &v));
	return o;
}

static json_object *jexpect(double x)
{
	return x > 0 ? json_object_new_double(x) : NULL;
}

json_object *copy_json(const struct copy_run *run)
{
	json_object *o = json_object_new_object(), *gpus = json_object_new_array(), *tests = json_object_new_array();
	json_object *ex = json_object_new_object();
	json_object_object_add(o, "tool", json_object_new_string("gpuready"));
	json_object_object_add(o, "version", json_object_new_string(run->version ? run->version : ""));
	json_object_object_add(o, "kind", json_object_new_string("copy"));
	json_object_object_add(o, "host", jstr(run->host));
	json_object_object_add(o, "driver", jstr(run->driver));
	json_object_object_add(o, "cuda_driver", run->cuda_driver > 0 ? json_object_new_int(run->cuda_driver) : NULL);
	for (int i = 0; i < run->n_gpus; i++) {
		const struct copy_gpu *g = &run->gpus[i];
		json_object *jg = json_object_new_object();
		json_object_object_add(jg, "index", json_object_new_int(glabel(run, i)));
		json_object_object_add(jg, "name", jstr(g->name));
		json_object_object_add(jg, "bdf", jstr(g->bdf));
		json_object_object_add(jg, "numa_node", g->numa_node >= 0 ? json_object_new_int(g->numa_node) : NULL);
		if (g->numa_note)
			json_object_object_add(jg, "numa_note", json_object_new_string(g->numa_note));
		json_object_array_add(gpus, jg);
	}
	json_object_object_add(o, "gpus", gpus);
	json_object_object_add(o, "buffer_mib", json_object_new_uint64(run->size_mib));
	json_object_object_add(o, "loop_count", json_object_new_int(run->loop_count));
	json_object_object_add(o, "samples", json_object_new_int(run->samples));
	json_object_object_add(o, "numa", json_object_new_string(run->numa ? run->numa : "auto"));
	json_object_object_add(ex, "h2d_gbps", jexpect(run->expect.h2d));
	json_object_object_add(ex, "d2h_gbps", jexpect(run->expect.d2h));
	json_object_object_add(ex, "p2p_gbps", jexpect(run->expect.p2p));
	json_object_object_add(o, "expect", ex);
	for (int i = 0; i < run->n_results; i++)
		json_object_array_add(tests, jresult(run, &run->results[i]));
	json_object_object_add(o, "tests", tests);
	json_object_object_add(o, "result", json_object_new_string(copy_run_result(run)));
	return o;
}
