/* Cluster mode: many nodes' check results at once (docs/cluster.md).
 *
 * Data flows one way, after the node checks: root -> inventory -> checks ->
 * report -> record -> aggregate -> renderers. Each node's inventory and
 * report become a compact node record (record.c): its verdict counts, its
 * `--reason` line, its warn and fail findings, and the facts that should
 * agree across nodes as sorted "key=value" strings (facts.c). Records are
 * written and read as JSON; a record read back is untrusted input (it
 * will come from the network), so the parser is strict and bounded. The
 * aggregate (drift.c) groups the records by hardware shape and takes a
 * majority vote per fact within each group, or compares every node with a
 * golden record (`--expect`). The renderers (render.c) print the summary,
 * the failing nodes and the drift table as text, JSON
 * (docs/cluster.schema.json) or Prometheus series per node.
 *
 * Nothing here prints or exits; functions return 0 or -errno with the
 * reason in `char **err` (malloc'd, the caller's) where they say so. */
#ifndef GPUREADY_CLUSTER_H
#define GPUREADY_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/report.h"
#include "core/strv.h"

struct inventory;
struct json_object;

/* Version of the record's and the cluster JSON's layout (docs/cluster.md). */
#define CLUSTER_SCHEMA_VERSION 1

/* Bounds on a record read back (record_parse): a node's record is a few
 * KiB; these leave room for a node with thousands of devices and refuse
 * anything that would make one record cost more than it can be worth. */
#define RECORD_MAX_BYTES (4u << 20)  /* the JSON text */
#define RECORD_MAX_STRING 4096u      /* any string, bytes */
#define RECORD_MAX_FINDINGS 10000u   /* warn and fail findings */
#define RECORD_MAX_FACTS 10000u      /* facts */
#define RECORD_MAX_DEPTH 8           /* JSON nesting */

/* The value a node without a fact votes with. */
#define FACT_ABSENT "(absent)"

struct record_finding {
	char *id, *subject, *message, *hint; /* hint NULL when none */
	enum status status;                  /* STATUS_WARN or STATUS_FAIL */
};

enum node_state {
	NODE_PASS,        /* no warn, no fail */
	NODE_WARN,        /* a warn, no fail */
	NODE_FAIL,        /* a fail */
	NODE_UNREACHABLE, /* no record: `why` says why (an unreadable snapshot) */
};

struct node_record {
	char *node;       /* the node's name (unique within an aggregate) */
	char *version;    /* gpuready's version on that node */
	char *shape;      /* the hardware shape votes are grouped by (facts_shape) */
	bool reachable;   /* false: only node and why are set */
	char *why;        /* why unreachable; NULL otherwise */
	unsigned counts[STATUS__COUNT];
	char *reason;     /* the --reason line (report_reason) */
	struct record_finding *findings; /* warn and fail only, in report order */
	size_t n_findings;
	struct strv facts; /* "key=value", sorted by key, keys unique */
};

/* ---- facts.c ---- */

/* The facts of inv that should agree across nodes of one shape, as
 * "key=value" strings sorted by key (docs/cluster.md lists the keys). A
 * fact the inventory could not read is left out (it votes FACT_ABSENT),
 * never guessed. */
void facts_collect(const struct inventory *inv, struct strv *out);
/* The hardware shape of a node from its facts (gpu.model, gpu.count,
 * nic.models): "8x NVIDIA H100 80GB HBM3 / MT4129" (malloc'd). */
char *facts_shape(const struct strv *facts);
/* The value of key in sorted facts, or NULL. */
const char *facts_get(const struct strv *facts, const char *key);

/* ---- record.c ---- */

/* A record of a node from its inventory and report: node is its name. The
 * caller frees with record_free(). */
void record_build(const struct inventory *inv, const struct report *rep, const char *node, struct node_record *ret);
/* A record of a node that gave none, with why (copied). */
void record_unreachable(struct node_record *ret, const char *node, const char *why);
void record_free(struct node_record *r);
enum node_state record_state(const struct node_record *r);
const char *node_state_name(enum node_state s); /* "pass", "warn", "fail", "unreachable" */

/* The record as a JSON object (the caller owns it). */
struct json_object *record_to_json(const struct node_record *r);
/* Prints o as pretty JSON with a final newline ('/' unescaped) and drops
 * the caller's reference to it; 0 or -EIO. */
int cluster_json_print(struct json_object *o, FILE *out);
/* The record as pretty JSON with a final newline; 0 or -EIO. */
int record_write_json(const struct node_record *r, FILE *out);
/* Parses a record's JSON text (at most RECORD_MAX_BYTES, the bounds
 * above, every field typed, unknown fields refused, facts sorted and
 * unique). 0 and *ret filled, or -EINVAL/-E2BIG with *err saying what is
 * wrong and where; *ret is untouched on failure. */
