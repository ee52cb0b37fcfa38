/* Slurm's node states from gpuready's verdicts (docs/cluster.md, "Slurm:
 * drain and resume"): the drain reason a failing node gets, the scontrol
 * commands that drain and resume a node, and the strict reading of
 * `scontrol show node -o NAME` that tells whether gpuready drained it.
 *
 * The convention is LBNL Node Health Check's (https://github.com/mej/nhc,
 * README, "node-mark-offline" / "node-mark-online"): a node is drained
 * with a reason that starts with the tool's own prefix, and the tool
 * returns to service only the nodes whose reason still starts with it, so
 * a node an administrator drained for another reason is never touched.
 * Commands run through spawn_run (no shell, argv built here), each within
 * SLURM_TIMEOUT_MS. */
#ifndef GPUREADY_CLUSTER_SLURM_H
#define GPUREADY_CLUSTER_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strv.h"

/* What every reason gpuready gives Slurm starts with. */
#define SLURM_REASON_PREFIX "gpuready:"
/* Bytes of a drain reason (Slurm takes free text; this keeps `sinfo -R`
 * readable and the line the node's --reason line is). */
#define SLURM_REASON_MAX 200u
/* How long one scontrol command may take (it asks slurmctld, which answers
 * within its MessageTimeout, 10 s by default: slurm.conf(5)). */
#define SLURM_TIMEOUT_MS 30000
/* Bytes of `scontrol show node -o NAME` read (one line of a few hundred). */
#define SLURM_SHOW_MAX (64u << 10)

/* The drain reason for a node's --reason line: "gpuready: " and the line
 * without its own leading "gpuready ", every byte outside
 * [A-Za-z0-9 ._,:=/+@()-] replaced by '_' (the line is untrusted: it comes
 * from a node's record), cut to SLURM_REASON_MAX bytes ending in "...".
 * malloc'd. */
char *slurm_reason(const char *node_reason);

/* argv (into out, emptied first) of `scontrol update NodeName=NODE
 * State=DRAIN Reason=REASON`, `... State=RESUME` and `scontrol show node
 * -o NODE`. node must be a valid host name (host_name_valid). */
void slurm_drain_argv(const char *scontrol, const char *node, const char *reason, struct strv *out);
void slurm_resume_argv(const char *scontrol, const char *node, struct strv *out);
void slurm_show_argv(const char *scontrol, const char *node, struct strv *out);

/* argv as one shell command line an operator can run or pipe to sh: a
 * word of [A-Za-z0-9_./:=+@-] as it is; KEY=VALUE whose value has no
 * ", $, `, \ or ! as KEY="VALUE"; any other word in single quotes.
 * malloc'd. */
char *slurm_command_line(const struct strv *argv);

/* A node's state as `scontrol show node -o NAME` prints it. */
struct slurm_node {
	char *state;        /* "IDLE+DRAIN" */
	char *reason;       /* the reason text, "" when none */
	bool drain;         /* DRAIN is one of the state's flags (drained or draining) */
	bool by_gpuready;   /* drain and the reason starts with SLURM_REASON_PREFIX */
};
void slurm_node_free(struct slurm_node *n);

/* Parses the output of `scontrol show node -o NODE`: one line of at most
 * SLURM_SHOW_MAX bytes (a final newline allowed), starting
 * "NodeName=NODE ", with a " State=" field (its value [A-Z_+*~#!%$@^-]) and,
 * after it, an optional " Reason=" field (before any Comment=, Extra=,
 * InstanceId=, InstanceType= or ReservationName=, which Slurm prints after
 * it) that runs to the next of those or the line's end, less the
 * " [USER@TIME]" Slurm appends. 0 with *ret filled, or -EINVAL with
 * *err (malloc'd) saying what is wrong; *ret is untouched on failure. */
int slurm_parse_node(const char *text, size_t len, const char *node, struct slurm_node *ret, char **err);

/* Runs argv (no shell) within SLURM_TIMEOUT_MS: 0 when it exits 0; else
 * -1 with *err (malloc'd): "cannot run scontrol: ...", "scontrol exited
 * 1: <its last line of standard error>", "... did not end within 30 s".
 * out (may be NULL) gets its standard output. */
int slurm_run(const struct strv *argv, char **out, char **err);

/* The node's state through `scontrol show node -o NODE`: 0, or -1 with
 * *err (malloc'd). */
int slurm_query(const char *scontrol, const char *node, struct slurm_node *ret, char **err);

#endif
