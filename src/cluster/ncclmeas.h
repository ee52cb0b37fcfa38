/* `gpuready cluster nccl`: one stage on every process (docs/cluster.md,
 * "cluster nccl"): the group split off the job's backend, an all_reduce
 * measured in it while every other group measures too, and what this
 * process reports (ncclsplit.h). */
#ifndef GPUREADY_CLUSTER_NCCLMEAS_H
#define GPUREADY_CLUSTER_NCCLMEAS_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster/ncclsplit.h"
#include "job/session.h"

struct ncs_meas {
	struct session *ss;    /* the job and its backend */
	uint64_t bytes;        /* the all_reduce's */
	int iters, warmup;
	double timeout;        /* seconds each step may take: making the group and its warm-up; the timed loop */
	const char *addr;      /* this node's data address (the socket backend's groups) */
};

/* The stage's step on this process, a collective of every process: its
 * group (color, -1 none; split: a communicator of its own, else the job's
 * backend when color >= 0), warm-up, a barrier of every process, the timed
 * loop, a check of the result. A failure of this process's group is in
 * part (failed, err); a rank that stalls ends the job through the
 * watchdog, named. */
void ncs_measure(const struct ncs_meas *M, const char *desc, int color, bool split, bool ring, struct ncs_part *part);
/* The most a stage can take on a process (the watchdog's phase deadline):
 * what comes after it waits that long for the slowest group. */
double ncs_stage_budget(const struct ncs_meas *M);

#endif
