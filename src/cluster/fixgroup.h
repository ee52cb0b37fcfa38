/* `gpuready cluster fix` (docs/cluster.md, "cluster fix"): every node's
 * plan (`gpuready fix --json`, docs/fix.md), grouped by what it would do,
 * and the canary batches of --apply.
 *
 * Two plans are the same when they would make the same changes: the same
 * remedies (id, held or not, pending or not) writing the same files (path,
 * create or modify, new content) and running the same commands (argv, the
 * state file and value each sets), and the same manual steps (check,
 * subject, status). Host-specific noise (the host name, the time, why a
 * remedy is held, the diff's context) is left out: fix_plan_canon() writes
 * what counts, fix_plan_digest() hashes it (SHA-256).
 *
 * Nothing a node sends is trusted: fix_node_parse() takes a plan only when
 * it is a JSON object of fix's shape, bounded by RECORD_MAX_BYTES. */
#ifndef GPUREADY_CLUSTER_FIXGROUP_H
#define GPUREADY_CLUSTER_FIXGROUP_H

#include "core/strbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json_object;

#define FIX_DIGEST_HEX 64 /* SHA-256 in hex */
#define FIX_DIGEST_SHOW 12 /* the digest's first hex digits, as output shows it */

/* What --apply did on a node. */
enum fix_node_apply {
	FIXA_NONE,      /* no --apply, or nothing to change there */
	FIXA_APPLIED,   /* its `fix --apply` applied every remedy */
	FIXA_FAILED,    /* a remedy failed, or it could not run */
	FIXA_UNTOUCHED, /* a batch before its own failed: never asked */
};

struct fix_node {
	char *name;
	size_t origin;            /* where it came from: its directory, host or rank */
	struct json_object *plan; /* fix --json's object; NULL: it could not be planned */
	char *why;                /* why it could not be planned */
	int exit;                 /* its fix's exit status (0 nothing to do, 1 changes or a check still fails) */
	size_t changes;           /* the plan's "changes" */
	char digest[FIX_DIGEST_HEX + 1];
	/* --apply */
	enum fix_node_apply apply;
	size_t batch;             /* its batch, from 1; 0 none */
	char *apply_why;          /* FIXA_FAILED: why */
	int apply_exit;           /* FIXA_APPLIED: its fix --apply's exit status (1: a check still fails) */
};

/* A plan's canonical text (what it would do) and its digest. */
void fix_plan_canon(struct json_object *plan, struct strbuf *out);
void fix_plan_digest(struct json_object *plan, char out[FIX_DIGEST_HEX + 1]);

/* A node planned: plan (taken) and fix's exit status. */
void fix_node_planned(struct fix_node *n, const char *name, struct json_object *plan, int exit);
/* A node planned from text a node sent: 0, or -EINVAL with *err saying
 * why it is no plan (nothing is taken then). */
int fix_node_parse(struct fix_node *n, const char *name, const char *text, size_t len, int exit, char **err);
/* A node that could not be planned. */
void fix_node_unreachable(struct fix_node *n, const char *name, const char *why);
void fix_node_free(struct fix_node *n);

/* Makes names unique: a second "gpu01" becomes "gpu01_2" (a note in
 * notes, labels[i] saying where node i came from); sorts by name. */
struct strv;
void fix_nodes_unique(struct fix_node *v, size_t n, const char *const *labels, struct strv *notes);
void fix_nodes_sort(struct fix_node *v, size_t n);

/* The planned nodes grouped by digest: the largest group first (ties: by
 * the first name), each group's nodes in name order. */
struct fix_group {
	size_t *idx;
	size_t n;
};
size_t fix_nodes_group(const struct fix_node *v, size_t n, struct fix_group **ret);
void fix_groups_free(struct fix_group *g, size_t n);

/* The order --apply goes in: the planned nodes with changes, by name
 * (indexes into v); the count. */
size_t fix_apply_order(const struct fix_node *v, size_t n, size_t *order);

/* Marks the nodes order[from..m) untouched (a batch before failed). */
void fix_nodes_untouched(struct fix_node *v, const size_t *order, size_t from, size_t m);

/* The outcome of --apply over the batches. */
struct fix_rollout {
	bool asked;          /* --apply was given */
	size_t batch;        /* --batch N */
	size_t batches;      /* how many batches the nodes with changes make */
	size_t done;         /* batches that went through without a failure */
	bool stopped;        /* a batch had a failure: the later ones were not started */
};

/* Is the node's fix --apply result (exit, the object) a failure? why
 * (malloc'd) says what failed. */
bool fix_apply_failed(int exit, struct json_object *result, char **why);

/* Output: text, or the JSON of docs/cluster-fix.schema.json. */
int fix_cluster_text(const struct fix_node *v, size_t n, const struct fix_rollout *ro, FILE *out);
int fix_cluster_json(const struct fix_node *v, size_t n, const struct fix_rollout *ro, FILE *out);
/* 0 every node planned and nothing to change (and, with --apply, every
 * batch applied without a failure and no check still failing); 1 otherwise. */
int fix_cluster_exit(const struct fix_node *v, size_t n, const struct fix_rollout *ro);

#endif
