/* What the collective harness and the socket backend need from the job
 * that runs them: phases with deadlines (so a stall names its culprit),
 * progress, a barrier, an allreduce of a few doubles, and the socket
 * backend's whole-buffer exchanges. src/job/ implements it over its
 * control connections (job_bench_sync); unit tests implement it in one
 * process. src/bench/ sees nothing else of the job. */
#ifndef GPUREADY_BENCH_SYNC_H
#define GPUREADY_BENCH_SYNC_H

#include <stddef.h>
#include <stdint.h>

enum bench_sync_op { BENCH_SYNC_SUM, BENCH_SYNC_MIN, BENCH_SYNC_MAX };

struct bench_sync_ops {
	/* the main thread enters a step that involves other processes, by the
	 * absolute deadline (core/clock.h), and leaves it */
	void (*phase)(void *ctx, const char *desc, double deadline);
	void (*phase_done)(void *ctx);
	/* launches finished in the current phase (cheap: called in loops) */
	void (*progress)(void *ctx, uint64_t launches);
	/* each returns 0 or -errno with *err (malloc'd); deadline 0: the phase's */
	int (*barrier)(void *ctx, double deadline, char **err);
	int (*allreduce_f64)(void *ctx, double *v, size_t n, enum bench_sync_op op, double deadline, char **err);
	int (*bcast)(void *ctx, void *buf, size_t len, double deadline, char **err);
	/* all: process 0 only, nprocs * len bytes */
	int (*gather)(void *ctx, const void *mine, size_t len, void *all, double deadline, char **err);
	int (*scatter)(void *ctx, const void *all, void *mine, size_t len, double deadline, char **err);
	/* process 0 only: the numeric address process proc's control
	 * connection came from, into buf ("" when unknown, for process 0
	 * itself, or elsewhere); what a process announces is checked with it.
	 * May be NULL (unit tests in one process). */
	void (*peer_addr)(void *ctx, int proc, char *buf, size_t len);
};

struct bench_sync {
	const struct bench_sync_ops *ops;
	void *ctx;
	int proc, nprocs;
};

#endif
