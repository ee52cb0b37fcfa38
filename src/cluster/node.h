/* One node's record from a root (node.c): the live machine or a snapshot.
 * Separate from cluster.h because it runs the checks (it includes
 * checks/ and probe/), which the record, drift and renderers never do. */
#ifndef GPUREADY_CLUSTER_NODE_H
#define GPUREADY_CLUSTER_NODE_H

#include "cluster/cluster.h"
#include "core/root.h"

struct site_expect;

struct cluster_node_opts {
	const char *version;            /* gpuready's */
	double now;                     /* the run's Unix time */
	const struct site_expect *expect;
	const struct strv *only, *skip; /* --only, --skip */
	const char *python;             /* --python, or NULL */
	bool force;                     /* read incomplete snapshots */
	const char *node_name;          /* the name to give; NULL: the host name */
	const char *fallback_name;      /* when the host name is unknown */
	const char *root_dir;           /* the root read, for the report */
};

/* The name as a record takes it: [A-Za-z0-9._-], others become '_', at
 * most 255 bytes, "unnamed" when empty (malloc'd). */
char *node_name_clean(const char *s);

/* Runs every check on inv and builds the record. 0, or -errno with *err
 * (malloc'd) when a check could not run. */
struct inventory;
int cluster_node_record(const struct inventory *inv, const struct cluster_node_opts *o, struct node_record *ret,
			char **err);
/* Reads root's inventory, runs every check and builds the record. 0, or
 * -errno with *err (malloc'd) when the inventory or a check could not run. */
int cluster_node_run(struct root *root, const struct cluster_node_opts *o, struct node_record *ret, char **err);

/* Opens the snapshot in dir: 0 with *ret; or -EINVAL with *why (malloc'd,
 * starting "unreadable: ") when it cannot be read, is no machine tree, or
 * is an incomplete snapshot (without force). *name: the directory's name,
 * cleaned (malloc'd), either way. */
int cluster_snapshot_open(const char *dir, bool force, struct root **ret, char **name, char **why);

/* The record of the snapshot in dir, named by its recorded host name, else
 * by the directory's name. Never fails: a directory that cannot be read,
 * is no machine tree, or is an incomplete snapshot (without o->force) is
 * an unreachable record whose why starts "unreadable: ". */
void cluster_node_snapshot(const char *dir, const struct cluster_node_opts *o, struct node_record *ret);

/* Renames the second and later records of one name "<name>_2", ... so
 * names are unique; dirs[i] is where record i came from. Each rename is
 * said in notes. */
void cluster_nodes_unique(struct node_record *recs, size_t n, const char *const *dirs, struct strv *notes);
/* The same over names[i] (each a pointer to a malloc'd name). */
void node_names_unique(char **const *names, size_t n, const char *const *dirs, struct strv *notes);
/* Under a launcher every process is a node of its own: records that give
 * one node name are all refused (an unreachable row each, naming
 * labels[i], where it came from), never renamed, so that no rank can take
 * another node's row. */
void cluster_nodes_refuse_shared(struct node_record *recs, size_t n, const char *const *labels);
/* Sorts records by name. */
void cluster_nodes_sort(struct node_record *recs, size_t n);

#endif
