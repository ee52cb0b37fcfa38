/* `gpuready cluster links` per rail (see links_blocks.h). */
#define _GNU_SOURCE
#include "cluster/links_blocks.h"
#include "cluster/links_rdma.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>

struct links_meas *links_rail_meas(const struct links_meas *m, size_t n_m, int rail, size_t *out_n)
{
	struct links_meas *v = xcalloc(n_m + 1, sizeof(*v));
	size_t k = 0;
	for (size_t i = 0; i < n_m; i++)
		if (m[i].rail == rail)
			v[k++] = m[i];
	*out_n = k;
	return v;
}

static int cmp_edge(const void *x, const void *y)
{
	const struct sched_pair *p = x, *q = y;
	return p->a != q->a ? (p->a > q->a) - (p->a < q->a) : (p->b > q->b) - (p->b < q->b);
}

/* The blocks' suspects as one: a suspect node of any rail; known-good
 * on every rail that measured a rate; the slow pairs of all, once each
 * (sorted, as links_classify looks them up). */
static void merge(int n, const struct links_blocks *b, struct links_suspects *out)
{
	*out = (struct links_suspects){ .n = n, .node = xcalloc((size_t)n + 1, 1), .good = xcalloc((size_t)n + 1, 1) };
	size_t ne = 0;
	for (int k = 0; k < b->n; k++)
		ne += b->s[k].n_edges;
	out->edges = xcalloc(ne + 1, sizeof(*out->edges));
	for (int i = 0; i < n; i++) {
		bool good = true, any = false;
		for (int k = 0; k < b->n; k++) {
			out->node[i] |= b->s[k].node[i];
			if (b->st[k].n)
				good = good && b->s[k].good[i], any = true;
		}
		out->good[i] = any && good && !out->node[i];
		out->n_good += out->good[i];
	}
	for (int k = 0; k < b->n; k++)
		for (size_t e = 0; e < b->s[k].n_edges; e++)
			out->edges[out->n_edges++] = b->s[k].edges[e];
	if (out->n_edges)
		qsort(out->edges, out->n_edges, sizeof(*out->edges), cmp_edge);
	size_t u = 0;
	for (size_t e = 0; e < out->n_edges; e++)
		if (!u || cmp_edge(&out->edges[u - 1], &out->edges[e]))
			out->edges[u++] = out->edges[e];
	out->n_edges = u;
}

void links_blocks_first(int n, int mode, const struct links_meas *m, size_t n_m, double expect, struct links_blocks *b,
			struct links_suspects *merged)
{
	uint32_t seen = 0;
	*b = (struct links_blocks){ 0 };
	for (size_t i = 0; i < n_m; i++)
		if (m[i].rail >= 0 && m[i].rail <= LINKS_RAILS_MAX)
			seen |= 1u << m[i].rail;
	if (mode & LINKS_MEASURE_TCP)
		seen |= 1u << LINKS_RAIL_TCP; /* the TCP block even when nothing came (its summary) */
	if (!seen)
		seen = 1u << 1; /* RDMA rail 0: a block to say so */
	for (int r = 0; r <= LINKS_RAILS_MAX; r++) {
		if (!(seen & (1u << r)))
			continue;
		int k = b->n++;
		size_t nk;
		_cleanup_free_ struct links_meas *mk = links_rail_meas(m, n_m, r, &nk);
		b->rail[k] = r;
		links_stats_compute(mk, nk, expect, &b->st[k]);
		links_find_suspects(n, mk, nk, &b->st[k], &b->s[k]);
	}
	merge(n, b, merged);
}

void links_blocks_free(struct links_blocks *b)
{
	for (int k = 0; k < b->n; k++)
		links_suspects_free(&b->s[k]);
	b->n = 0;
}

void links_blocks_classify(const struct links_blocks *b, int k, int n, const struct links_meas *m, size_t n_m,
			   struct links_verdict **v, size_t *nv)
{
	size_t nk;
	_cleanup_free_ struct links_meas *mk = links_rail_meas(m, n_m, b->rail[k], &nk);
	links_classify(n, mk, nk, &b->st[k], &b->s[k], v, nv);
}

int links_blocks_write(const struct links_blocks *b, const struct links_report *base, const struct links_meas *m,
		       size_t n_m, bool json, FILE *f, FILE *svg)
{
	int code = 0, bad = 0;
	struct links_report head = *base;
	head.measured = b->n > 1 ? (b->rail[0] == LINKS_RAIL_TCP ? "tcp and RDMA rails" : "RDMA rails")
			: b->rail[0] == LINKS_RAIL_TCP ? "tcp" : "RDMA rail 0";
	base = &head;
	for (int k = 0; k < b->n; k++) {
		struct links_report r = *base;
		size_t nk;
		struct links_meas *mk = links_rail_meas(m, n_m, b->rail[k], &nk);
		struct links_verdict *v = NULL;
		size_t nv = 0;
		links_blocks_classify(b, k, base->n, m, n_m, &v, &nv);
		r.m = mk, r.n_m = nk, r.st = &b->st[k], r.v = v, r.n_v = nv, r.rail = b->rail[k], r.block = k;
		int c = links_exit_code(r.st, v, nv);
		code = c > code ? c : code;
		if (k == 0 && svg && (links_write_svg(&r, svg) < 0 || fflush(svg)))
			bad = 1;
		if (!json)
			links_write_text(&r, f);
		else if (k == 0)
			links_json_head(&r, f), fputs(",\n\"rails\":[", f);
		else
			fputs(k > 1 ? ",\n" : "\n", f), links_json_rail(&r, f);
		free(v);
		free(mk);
	}
	if (json)
		fprintf(f, "],\n\"exit\":%d}\n", code);
	return ferror(f) || bad ? -1 : code;
}
