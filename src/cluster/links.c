/* `gpuready cluster links`: statistics, suspects, the second pass and the
 * verdicts (see links.h). */
#include "cluster/links.h"
#include "core/strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void *links_grow(void *v, size_t n, size_t size)
{
	if (n < 16)
		return n ? v : xcalloc(16, size);
	return n & (n - 1) ? v : xreallocarray(v, 2 * n, size);
}

static void swapd(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

double links_select(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		/* three-way partition around the median of three: robust to
		 * many equal rates */
		double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
		double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		size_t lt = lo, i = lo, gt = hi;
		while (i <= gt) {
			if (v[i] < pivot)
				swapd(&v[lt++], &v[i++]);
			else if (v[i] > pivot)
				swapd(&v[i], &v[gt--]);
			else
				i++;
		}
		/* v[lo..lt) < pivot, v[lt..gt] = pivot, v(gt..hi] > pivot */
		if (k < lt)
			hi = lt - 1;
		else if (k > gt)
			lo = gt + 1;
		else
			return pivot;
	}
	return v[k];
}

/* The median of v[0..n) (reorders v); NAN when empty. */
static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	double hi = links_select(v, n, n / 2);
	if (n % 2)
		return hi;
	double lo = v[0];
	for (size_t i = 1; i < n / 2; i++)
		if (v[i] > lo)
			lo = v[i];
	return (lo + hi) / 2;
}

void links_stats_compute(const struct links_meas *m, size_t n_m, double expect, struct links_stats *st)
{
	double *v = xcalloc(n_m + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < n_m; i++)
		if (m[i].pass == 1 && m[i].gbps >= 0)
			v[n++] = m[i].gbps;
	*st = (struct links_stats){ .expect = expect, .n = n, .median = NAN, .mad = NAN, .threshold = 0 };
	if (n) {
		/* the median and MAD of the rates that are not already 25%
		 * under the median of all: a bad node makes 2/N of the pairs
		 * slow, which pulls the median of all down to the slowest
		 * healthy pairs and, where those are noisy, sets the MAD */
		double all = median(v, n), cut = all * (1 - LINKS_MIN_DROP);
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (v[i] >= cut)
				v[k++] = v[i];
		st->median = median(v, k);
		for (size_t i = 0; i < k; i++)
			v[i] = fabs(v[i] - st->median);
		st->mad = median(v, k);
		double t = st->median - LINKS_MAD_K * LINKS_MAD_SCALE * st->mad;
		double drop = st->median * (1 - LINKS_MIN_DROP);
		st->threshold = t < drop ? t : drop;
		if (expect > 0 && expect < st->threshold)
			st->threshold = expect;
		if (st->threshold < 0)
			st->threshold = 0; /* noise wider than the median: nothing stands out */
	}
	free(v);
}

bool links_is_slow(const struct links_stats *st, double gbps)
{
	return gbps >= 0 && st->n && gbps < st->threshold;
}

/* Per unordered pair (a < b at a*n+b): what the first pass saw. */
enum { SEEN = 1, SLOW = 2, FAILED = 4 };

static unsigned char *pair_flags(int n, const struct links_meas *m, size_t n_m, const struct links_stats *st)
{
	unsigned char *f = xcalloc((size_t)n * (size_t)n + 1, 1);
	for (size_t i = 0; i < n_m; i++) {
		int a = m[i].from < m[i].to ? m[i].from : m[i].to, b = m[i].from ^ m[i].to ^ a;
		if (m[i].pass != 1 || a < 0 || b >= n || a == b)
			continue;
		unsigned char *p = &f[(size_t)a * (size_t)n + (size_t)b];
		*p |= m[i].gbps < 0 ? FAILED : links_is_slow(st, m[i].gbps) ? SEEN | SLOW : SEEN;
	}
	return f;
}

