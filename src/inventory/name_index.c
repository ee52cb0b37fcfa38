/* Lookup by name: a sorted index over the names of an array of structs.
 *
 * The checks ask for PCI functions by BDF, netdevs and RDMA devices by name
 * once or more per port; scanning the array each time made `check` on a
 * node with 2,000 RDMA devices take seconds (perf/many-rdma.sh). The loaders
 * sort (name, position) pairs once; a lookup is then a binary search. Equal
 * names are ordered by position, so a lookup answers the first of them, as
 * the scan it replaces did. */
#include "inventory.h"
#include "core/cleanup.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *name_at(const struct name_key *k, const void *items, size_t i)
{
	return *(char *const *)((const char *)items + i * k->size + k->off);
}

static int name_cmp(bool fold, const char *a, const char *b)
{
	return fold ? strcasecmp(a, b) : strcmp(a, b);
}

/* qsort has no context argument: the slots carry the fold flag. */
static int slot_cmp(const void *a, const void *b)
{
	const struct name_slot *x = a, *y = b;
	int c = name_cmp(x->fold, x->name, y->name);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

void name_index_build(struct name_index *ix, const struct name_key *k, const void *items, size_t n)
{
	name_index_free(ix);
	ix->v = xcalloc(n ? n : 1, sizeof(*ix->v));
	for (size_t i = 0; i < n; i++) {
		const char *name = name_at(k, items, i);
		if (name)
			ix->v[ix->n++] = (struct name_slot){ .name = name, .pos = i, .fold = k->fold };
	}
	qsort(ix->v, ix->n, sizeof(*ix->v), slot_cmp);
	ix->of = n;
	ix->built = true;
}

size_t name_lookup(const struct name_index *ix, const struct name_key *k, const void *items, size_t n,
		   const char *name)
{
	if (!name)
		return n;
	if (!ix->built || ix->of != n) {
		for (size_t i = 0; i < n; i++) {
			const char *s = name_at(k, items, i);
			if (s && !name_cmp(k->fold, s, name))
				return i;
		}
		return n;
	}
	/* the first slot whose name is not below `name` */
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (name_cmp(k->fold, ix->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && !name_cmp(k->fold, ix->v[lo].name, name) ? ix->v[lo].pos : n;
}

void name_index_free(struct name_index *ix)
{
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}
