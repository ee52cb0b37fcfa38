/* The report's Prometheus text exposition (report.h): one series per
 * finding and the summary, for node_exporter's textfile collector. */
#define _GNU_SOURCE
#include "report.h"
#include "fileio.h"
#include "cleanup.h"
#include "strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void report_prom_label(FILE *out, const char *raw)
{
	char *clean = utf8_clean(raw);
	for (const char *s = clean; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '"')
			fputs("\\\"", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
	free(clean);
}

/* The labels every series carries: the command (several gpuready files
 * in one textfile directory must not collide) and the host (a tree read
 * offline is another machine's). */
static void prom_common(FILE *out, const struct report *r)
{
	fputs("scope=\"", out);
	report_prom_label(out, r->scope);
	fputs("\",host=\"", out);
	report_prom_label(out, r->host);
	fputc('"', out);
}

/* The labels of a finding's series: the common ones, its ID and subject. */
static void prom_finding_labels(FILE *out, const struct report *r, const struct finding *f)
{
	prom_common(out, r);
	fputs(",id=\"", out);
	report_prom_label(out, f->id);
	fputs("\",subject=\"", out);
	report_prom_label(out, f->subject);
	fputc('"', out);
}

/* Which findings stand for a series (the exposition format forbids
 * duplicates): in series[i], bit 1 when finding i is the first of its
 * (id, subject, status) -- a gpuready_finding --, bit 2 when it is the
 * first of the worst status of its (id, subject) -- a
 * gpuready_check_status. One sort, so a node with thousands of findings
 * costs n log n. */
enum { SERIES_FINDING = 1, SERIES_STATUS = 2 };

static int by_series(const void *a, const void *b, void *ud)
{
	const struct report *r = ud;
	const struct finding *f = r->v[*(const size_t *)a], *g = r->v[*(const size_t *)b];
	int c = strcmp(f->id, g->id);
	if (!c)
		c = strcmp(f->subject, g->subject);
	if (!c)
		c = status_rank(g->status) - status_rank(f->status); /* worst first */
	if (!c)
		c = (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
	return c;
}

static unsigned char *prom_series(const struct report *r)
{
	unsigned char *series = xcalloc(r->n + 1, 1);
	size_t *ix = xcalloc(r->n + 1, sizeof(*ix));
	for (size_t i = 0; i < r->n; i++)
		ix[i] = i;
	qsort_r(ix, r->n, sizeof(*ix), by_series, (void *)r);
	for (size_t k = 0; k < r->n; k++) {
		const struct finding *f = r->v[ix[k]], *prev = k ? r->v[ix[k - 1]] : NULL;
		bool same_pair = prev && !strcmp(prev->id, f->id) && !strcmp(prev->subject, f->subject);
		if (!same_pair)
			series[ix[k]] |= SERIES_STATUS;
		if (!same_pair || prev->status != f->status)
			series[ix[k]] |= SERIES_FINDING;
	}
	free(ix);
	return series;
}

int report_write_prom_stream(const struct report *r, FILE *out, double now)
{
	_cleanup_free_ unsigned char *series = prom_series(r);
	fputs("# HELP gpuready_finding One gpuready finding (value 1): its check ID, subject and status "
	      "(ok, warn, fail, skip).\n"
	      "# TYPE gpuready_finding gauge\n",
	      out);
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = r->v[i];
		if (!(series[i] & SERIES_FINDING))
			continue;
		fputs("gpuready_finding{", out);
		prom_finding_labels(out, r, f);
		fprintf(out, ",status=\"%s\"} 1\n", status_name(f->status));
	}
	fputs("# HELP gpuready_check_status Deprecated (use gpuready_finding): the worst status of one gpuready "
	      "check and subject: 0 ok, 1 warn, 2 fail, 3 skip.\n"
	      "# TYPE gpuready_check_status gauge\n",
	      out);
	for (size_t i = 0; i < r->n; i++) {
		const struct finding *f = r->v[i];
		/* info is no status this series ever had */
		if (f->status == STATUS_INFO || !(series[i] & SERIES_STATUS))
			continue;
		fputs("gpuready_check_status{", out);
		prom_finding_labels(out, r, f);
		fprintf(out, "} %d\n", (int)f->status);
	}
	fputs("# HELP gpuready_checks Number of gpuready findings per status.\n"
	      "# TYPE gpuready_checks gauge\n",
	      out);
	for (int st = 0; st < STATUS__COUNT; st++) {
		fputs("gpuready_checks{", out);
		prom_common(out, r);
		fprintf(out, ",status=\"%s\"} %u\n", status_name(st), r->counts[st]);
	}
	fputs("# HELP gpuready_last_run_timestamp_seconds When gpuready last ran, as Unix time.\n"
	      "# TYPE gpuready_last_run_timestamp_seconds gauge\n"
	      "gpuready_last_run_timestamp_seconds{",
	      out);
	prom_common(out, r);
	fprintf(out, "} %.3f\n", now);
	fputs("# HELP gpuready_info Version of gpuready and the root it read.\n"
	      "# TYPE gpuready_info gauge\n"
	      "gpuready_info{",
	      out);
	prom_common(out, r);
	fputs(",version=\"", out);
	report_prom_label(out, r->version);
	fputs("\",sysroot=\"", out);
	report_prom_label(out, r->sysroot);
	fputs("\"} 1\n", out);
	return ferror(out) ? -EIO : 0;
}

static int prom_cb(FILE *f, void *ctx)
{
	const struct report *r = ((const void **)ctx)[0];
	const double *now = ((const void **)ctx)[1];
	return report_write_prom_stream(r, f, *now);
}

int report_write_prom(const struct report *r, const char *path, double now)
{
	const void *ctx[2] = { r, &now };
	return file_write_atomic(path, prom_cb, (void *)ctx);
}