void links_find_suspects(int n, const struct links_meas *m, size_t n_m, const struct links_stats *st,
			 struct links_suspects *out)
{
	*out = (struct links_suspects){ .n = n, .node = xcalloc((size_t)n + 1, 1), .good = xcalloc((size_t)n + 1, 1) };
	unsigned char *f = pair_flags(n, m, n_m, st);
	int *partners = xcalloc((size_t)n + 1, sizeof(int)), *slow = xcalloc((size_t)n + 1, sizeof(int));
	unsigned char *bad = xcalloc((size_t)n + 1, 1);
	size_t cap = 0;
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			unsigned char p = f[(size_t)a * (size_t)n + (size_t)b];
			if (p & (SEEN | FAILED))
				partners[a]++, partners[b]++;
			if (p & FAILED)
				bad[a] = bad[b] = 1;
			if (!(p & SLOW))
				continue;
			slow[a]++, slow[b]++;
			if (out->n_edges == cap) {
				cap = cap ? 2 * cap : 16;
				out->edges = xreallocarray(out->edges, cap, sizeof(*out->edges));
			}
			out->edges[out->n_edges++] = (struct sched_pair){ a, b };
		}
	for (int i = 0; i < n; i++)
		out->node[i] = slow[i] > 0 && 2 * slow[i] > partners[i];
	/* a slow pair with a suspect node is that node's; the other node of
	 * it may still be known-good */
	for (size_t e = 0; e < out->n_edges; e++) {
		int a = out->edges[e].a, b = out->edges[e].b;
		if (!out->node[a] && !out->node[b])
			bad[a] = bad[b] = 1;
	}
	for (int i = 0; i < n; i++) {
		out->good[i] = !bad[i] && !out->node[i] && partners[i] > 0;
		out->n_good += out->good[i];
	}
	free(f);
	free(partners);
	free(slow);
	free(bad);
}

void links_suspects_free(struct links_suspects *s)
{
	free(s->node);
	free(s->good);
	free(s->edges);
	*s = (struct links_suspects){ 0 };
}

/* A suspect: a suspect node, or a node of a slow pair of two nodes that
 * are no suspects. */
static unsigned char *targets(const struct links_suspects *s)
{
	unsigned char *t = xcalloc((size_t)s->n + 1, 1);
	for (int i = 0; i < s->n; i++)
		t[i] = s->node[i];
	for (size_t e = 0; e < s->n_edges; e++)
		if (!s->node[s->edges[e].a] && !s->node[s->edges[e].b])
			t[s->edges[e].a] = t[s->edges[e].b] = 1;
	return t;
}

static struct sched_pair ordered(int x, int y)
{
	return x < y ? (struct sched_pair){ x, y } : (struct sched_pair){ y, x };
}

/* Greedy rounds: each pair goes to the first round where both its nodes
 * are free. busy grows one row of n per round. */
static void into_rounds(int n, struct sched_pair *pairs, size_t np, struct links_rounds *out)
{
	int *round = xcalloc(np + 1, sizeof(int)), nr = 0;
	unsigned char *busy = NULL;
	for (size_t i = 0; i < np; i++) {
		int r = 0;
		for (;; r++) {
			if (r == nr) {
				busy = xreallocarray(busy, (size_t)++nr, (size_t)n);
				memset(busy + (size_t)r * (size_t)n, 0, (size_t)n);
			}
			unsigned char *row = busy + (size_t)r * (size_t)n;
			if (!row[pairs[i].a] && !row[pairs[i].b]) {
				row[pairs[i].a] = row[pairs[i].b] = 1;
				break;
			}
		}
		round[i] = r;
	}
	out->pairs = xcalloc(np + 1, sizeof(*out->pairs));
	out->start = xcalloc((size_t)nr + 2, sizeof(size_t));
	out->n_pairs = np;
	out->n_rounds = nr;
	for (size_t i = 0; i < np; i++)
		out->start[round[i] + 1]++;
	for (int r = 0; r < nr; r++)
		out->start[r + 1] += out->start[r];
	size_t *fill = xcalloc((size_t)nr + 1, sizeof(size_t));
	for (size_t i = 0; i < np; i++)
		out->pairs[out->start[round[i]] + fill[round[i]]++] = pairs[i];
	free(fill);
	free(busy);
	free(round);
}

void links_second_pass(const struct links_suspects *s, struct links_rounds *out)
{
	*out = (struct links_rounds){ 0 };
	int *good = xcalloc((size_t)s->n + 1, sizeof(int)), ng = 0;
	for (int i = 0; i < s->n; i++)
		if (s->good[i])
			good[ng++] = i;
	unsigned char *t = targets(s);
	int per = ng < LINKS_GOOD_PARTNERS ? ng : LINKS_GOOD_PARTNERS;
	size_t cap = (size_t)s->n * (size_t)per + s->n_edges + 1, np = 0, k = 0;
	struct sched_pair *pairs = xcalloc(cap, sizeof(*pairs));
	for (int i = 0; i < s->n; i++) {
		if (!t[i])
			continue;
		/* the next known-good nodes, round robin, so the load spreads */
		for (int j = 0; j < per; j++)
			pairs[np++] = ordered(i, good[k++ % (size_t)ng]);
	}
	for (size_t e = 0, again = 0; e < s->n_edges && again < 2 * (size_t)s->n; e++)
		if (!s->node[s->edges[e].a] && !s->node[s->edges[e].b])
			pairs[np++] = s->edges[e], again++;
	if (np)
		into_rounds(s->n, pairs, np, out);
	free(pairs);
	free(t);
	free(good);
}

