/* One node's record from a root: the live machine (`cluster facts`) or a
 * snapshot directory (`cluster check --snapshots`). Reads the inventory,
 * runs every check, and builds the record (record.c). A snapshot that
 * cannot be read becomes an unreachable record with the reason, never an
 * error of the whole run: one bad directory among a thousand must not hide
 * the other 999. */
#include "cluster/node.h"
#include "checks/check.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"
#include "probe/probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *node_name_clean(const char *s)
{
	char *c = xstrndup(s, 255);
	for (char *p = c; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '-' || *p == '_'))
			*p = '_';
	if (!*c) {
		free(c);
		c = xstrdup("unnamed");
	}
	return c;
}

int cluster_node_record(const struct inventory *inv, const struct cluster_node_opts *o, struct node_record *ret,
			char **err)
{
	const char *host = inv->kernel.hostname;
	struct report rep;
	report_init(&rep, o->version, host ? host : "unknown", o->root_dir);
	report_set_run(&rep, "check", o->now);
	struct check_select sel = { .only = o->only, .skip = o->skip };
	int r = checks_run(NULL, inv, o->expect, &sel, &rep);
	if (r < 0) {
		*err = xasprintf("a check could not run: %s", strerror(-r));
		report_free(&rep);
		return r;
	}
	_cleanup_free_ char *name = node_name_clean(o->node_name ? o->node_name : host ? host : o->fallback_name);
	record_build(inv, &rep, name, ret);
	report_free(&rep);
	return 0;
}

int cluster_node_run(struct root *root, const struct cluster_node_opts *o, struct node_record *ret, char **err)
{
	_cleanup_inventory_ struct inventory *inv = NULL;
	struct load_opts lo = { .parts = INV_ALL, .python = o->python, .live = probe_live };
	int r = inventory_load(root, &lo, &inv);
	if (r < 0) {
		*err = xasprintf("reading the machine failed: %s", strerror(-r));
		return r;
	}
	struct cluster_node_opts ro = *o;
	ro.root_dir = root_dir(root);
	return cluster_node_record(inv, &ro, ret, err);
}

/* A tree that is no machine's: neither sys/ nor proc/. */
static bool machine_tree(const struct root *root)
{
	return root_exists(root, "/sys") || root_exists(root, "/proc");
}

int cluster_snapshot_open(const char *dir, bool force, struct root **ret, char **name, char **why)
{
	/* the last part of the path, trailing slashes aside (a shell glob
	 * like /shared/snap/ * / ends in one) */
	_cleanup_free_ char *path = xstrdup(dir);
	for (size_t l = strlen(path); l > 1 && path[l - 1] == '/'; l--)
		path[l - 1] = '\0';
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *base = xstrdup(slash && slash[1] ? slash + 1 : path);
	*name = node_name_clean(base);
	*ret = NULL;
	*why = NULL;
	_cleanup_root_ struct root *root = NULL;
	int r = root_open(dir, &root);
	if (r < 0)
		*why = xasprintf("unreadable: cannot open snapshot %s: %s", dir, strerror(-r));
	else if (!machine_tree(root))
		*why = xasprintf("unreadable: %s has neither sys/ nor proc/ (not a snapshot)", dir);
	else if (root_incomplete(root) && !force)
		*why = xasprintf("unreadable: %s is an incomplete snapshot (%s%s): take it again, or read it anyway "
				 "with --force",
				 dir, dir, ROOT_INCOMPLETE);
	if (*why)
		return -EINVAL;
	*ret = TAKE_PTR(root);
	return 0;
}

void cluster_node_snapshot(const char *dir, const struct cluster_node_opts *o, struct node_record *ret)
{
	_cleanup_root_ struct root *root = NULL;
	_cleanup_free_ char *fallback = NULL, *why = NULL;
	if (cluster_snapshot_open(dir, o->force, &root, &fallback, &why) < 0) {
		record_unreachable(ret, fallback, why);
		return;
	}
	struct cluster_node_opts so = *o;
	so.fallback_name = fallback;
	_cleanup_free_ char *err = NULL;
	if (cluster_node_run(root, &so, ret, &err) < 0) {
		_cleanup_free_ char *w = xasprintf("unreadable: %s: %s", dir, err);
		record_unreachable(ret, fallback, w);
	}
}

static int by_name(const void *a, const void *b)
{
	const struct node_record *x = a, *y = b;
	return strcmp(x->node, y->node);
}

void node_names_unique(char **const *names, size_t n, const char *const *dirs, struct strv *notes)
{
	_cleanup_(strv_freep) struct strv taken = STRV_INIT;
	for (size_t i = 0; i < n; i++)
		strv_add(&taken, *names[i]);
	strv_sort(&taken);
	for (size_t i = 1; i < n; i++) {
		size_t first = 0;
		while (first < i && strcmp(*names[first], *names[i]))
			first++;
		if (first == i)
			continue;
		char *name = NULL;
		for (unsigned k = 2; !name || strv_contains(&taken, name); k++) {
			free(name);
			name = xasprintf("%s_%u", *names[i], k);
		}
		strv_push(notes, xasprintf("%s and %s both record the host name %s: the second is named %s", dirs[first],
					   dirs[i], *names[i], name));
		strv_add(&taken, name);
		strv_sort(&taken);
		free(*names[i]);
		*names[i] = name;
	}
}

void cluster_nodes_unique(struct node_record *recs, size_t n, const char *const *dirs, struct strv *notes)
{
	char ***names = xcalloc(n + 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = &recs[i].node;
	node_names_unique((char **const *)names, n, dirs, notes);
	free(names);
}

void cluster_nodes_sort(struct node_record *recs, size_t n)
{
	qsort(recs, n, sizeof(*recs), by_name);
}

void cluster_nodes_refuse_shared(struct node_record *recs, size_t n, const char *const *labels)
{
	_cleanup_free_ bool *shared = xcalloc(n + 1, sizeof(bool));
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (!strcmp(recs[i].node, recs[j].node))
				shared[i] = shared[j] = true;
	for (size_t i = 0; i < n; i++) {
		if (!shared[i])
			continue;
		_cleanup_free_ char *name = xstrdup(recs[i].node);
		_cleanup_free_ char *why = xasprintf("%s gave the node name %s, which another rank gave too: each node "
						     "needs a name of its own (--node-name)", labels[i], name);
		record_free(&recs[i]);
		record_unreachable(&recs[i], name, why);
	}
}
