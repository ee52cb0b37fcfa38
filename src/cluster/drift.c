/* Drift by majority vote (docs/cluster.md, "How votes work").
 *
 * The reachable records are grouped by hardware shape, so a mixed fleet
 * does not flag its minority class: eight-GPU H100 nodes vote among
 * themselves, GH200 nodes among themselves. Within a group of at least
 * DRIFT_MIN_VOTERS nodes, every fact any node has is counted per value (a
 * node without the fact votes FACT_ABSENT); the value most nodes hold is
 * the majority and the others are drift, naming their nodes. When the two
 * largest sides are equal there is no majority: the row is a split,
 * naming every side. Smaller groups cannot vote; with a golden record
 * (--expect) the nodes of its shape are compared with it as well, and then
 * a group of one or two nodes is judged too.
 *
 * Cost: one sort of the group's (key, value, node) triples, O(N·K log(N·K))
 * for N nodes of K facts; perf/cluster-aggregate.sh times 10,000 records. */
#define _GNU_SOURCE /* qsort_r */
#include "cluster/cluster.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>

struct triple {
	const char *key;  /* into the record's fact */
	size_t klen;
	const char *value;
	size_t node;      /* index into the records */
};

static int key_cmp(const char *a, size_t ka, const char *b, size_t kb)
{
	int c = memcmp(a, b, ka < kb ? ka : kb);
	return c ? c : (ka > kb) - (ka < kb);
}

static int triple_cmp(const void *x, const void *y)
{
	const struct triple *a = x, *b = y;
	int c = key_cmp(a->key, a->klen, b->key, b->klen);
	if (!c)
		c = strcmp(a->value, b->value);
	return c ? c : (a->node > b->node) - (a->node < b->node);
}

static int by_shape(const void *x, const void *y, void *ud)
{
	const struct node_record *recs = ud;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	int c = strcmp(recs[a].shape, recs[b].shape);
	return c ? c : (a > b) - (a < b);
}

static void make_groups(const struct node_record *recs, size_t n, const struct node_record *expect,
			struct drift *d)
{
	size_t *ix = xcalloc(n + 1, sizeof(*ix)), m = 0;
	for (size_t i = 0; i < n; i++)
		if (recs[i].reachable)
			ix[m++] = i;
	qsort_r(ix, m, sizeof(*ix), by_shape, (void *)recs);
	for (size_t i = 0, j; i < m; i = j) {
		for (j = i; j < m && !strcmp(recs[ix[j]].shape, recs[ix[i]].shape); j++)
			;
		d->groups = xreallocarray(d->groups, d->n_groups + 1, sizeof(*d->groups));
		struct drift_group *g = &d->groups[d->n_groups++];
		*g = (struct drift_group){ .shape = xstrdup(recs[ix[i]].shape), .n = j - i,
					   .votes = j - i >= DRIFT_MIN_VOTERS,
					   .expected = expect && !strcmp(expect->shape, recs[ix[i]].shape) };
		g->nodes = xcalloc(j - i, sizeof(*g->nodes));
		memcpy(g->nodes, ix + i, (j - i) * sizeof(*ix));
	}
	free(ix);
}

static struct drift_value *value_add(struct drift_row *row, const char *value)
{
	row->values = xreallocarray(row->values, row->n_values + 1, sizeof(*row->values));
	struct drift_value *v = &row->values[row->n_values++];
	*v = (struct drift_value){ .value = xstrdup(value) };
	return v;
}

/* Appends node; the array grows by doubling (its capacity is the next
 * power of two at or above n). */
static void value_node(struct drift_value *v, size_t node)
{
	if (!(v->n & (v->n - 1)))
		v->nodes = xreallocarray(v->nodes, v->n ? 2 * v->n : 1, sizeof(*v->nodes));
	v->nodes[v->n++] = node;
}

/* Every node of the group has the key, all with one value (t is sorted by
 * value): nothing to vote on, nothing to allocate. */