void links_rounds_free(struct links_rounds *r)
{
	free(r->pairs);
	free(r->start);
	*r = (struct links_rounds){ 0 };
}

const char *links_kind_name(enum links_kind k)
{
	static const char *const names[] = { "bad_node", "bad_path", "intermittent", "unclassified", "failed" };
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

int links_exit_code(const struct links_stats *st, const struct links_verdict *v, size_t n_v)
{
	(void)v;
	return n_v || (st->expect > 0 && st->n && st->median < st->expect) ? 1 : 0;
}

static int cmp_pair(const void *x, const void *y)
{
	const struct sched_pair *p = x, *q = y;
	return p->a != q->a ? (p->a > q->a) - (p->a < q->a) : (p->b > q->b) - (p->b < q->b);
}

/* The index of pair (a, b) in the sorted edges, or -1. */
static long find_edge(const struct links_suspects *s, int x, int y)
{
	struct sched_pair key = ordered(x, y);
	const struct sched_pair *e = s->n_edges ? bsearch(&key, s->edges, s->n_edges, sizeof(key), cmp_pair) : NULL;
	return e ? (long)(e - s->edges) : -1;
}

/* What the classification gathers per node. */
#define MAX_GOOD 8
struct node_acc {
	double *sent, *recv;   /* pass-1 rates */
	size_t n_sent, n_recv;
	int partner[MAX_GOOD]; /* pass 2: known-good partners, and whether slow with each */
	bool partner_slow[MAX_GOOD];
	int good_n, good_slow, seen;
	double good_min, good_max;
	bool slow_send, slow_recv;
};

static void push(double **v, size_t *n, double x)
{
	*v = links_grow(*v, *n, sizeof(**v));
	(*v)[(*n)++] = x;
}

/* Pass-2 rate r between suspect t and known-good g, direction t sends. */
static void note_good(struct node_acc *a, const struct links_stats *st, int g, double r, bool t_sends)
{
	if (!a->seen++ || r < a->good_min)
		a->good_min = r;
	if (a->seen == 1 || r > a->good_max)
		a->good_max = r;
	int k = 0;
	while (k < a->good_n && a->partner[k] != g)
		k++;
	if (k == a->good_n) {
		if (k == MAX_GOOD)
			return;
		a->partner[a->good_n++] = g;
	}
	if (!links_is_slow(st, r))
		return;
	if (!a->partner_slow[k])
		a->good_slow++;
	a->partner_slow[k] = true;
	if (t_sends)
		a->slow_send = true;
	else
		a->slow_recv = true;
}

/* One pass over the measurements: the suspects' own rates, the second
 * pass with known-good nodes, the slow pairs' rates in both passes. */
static void gather(const struct links_meas *m, size_t n_m, const struct links_stats *st,
		   const struct links_suspects *s, const unsigned char *t, struct node_acc *acc, double (*edge)[4])
{
	for (size_t i = 0; i < n_m; i++) {
		int f = m[i].from, to = m[i].to;
		double r = m[i].gbps;
		if (f < 0 || to < 0 || f >= s->n || to >= s->n || f == to || r < 0)
			continue;
		long e = find_edge(s, f, to);
		if (e >= 0)
			edge[e][(m[i].pass == 2) * 2 + (f > to)] = r;
		if (m[i].pass == 1) {
			if (t[f])
				push(&acc[f].sent, &acc[f].n_sent, r);
			if (t[to])
				push(&acc[to].recv, &acc[to].n_recv, r);
		} else if (t[f] && s->good[to]) {
			note_good(&acc[f], st, to, r, true);
		} else if (t[to] && s->good[f]) {
			note_good(&acc[to], st, f, r, false);
		}
	}
}

static void add(struct links_verdict **v, size_t *n, const struct links_verdict *x)
{
	*v = links_grow(*v, *n, sizeof(**v));
	(*v)[(*n)++] = *x;
}

/* Node verdicts: bad (slow with most known-good partners) or
 * unclassified (none to compare with); *bad marks the bad ones. */
static void node_verdicts(const struct links_suspects *s, const unsigned char *t, struct node_acc *acc,
			  unsigned char *bad, struct links_verdict **v, size_t *nv)
{
	for (int i = 0; i < s->n; i++) {
		struct node_acc *a = &acc[i];
		if (!t[i])
			continue;
		struct links_verdict x = { .a = i, .b = -1, .ab = median(a->sent, a->n_sent),
					   .ba = median(a->recv, a->n_recv), .good_n = a->good_n,
					   .good_slow = a->good_slow, .good_min = a->good_min, .good_max = a->good_max,
					   .re_ab = NAN, .re_ba = NAN, .slow_ab = a->slow_send, .slow_ba = a->slow_recv };
		if (a->good_n && 2 * a->good_slow > a->good_n) {
			x.kind = LINKS_BAD_NODE;
			bad[i] = 1;
			add(v, nv, &x);
		} else if (s->node[i]) {
			/* slow with most partners in the first pass: with none
			 * to compare with, unclassified; fine with known-good
			 * ones now, intermittent. Its pairs are part of this. */
			x.kind = a->good_n ? LINKS_INTERMITTENT : LINKS_UNCLASSIFIED;
			bad[i] = 1;
			add(v, nv, &x);
		}
	}
}

/* Path verdicts for the slow pairs no bad node explains. */
static void path_verdicts(const struct links_suspects *s, const struct links_stats *st, const struct node_acc *acc,
			  const unsigned char *bad, double (*edge)[4], struct links_verdict **v, size_t *nv)
{
	for (size_t e = 0; e < s->n_edges; e++) {
		int a = s->edges[e].a, b = s->edges[e].b;
		if (bad[a] || bad[b])
			continue;
		struct links_verdict x = { .a = a, .b = b, .ab = edge[e][0], .ba = edge[e][1], .re_ab = edge[e][2],
					   .re_ba = edge[e][3], .slow_ab = links_is_slow(st, edge[e][0]),
					   .slow_ba = links_is_slow(st, edge[e][1]) };
		bool retested = !isnan(x.re_ab) || !isnan(x.re_ba);
		bool again = links_is_slow(st, isnan(x.re_ab) ? -1 : x.re_ab) ||
			     links_is_slow(st, isnan(x.re_ba) ? -1 : x.re_ba);
		if (!acc[a].good_n || !acc[b].good_n)
			x.kind = LINKS_UNCLASSIFIED;
		else if (retested && !again)
			x.kind = LINKS_INTERMITTENT;
		else
			x.kind = LINKS_BAD_PATH;
		add(v, nv, &x);
	}
}

/* Failed measurements, one verdict per pair and pass (a < b). */
static void failed_verdicts(const struct links_meas *m, size_t n_m, struct links_verdict **v, size_t *nv)
{
	size_t first = *nv;
	for (size_t i = 0; i < n_m; i++) {
		if (m[i].gbps >= 0)
			continue;
		struct sched_pair p = ordered(m[i].from, m[i].to);
		bool dup = false;
		for (size_t j = first; j < *nv && !dup; j++)
			dup = (*v)[j].a == p.a && (*v)[j].b == p.b && (*v)[j].pass == m[i].pass;
		if (dup)
			continue;
		struct links_verdict x = { .kind = LINKS_FAILED, .a = p.a, .b = p.b, .ab = NAN, .ba = NAN, .re_ab = NAN,
					   .re_ba = NAN, .err = m[i].err ? m[i].err : "no result", .pass = m[i].pass };
		add(v, nv, &x);
	}
}

void links_classify(int n, const struct links_meas *m, size_t n_m, const struct links_stats *st,
		    const struct links_suspects *s, struct links_verdict **ret, size_t *ret_n)
{
	*ret = NULL;
	*ret_n = 0;
	unsigned char *t = targets(s), *bad = xcalloc((size_t)n + 1, 1);
	struct node_acc *acc = xcalloc((size_t)n + 1, sizeof(*acc));
	double (*edge)[4] = xcalloc(s->n_edges + 1, sizeof(*edge));
	for (size_t e = 0; e < s->n_edges; e++)
		edge[e][0] = edge[e][1] = edge[e][2] = edge[e][3] = NAN;
	gather(m, n_m, st, s, t, acc, edge);
	node_verdicts(s, t, acc, bad, ret, ret_n);
	path_verdicts(s, st, acc, bad, edge, ret, ret_n);
	failed_verdicts(m, n_m, ret, ret_n);
	for (int i = 0; i < n; i++) {
		free(acc[i].sent);
		free(acc[i].recv);
	}
	free(acc);
	free(edge);
	free(bad);
	free(t);
}
