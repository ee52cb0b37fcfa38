/* The cluster renderers: text, JSON (docs/cluster.schema.json) and
 * Prometheus series per node. They only read the records and the drift. */
#include "cluster/cluster.h"
#include "core/cleanup.h"
#include "core/fileio.h"
#include "core/strbuf.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* ---- hostlist ---- */

struct host_name {
	const char *name;
	size_t plen;        /* the prefix before the trailing digits */
	size_t dlen;        /* how many trailing digits (0: none) */
	unsigned long long num;
};

static int host_cmp(const void *x, const void *y)
{
	const struct host_name *a = x, *b = y;
	int c = memcmp(a->name, b->name, a->plen < b->plen ? a->plen : b->plen);
	if (!c)
		c = (a->plen > b->plen) - (a->plen < b->plen);
	if (!c)
		c = (a->dlen != 0) - (b->dlen != 0);
	if (!c)
		c = (a->num > b->num) - (a->num < b->num);
	if (!c)
		c = (a->dlen > b->dlen) - (a->dlen < b->dlen);
	return c ? c : strcmp(a->name, b->name);
}

/* Zero-padded ("007"): its width is part of the name. */
static bool padded(const struct host_name *h)
{
	return h->dlen > 1 && h->name[h->plen] == '0';
}

/* Names that share a bracket: one prefix, both with digits. */
static bool same_prefix(const struct host_name *a, const struct host_name *b)
{
	return a->dlen && b->dlen && a->plen == b->plen && !memcmp(a->name, b->name, a->plen);
}

/* b continues a's range: the next number, written the same way. */
static bool continues(const struct host_name *a, const struct host_name *b)
{
	return b->num == a->num + 1 && (a->dlen == b->dlen || (!padded(a) && !padded(b)));
}

/* h[0..n): one prefix; writes prefix[a-b,c] or the name. Each number is
 * written as the name has it, so the list names exactly these nodes. */
static void hostlist_group(struct strbuf *sb, const struct host_name *h, size_t n)
{
	if (n == 1) {
		strbuf_adds(sb, h[0].name);
		return;
	}
	strbuf_add(sb, h[0].name, h[0].plen);
	strbuf_addch(sb, '[');
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && continues(&h[j - 1], &h[j]); j++)
			;
		if (i)
			strbuf_addch(sb, ',');
		strbuf_adds(sb, h[i].name + h[i].plen);
		if (j - i > 1) {
			strbuf_addch(sb, '-');
			strbuf_adds(sb, h[j - 1].name + h[j - 1].plen);
		}
	}
	strbuf_addch(sb, ']');
}

char *hostlist_compress(const struct node_record *recs, const size_t *idx, size_t n)
{
	const char **names = xcalloc(n + 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = recs[idx[i]].node;
	char *r = hostlist_compress_names(names, n);
	free(names);
	return r;
}

char *hostlist_compress_names(const char *const *names, size_t n)
{
	struct host_name *h = xcalloc(n + 1, sizeof(*h));
	for (size_t i = 0; i < n; i++) {
		const char *s = names[i];
		size_t len = strlen(s), p = len;
		while (p > 0 && s[p - 1] >= '0' && s[p - 1] <= '9')
			p--;
		h[i] = (struct host_name){ .name = s, .plen = p, .dlen = len - p };
		if (h[i].dlen > 18) /* beyond unsigned long long: not a number to range */
			h[i] = (struct host_name){ .name = s, .plen = len };
		else if (h[i].dlen)
			h[i].num = strtoull(s + p, NULL, 10);
	}
	qsort(h, n, sizeof(*h), host_cmp);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && same_prefix(&h[i], &h[j]); j++)
			;
		if (i)
			strbuf_addch(&sb, ',');
		hostlist_group(&sb, h + i, j - i);
	}
	free(h);
	return strbuf_detach(&sb);
}

/* ---- summary ---- */

static void count_states(const struct node_record *recs, size_t n, unsigned counts[4])
{
	memset(counts, 0, 4 * sizeof(*counts));
	for (size_t i = 0; i < n; i++)
		counts[record_state(&recs[i])]++;
}

int cluster_exit_code(const struct node_record *recs, size_t n, const struct drift *d)
{
	for (size_t i = 0; i < n; i++)
		if (record_state(&recs[i]) >= NODE_FAIL || d->drifts[i])
			return 1;
	return 0;
}

/* "node03: <reason>" for each failing, then warning node, then the
 * unreachable ones with why. */
