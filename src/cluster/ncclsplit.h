/* `gpuready cluster nccl` (docs/cluster.md, "cluster nccl"): which node
 * makes NCCL slow. Pure: the groups of each stage, what the processes
 * report after one, and the groups' bus bandwidths; the analysis is
 * cluster links' (links.h) over the pairs' bus bandwidths.
 *
 * The stages, in one launch:
 *   all:     one all_reduce on every node, against --expect-busbw; when
 *            it meets it, the run ends there;
 *   halves:  the nodes in two halves (ranks 0..n/2-1 and the rest), both
 *            at once (four nodes or more);
 *   pairs:   --pair-rounds rounds of the circle schedule (schedule.h):
 *            every round n/2 disjoint node pairs at once, each node with
 *            a new partner, NCCL's ring algorithm forced;
 *   recheck: every suspect node paired with known-good ones and every
 *            suspect path again (links_second_pass), as cluster links.
 * A group is a communicator split off the job's (ncclCommSplit,
 * MPI_Comm_split, or the socket backend's direct TCP ring); its time is
 * its slowest member's and its bus bandwidth is nccl-tests' for
 * all_reduce: bytes / time x 2(R-1)/R over its R ranks
 * (docs/nccl-tests-format.md). */
#ifndef GPUREADY_CLUSTER_NCCLSPLIT_H
#define GPUREADY_CLUSTER_NCCLSPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/links.h"
#include "cluster/links_render.h"

enum ncs_stage { NCS_ALL, NCS_HALVES, NCS_PAIRS, NCS_RECHECK };
const char *ncs_stage_name(enum ncs_stage s); /* "all", "halves", "pairs", "recheck" */

/* What each process tells rank 0 after a stage (fixed size, on the wire
 * as it is: every field is checked where it is read). */
struct ncs_part {
	double seconds;     /* per all_reduce on this process; <= 0 none */
	double wrong;       /* elements that came out wrong */
	int32_t color;      /* the group it was in, -1 none */
	int32_t ranks;      /* the ranks its group had (the backend's count) */
	int32_t failed;     /* 1: err says why */
	char err[240];
};

struct ncs_group {
	enum ncs_stage stage;
	int round;          /* pairs and recheck: the round (0-based) */
	int a, b;           /* pairs, recheck: the nodes (a < b); all, halves: first and last node */
	int nodes, ranks;   /* nodes in it; ranks (nodes x GPUs per node) */
	double seconds;     /* the slowest member's time per all_reduce */
	double busbw;       /* GB/s; < 0: not measured (err) */
	int64_t wrong;
	char *err;          /* malloc'd, "node: why", or NULL */
};

/* The colors of a stage, per node (process): -1 in no group. */
void ncs_colors_all(int n, int *color);
/* 0 when there are fewer than four nodes (no halves), else 2. */
int ncs_colors_halves(int n, int *color);
void ncs_colors_pairs(int n, const struct sched_pair *p, size_t np, int *color);

/* Rank 0: the groups of one stage (color 0.. up to n-1) from every
 * node's part, appended to *g. names: the nodes', for errors. */
void ncs_collect(enum ncs_stage st, int round, const int *color, int n, int local, uint64_t bytes,
		 const struct ncs_part *parts, const struct links_node *nodes, struct ncs_group **g, size_t *ng);
void ncs_groups_free(struct ncs_group *g, size_t ng);

/* The pairs of stage st as cluster links' measurements of pass `pass`
 * (both directions the pair's bus bandwidth; err points into g). */
void ncs_pairs_meas(const struct ncs_group *g, size_t ng, enum ncs_stage st, int pass, struct links_meas **m,
		    size_t *nm);

struct ncs_report {
	int n, local;
	const struct links_node *nodes;
	const char *backend, *library;
	uint64_t bytes;
	int iters;
	double expect;                 /* --expect-busbw, 0 none */
	const struct ncs_group *g;
	size_t ng;
	const struct links_stats *st;  /* of the pairs (when split) */
	const struct links_verdict *v;
	size_t nv;
	bool split;                    /* the halves and pairs ran */
	double elapsed;
};

/* 0: the all-node bus bandwidth meets --expect-busbw (or none was given),
 * every group was measured, nothing came out wrong and no verdict; 1
 * otherwise. */
int ncs_exit_code(const struct ncs_report *r);
int ncs_write_text(const struct ncs_report *r, FILE *f);
int ncs_write_json(const struct ncs_report *r, FILE *f);

#endif