static bool unanimous(const struct triple *t, size_t n, const struct drift_group *g)
{
	return n == g->n && !strcmp(t[0].value, t[n - 1].value);
}

/* One key's triples t[0..n) of group g (sorted by value, then node): the
 * values with their nodes, FACT_ABSENT for the group's nodes without it
 * (seen[node] == stamp marks those with it). */
static void key_values(const struct triple *t, size_t n, const struct drift_group *g, const size_t *seen,
		       size_t stamp, struct drift_row *row)
{
	for (size_t i = 0; i < n; i++) {
		if (!i || strcmp(t[i].value, t[i - 1].value))
			value_add(row, t[i].value);
		value_node(&row->values[row->n_values - 1], t[i].node);
	}
	if (n == g->n)
		return;
	struct drift_value *abs = value_add(row, FACT_ABSENT);
	for (size_t k = 0; k < g->n; k++)
		if (seen[g->nodes[k]] != stamp)
			value_node(abs, g->nodes[k]);
}

static int by_count(const void *x, const void *y)
{
	const struct drift_value *a = x, *b = y;
	if (a->n != b->n)
		return a->n < b->n ? 1 : -1;
	return strcmp(a->value, b->value);
}

static void row_free(struct drift_row *row)
{
	for (size_t i = 0; i < row->n_values; i++) {
		free(row->values[i].value);
		free(row->values[i].nodes);
	}
	free(row->values);
	free(row->key);
}

static struct drift_row *row_push(struct drift *d, struct drift_row *row)
{
	d->rows = xreallocarray(d->rows, d->n_rows + 1, sizeof(*d->rows));
	d->rows[d->n_rows] = *row;
	return &d->rows[d->n_rows++];
}

/* The vote on one key: a row when the group does not agree. */
static void vote(struct drift *d, size_t gi, const char *key, size_t klen, const struct triple *t, size_t n,
		 const size_t *seen, size_t stamp)
{
	const struct drift_group *g = &d->groups[gi];
	if (unanimous(t, n, g))
		return;
	struct drift_row row = { .group = gi, .key = xstrndup(key, klen) };
	key_values(t, n, g, seen, stamp, &row);
	if (row.n_values < 2) {
		row_free(&row);
		return;
	}
	qsort(row.values, row.n_values, sizeof(*row.values), by_count);
	/* a majority is more than half of the group; a largest value short of
	 * that (3 of 7 against 2, 1, 1) is a split, naming every side */
	row.kind = row.values[0].n * 2 > g->n ? DRIFT_MINORITY : DRIFT_SPLIT;
	struct drift_row *r = row_push(d, &row);
	for (size_t v = r->kind == DRIFT_SPLIT ? 0 : 1; v < r->n_values; v++)
		for (size_t k = 0; k < r->values[v].n; k++)
			d->drifts[r->values[v].nodes[k]] = true;
}

/* The comparison of one key with the golden value (NULL: the golden record
 * lacks it): a row naming the nodes that hold something else. */
static void compare(struct drift *d, size_t gi, const char *key, size_t klen, const char *golden,
		    const struct triple *t, size_t n, const size_t *seen, size_t stamp)
{
	const struct drift_group *g = &d->groups[gi];
	if (n && unanimous(t, n, g) && golden && !strcmp(golden, t[0].value))
		return;
	struct drift_row row = { .group = gi, .key = xstrndup(key, klen), .kind = DRIFT_EXPECT };
	struct drift_row all = { 0 };
	key_values(t, n, g, seen, stamp, &all);
	value_add(&row, golden ? golden : FACT_ABSENT);
	for (size_t v = 0; v < all.n_values; v++) {
		if (!strcmp(all.values[v].value, row.values[0].value))
			continue;
		row.values = xreallocarray(row.values, row.n_values + 1, sizeof(*row.values));
		row.values[row.n_values++] = all.values[v];
		all.values[v] = (struct drift_value){ 0 };
	}
	row_free(&all);
	if (row.n_values < 2) {
		row_free(&row);
		return;
	}
	qsort(row.values + 1, row.n_values - 1, sizeof(*row.values), by_count);
	struct drift_row *r = row_push(d, &row);
	for (size_t v = 1; v < r->n_values; v++)
		for (size_t k = 0; k < r->values[v].n; k++)
			d->drifts[r->values[v].nodes[k]] = true;
}