static void reason_lines(const struct node_record *recs, size_t n, FILE *out, bool tags)
{
	static const enum node_state order[] = { NODE_FAIL, NODE_WARN, NODE_UNREACHABLE };
	for (size_t o = 0; o < 3; o++)
		for (size_t i = 0; i < n; i++) {
			if (record_state(&recs[i]) != order[o])
				continue;
			_cleanup_free_ char *name = utf8_clean(recs[i].node),
					    *why = utf8_clean(recs[i].reachable ? recs[i].reason : recs[i].why);
			if (tags)
				fprintf(out, "%-12s ", node_state_name(order[o]));
			fprintf(out, "%s: %s\n", name, why);
		}
}

int cluster_write_reasons(const struct node_record *recs, size_t n, FILE *out)
{
	reason_lines(recs, n, out, false);
	return ferror(out) ? -EIO : 0;
}

/* ---- text ---- */

/* The majority column of a row. */
static char *row_majority(const struct drift_row *r, size_t group_n)
{
	if (r->kind == DRIFT_SPLIT)
		return xasprintf("(no majority: split)");
	if (r->kind == DRIFT_EXPECT)
		return xasprintf("%s (expected)", r->values[0].value);
	return xasprintf("%s (%zu of %zu)", r->values[0].value, r->values[0].n, group_n);
}

static void text_row(const struct node_record *recs, const struct drift *d, const struct drift_row *r, int kw,
		     int mw, FILE *out)
{
	_cleanup_free_ char *maj = row_majority(r, d->groups[r->group].n);
	_cleanup_free_ char *key = utf8_clean(r->key), *m = utf8_clean(maj);
	for (size_t v = r->kind == DRIFT_SPLIT ? 0 : 1; v < r->n_values; v++) {
		_cleanup_free_ char *hosts = hostlist_compress(recs, r->values[v].nodes, r->values[v].n);
		_cleanup_free_ char *val = utf8_clean(r->values[v].value);
		bool first = v == (r->kind == DRIFT_SPLIT ? 0u : 1u);
		fprintf(out, "  %-*s  %-*s  %s: %s\n", kw, first ? key : "", mw, first ? m : "", hosts, val);
	}
}

static void text_group(const struct node_record *recs, const struct drift *d, size_t gi, FILE *out)
{
	const struct drift_group *g = &d->groups[gi];
	_cleanup_free_ char *shape = utf8_clean(g->shape);
	fprintf(out, "%s (%zu node%s)", shape, g->n, g->n == 1 ? "" : "s");
	if (!g->votes)
		fprintf(out, ": too few nodes to vote (at least %d)%s", DRIFT_MIN_VOTERS,
			g->expected	  ? ", compared with the expected record"
			: d->expect_shape ? ", not compared: the expected record has another shape"
					  : ", not compared: give --expect FILE");
	fputc('\n', out);
	int kw = (int)strlen("FACT"), mw = (int)strlen("MAJORITY");
	size_t rows = 0;
	for (size_t i = 0; i < d->n_rows; i++) {
		if (d->rows[i].group != gi)
			continue;
		_cleanup_free_ char *maj = row_majority(&d->rows[i], g->n);
		int k = (int)strlen(d->rows[i].key), m = (int)strlen(maj);
		kw = k > kw && k <= 40 ? k : kw;
		mw = m > mw && m <= 40 ? m : mw;
		rows++;
	}
	if (!rows) {
		if (g->votes || g->expected)
			fputs("  every fact agrees\n", out);
		return;
	}
	fprintf(out, "  %-*s  %-*s  %s\n", kw, "FACT", mw, "MAJORITY", "DIFFERING NODES");
	for (size_t i = 0; i < d->n_rows; i++)
		if (d->rows[i].group == gi)
			text_row(recs, d, &d->rows[i], kw, mw, out);
}

int cluster_write_text(const struct node_record *recs, size_t n, const struct drift *d, FILE *out)
{
	unsigned c[4];
	count_states(recs, n, c);
	fprintf(out, "%zu node%s: %u pass, %u warn, %u fail, %u unreachable\n", n, n == 1 ? "" : "s", c[NODE_PASS],
		c[NODE_WARN], c[NODE_FAIL], c[NODE_UNREACHABLE]);
	reason_lines(recs, n, out, true);
	fputs("\nDrift (majority vote within each hardware shape):\n", out);
	if (!d->n_groups)
		fputs("  no node to compare\n", out);
	bool expected = false;
	for (size_t gi = 0; gi < d->n_groups; gi++) {
		text_group(recs, d, gi, out);
		expected |= d->groups[gi].expected;
	}
	if (d->expect_shape && !expected) {
		_cleanup_free_ char *shape = utf8_clean(d->expect_shape);
		fprintf(out, "No node has the expected record's shape (%s): none was compared with it.\n", shape);
	}
	return ferror(out) ? -EIO : 0;
}