int record_parse(const char *text, size_t len, struct node_record *ret, char **err);

/* ---- drift.c ---- */

/* One value of a fact and the nodes (indexes into the records) that hold it. */
struct drift_value {
	char *value;
	size_t *nodes;
	size_t n;
};

enum drift_kind {
	DRIFT_MINORITY, /* a majority value and the nodes that differ */
	DRIFT_SPLIT,    /* a tie: no majority; every side named */
	DRIFT_EXPECT,   /* nodes that differ from the golden record (--expect) */
};

/* One fact that does not agree within one group. values[0] is the
 * majority (DRIFT_MINORITY), the golden value (DRIFT_EXPECT: nodes empty),
 * or the first side of a split; the others follow, most nodes first. */
struct drift_row {
	size_t group;
	char *key;
	enum drift_kind kind;
	struct drift_value *values;
	size_t n_values;
};

/* Nodes with the same shape. Only reachable nodes are in a group. */
struct drift_group {
	char *shape;
	size_t *nodes;
	size_t n;
	bool votes;     /* at least 3 nodes: a majority can be taken */
	bool expected;  /* the golden record has this shape: compared with it */
};

/* Groups of fewer nodes than this cannot vote (a 2-node difference has no
 * majority, and one node agrees with itself). */
#define DRIFT_MIN_VOTERS 3

struct drift {
	struct drift_group *groups; /* sorted by shape */
	size_t n_groups;
	struct drift_row *rows;     /* by group, then key */
	size_t n_rows;
	bool *drifts;               /* per record: named in some row outside values[0] */
	char *expect_shape;         /* the golden record's shape; NULL without one */
};

/* Aggregates n records: groups by shape, votes per fact, and with expect
 * (NULL: none) compares the nodes of the golden record's shape with it.
 * Costs O(N·K log(N·K)) for N records of K facts. Never fails. */
void drift_compute(const struct node_record *recs, size_t n, const struct node_record *expect, struct drift *ret);
void drift_free(struct drift *d);

/* ---- render.c ---- */

/* The node names of idx (into recs) in Slurm's hostlist form:
 * "node[01-03,07],login1" (malloc'd). Names are grouped by the text before
 * their last run of digits; runs keep their zero padding. */
char *hostlist_compress(const struct node_record *recs, const size_t *idx, size_t n);
/* The same for names[0..n). */
char *hostlist_compress_names(const char *const *names, size_t n);

/* ---- hostlist.c ---- */

#define HOSTLIST_MAX_TEXT (1u << 20)  /* bytes of a host list (a file's too) */
#define HOSTLIST_MAX_HOSTS 100000u    /* names a host list may expand to */
#define HOST_NAME_MAX_LEN 255u        /* bytes of one host name */

/* A host name gpuready passes to a remote shell: [A-Za-z0-9._-], 1 to
 * HOST_NAME_MAX_LEN bytes, not starting with '-'. */
bool host_name_valid(const char *h);
/* Appends the names of a Slurm hostlist ("node[01-16,20],login1"; items
 * separated by ',' or blanks; several brackets per name multiply) to out,
 * in the order written. 0, or -EINVAL/-E2BIG with *err saying why (out
 * may then hold some names). */
int hostlist_expand(const char *text, size_t len, struct strv *out, char **err);
/* The same for a file's text: one host or hostlist per line (or several),
 * '#' starts a comment to the end of its line. */
int hostlist_parse_file(const char *text, size_t len, struct strv *out, char **err);
/* Removes the second and later copies of a name from hosts (keeping the
 * order), moving them to dropped. O(n log n). */
void hostlist_unique(struct strv *hosts, struct strv *dropped);

/* Exit code of an aggregate: 1 when a node fails or is unreachable or a
 * fact drifts, else 0. */
int cluster_exit_code(const struct node_record *recs, size_t n, const struct drift *d);

int cluster_write_text(const struct node_record *recs, size_t n, const struct drift *d, FILE *out);
/* Only the failing (else warning) nodes' reason lines, "node: reason". */
int cluster_write_reasons(const struct node_record *recs, size_t n, FILE *out);
int cluster_write_json(const struct node_record *recs, size_t n, const struct drift *d, const char *expect_node,
		       FILE *out);
/* The --prom FILE of a cluster check that ended before its result:
 * gpuready_cluster_run_failed 1 and the time, nothing else (atomically). */
int cluster_write_prom_failed(const char *path, double now);
/* Prometheus series per node (a `node` label), written to path atomically;
 * now is the run's Unix time. */
int cluster_write_prom(const struct node_record *recs, size_t n, const struct drift *d, const char *path,
		       double now);
int cluster_write_prom_stream(const struct node_record *recs, size_t n, const struct drift *d, FILE *out,
			      double now);

#endif