/* The golden facts no node of the group has: every node lacks them. */
static void compare_missing(struct drift *d, size_t gi, const struct node_record *expect, const struct triple *t,
			    size_t nt, size_t *seen, size_t *stamp)
{
	for (size_t i = 0; i < expect->facts.n; i++) {
		const char *f = expect->facts.v[i];
		size_t klen = strcspn(f, "="), lo = 0, hi = nt;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (key_cmp(t[mid].key, t[mid].klen, f, klen) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nt && !key_cmp(t[lo].key, t[lo].klen, f, klen))
			continue;
		++*stamp;
		compare(d, gi, f, klen, f + klen + 1, t, 0, seen, *stamp);
	}
}

static void group_drift(struct drift *d, size_t gi, const struct node_record *recs,
			const struct node_record *expect, size_t *seen, size_t *stamp)
{
	const struct drift_group *g = &d->groups[gi];
	size_t nt = 0;
	for (size_t k = 0; k < g->n; k++)
		nt += recs[g->nodes[k]].facts.n;
	struct triple *t = xcalloc(nt + 1, sizeof(*t));
	nt = 0;
	for (size_t k = 0; k < g->n; k++) {
		const struct strv *f = &recs[g->nodes[k]].facts;
		for (size_t i = 0; i < f->n; i++) {
			size_t klen = strcspn(f->v[i], "=");
			t[nt++] = (struct triple){ .key = f->v[i], .klen = klen, .value = f->v[i] + klen + (f->v[i][klen] != 0),
						   .node = g->nodes[k] };
		}
	}
	qsort(t, nt, sizeof(*t), triple_cmp);
	for (size_t i = 0, j; i < nt; i = j) {
		++*stamp;
		for (j = i; j < nt && !key_cmp(t[j].key, t[j].klen, t[i].key, t[i].klen); j++)
			seen[t[j].node] = *stamp;
		if (g->votes)
			vote(d, gi, t[i].key, t[i].klen, t + i, j - i, seen, *stamp);
		if (g->expected) {
			_cleanup_free_ char *key = xstrndup(t[i].key, t[i].klen);
			compare(d, gi, t[i].key, t[i].klen, facts_get(&expect->facts, key), t + i, j - i, seen, *stamp);
		}
	}
	if (g->expected)
		compare_missing(d, gi, expect, t, nt, seen, stamp);
	free(t);
}

void drift_compute(const struct node_record *recs, size_t n, const struct node_record *expect, struct drift *ret)
{
	struct drift d = { .drifts = xcalloc(n + 1, sizeof(bool)), .expect_shape = expect ? xstrdup(expect->shape) : NULL };
	make_groups(recs, n, expect, &d);
	size_t *seen = xcalloc(n + 1, sizeof(*seen)), stamp = 0;
	for (size_t gi = 0; gi < d.n_groups; gi++)
		group_drift(&d, gi, recs, expect, seen, &stamp);
	free(seen);
	*ret = d;
}

void drift_free(struct drift *d)
{
	for (size_t i = 0; i < d->n_groups; i++) {
		free(d->groups[i].shape);
		free(d->groups[i].nodes);
	}
	free(d->groups);
	for (size_t i = 0; i < d->n_rows; i++)
		row_free(&d->rows[i]);
	free(d->rows);
	free(d->drifts);
	free(d->expect_shape);
	*d = (struct drift){ 0 };
}