/* ---- JSON ---- */

static json_object *json_names(const struct node_record *recs, const size_t *idx, size_t n)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, utf8_json_string(recs[idx[i]].node));
	return a;
}

static const char *kind_name(enum drift_kind k)
{
	return k == DRIFT_SPLIT ? "split" : k == DRIFT_EXPECT ? "expect" : "majority";
}

static json_object *json_row(const struct node_record *recs, const struct drift *d, const struct drift_row *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "shape", utf8_json_string(d->groups[r->group].shape));
	json_object_object_add(o, "fact", utf8_json_string(r->key));
	json_object_object_add(o, "kind", json_object_new_string(kind_name(r->kind)));
	json_object *vals = json_object_new_array();
	for (size_t v = 0; v < r->n_values; v++) {
		json_object *x = json_object_new_object();
		json_object_object_add(x, "value", utf8_json_string(r->values[v].value));
		json_object_object_add(x, "count", json_object_new_int64((int64_t)r->values[v].n));
		json_object_object_add(x, "nodes", json_names(recs, r->values[v].nodes, r->values[v].n));
		json_object_array_add(vals, x);
	}
	json_object_object_add(o, "values", vals);
	return o;
}

static json_object *json_groups(const struct node_record *recs, const struct drift *d)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < d->n_groups; i++) {
		const struct drift_group *g = &d->groups[i];
		json_object *o = json_object_new_object();
		json_object_object_add(o, "shape", utf8_json_string(g->shape));
		json_object_object_add(o, "nodes", json_names(recs, g->nodes, g->n));
		json_object_object_add(o, "votes", json_object_new_boolean(g->votes));
		json_object_object_add(o, "expected", json_object_new_boolean(g->expected));
		json_object_array_add(a, o);
	}
	return a;
}

int cluster_write_json(const struct node_record *recs, size_t n, const struct drift *d, const char *expect_node,
		       FILE *out)
{
	json_object *root = json_object_new_object();
	json_object_object_add(root, "schema_version", json_object_new_int(CLUSTER_SCHEMA_VERSION));
	unsigned c[4];
	count_states(recs, n, c);
	json_object *sum = json_object_new_object();
	json_object_object_add(sum, "nodes", json_object_new_int64((int64_t)n));
	for (int s = 0; s <= NODE_UNREACHABLE; s++)
		json_object_object_add(sum, node_state_name(s), json_object_new_int64(c[s]));
	json_object_object_add(root, "summary", sum);
	if (expect_node)
		json_object_object_add(root, "expect", utf8_json_string(expect_node));
	if (d->expect_shape)
		json_object_object_add(root, "expect_shape", utf8_json_string(d->expect_shape));
	json_object *nodes = json_object_new_array();
	for (size_t i = 0; i < n; i++) {
		json_object *o = record_to_json(&recs[i]);
		json_object_object_del(o, "schema_version");
		json_object_object_add(o, "state", json_object_new_string(node_state_name(record_state(&recs[i]))));
		json_object_object_add(o, "drift", json_object_new_boolean(d->drifts[i]));
		json_object_array_add(nodes, o);
	}
	json_object_object_add(root, "nodes", nodes);
	json_object_object_add(root, "groups", json_groups(recs, d));
	json_object *rows = json_object_new_array();
	for (size_t i = 0; i < d->n_rows; i++)
		json_object_array_add(rows, json_row(recs, d, &d->rows[i]));
	json_object_object_add(root, "drift", rows);
	return cluster_json_print(root, out);
}

/* ---- Prometheus ---- */

static void prom_node(FILE *out, const char *metric, const struct node_record *r)
{
	fprintf(out, "%s{scope=\"cluster\",node=\"", metric);
	report_prom_label(out, r->node);
	fputc('"', out);
}

static int finding_cmp(const void *x, const void *y)
{
	const struct record_finding *a = *(const struct record_finding *const *)x,
				    *b = *(const struct record_finding *const *)y;
	int c = strcmp(a->id, b->id);
	if (!c)
		c = strcmp(a->subject, b->subject);
	return c ? c : (int)a->status - (int)b->status;
}

/* One gpuready_finding per (node, id, subject, status): the exposition
 * format forbids duplicate series. */
static void prom_findings(FILE *out, const struct node_record *r)
{
	const struct record_finding **v = xcalloc(r->n_findings + 1, sizeof(*v));
	for (size_t i = 0; i < r->n_findings; i++)
		v[i] = &r->findings[i];
	qsort(v, r->n_findings, sizeof(*v), finding_cmp);
	for (size_t i = 0; i < r->n_findings; i++) {
		if (i && !finding_cmp(&v[i], &v[i - 1]))
			continue;
		prom_node(out, "gpuready_finding", r);
		fputs(",id=\"", out);
		report_prom_label(out, v[i]->id);
		fputs("\",subject=\"", out);
		report_prom_label(out, v[i]->subject);
		fprintf(out, "\",status=\"%s\"} 1\n", status_name(v[i]->status));
	}
	free(v);
}

static void prom_drift(FILE *out, const struct node_record *recs, const struct drift *d)
{
	fputs("# HELP gpuready_cluster_drift A fact of a node that differs from its shape's majority (kind "
	      "majority), is on one side of a split, or differs from the expected record (kind expect).\n"
	      "# TYPE gpuready_cluster_drift gauge\n",
	      out);
	for (size_t i = 0; i < d->n_rows; i++) {
		const struct drift_row *r = &d->rows[i];
		for (size_t v = r->kind == DRIFT_SPLIT ? 0 : 1; v < r->n_values; v++)
			for (size_t k = 0; k < r->values[v].n; k++) {
				prom_node(out, "gpuready_cluster_drift", &recs[r->values[v].nodes[k]]);
				fputs(",fact=\"", out);
				report_prom_label(out, r->key);
				fprintf(out, "\",kind=\"%s\"} 1\n", kind_name(r->kind));
			}
	}
}

int cluster_write_prom_stream(const struct node_record *recs, size_t n, const struct drift *d, FILE *out,
			      double now)
{
	fputs("# HELP gpuready_cluster_node_state The state of a node in the last cluster check (value 1): pass, "
	      "warn, fail or unreachable.\n# TYPE gpuready_cluster_node_state gauge\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		prom_node(out, "gpuready_cluster_node_state", &recs[i]);
		fprintf(out, ",state=\"%s\"} 1\n", node_state_name(record_state(&recs[i])));
	}
	/* the HELP texts of the node report's series (core/report.c): one
	 * textfile directory may hold both files, and a metric has one help */
	fputs("# HELP gpuready_finding One gpuready finding (value 1): its check ID, subject and status "
	      "(ok, warn, fail, skip).\n# TYPE gpuready_finding gauge\n",
	      out);
	for (size_t i = 0; i < n; i++)
		prom_findings(out, &recs[i]);
	fputs("# HELP gpuready_checks Number of gpuready findings per status.\n"
	      "# TYPE gpuready_checks gauge\n",
	      out);
	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < STATUS__COUNT && recs[i].reachable; s++) {
			prom_node(out, "gpuready_checks", &recs[i]);
			fprintf(out, ",status=\"%s\"} %u\n", status_name(s), recs[i].counts[s]);
		}
	prom_drift(out, recs, d);
	fprintf(out, "# HELP gpuready_last_run_timestamp_seconds When gpuready last ran, as Unix time.\n"
		     "# TYPE gpuready_last_run_timestamp_seconds gauge\n"
		     "gpuready_last_run_timestamp_seconds{scope=\"cluster\"} %.3f\n",
		now);
	return ferror(out) ? -EIO : 0;
}

struct prom_ctx {
	const struct node_record *recs;
	size_t n;
	const struct drift *d;
	double now;
};

static int prom_cb(FILE *f, void *ctx)
{
	const struct prom_ctx *c = ctx;
	return cluster_write_prom_stream(c->recs, c->n, c->d, f, c->now);
}

int cluster_write_prom(const struct node_record *recs, size_t n, const struct drift *d, const char *path,
		       double now)
{
	struct prom_ctx c = { .recs = recs, .n = n, .d = d, .now = now };
	return file_write_atomic(path, prom_cb, &c);
}

static int prom_failed_cb(FILE *f, void *ctx)
{
	double now = *(const double *)ctx;
	fprintf(f, "# HELP gpuready_cluster_run_failed The last cluster check ended before its result (value 1); "
		   "gpuready's standard error says why.\n# TYPE gpuready_cluster_run_failed gauge\n"
		   "gpuready_cluster_run_failed{scope=\"cluster\"} 1\n"
		   "# HELP gpuready_last_run_timestamp_seconds When gpuready last ran, as Unix time.\n"
		   "# TYPE gpuready_last_run_timestamp_seconds gauge\n"
		   "gpuready_last_run_timestamp_seconds{scope=\"cluster\"} %.3f\n",
		now);
	return ferror(f) ? -EIO : 0;
}

int cluster_write_prom_failed(const char *path, double now)
{
	return file_write_atomic(path, prom_failed_cb, &now);
}
