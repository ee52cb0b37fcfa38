/* The job as the benchmarks' bench_sync (bench/sync.h): each operation is
 * the job's own call on the control connections. */
#include "job.h"
#include "bench/sync.h"

#include <stdio.h>

static void sync_phase(void *ctx, const char *desc, double deadline)
{
	job_phase(ctx, desc, deadline);
}

static void sync_phase_done(void *ctx)
{
	job_phase_done(ctx);
}

static void sync_progress(void *ctx, uint64_t launches)
{
	job_progress(ctx, launches);
}

static int sync_barrier(void *ctx, double deadline, char **err)
{
	return job_barrier(ctx, deadline, err);
}

static int sync_allreduce_f64(void *ctx, double *v, size_t n, enum bench_sync_op op, double deadline, char **err)
{
	enum job_op o = op == BENCH_SYNC_MIN ? JOB_MIN : op == BENCH_SYNC_MAX ? JOB_MAX : JOB_SUM;
	return job_allreduce_f64(ctx, v, n, o, deadline, err);
}

static int sync_bcast(void *ctx, void *buf, size_t len, double deadline, char **err)
{
	return job_bcast(ctx, buf, len, deadline, err);
}

static int sync_gather(void *ctx, const void *mine, size_t len, void *all, double deadline, char **err)
{
	return job_gather(ctx, mine, len, all, deadline, err);
}

static int sync_scatter(void *ctx, const void *all, void *mine, size_t len, double deadline, char **err)
{
	return job_scatter(ctx, all, mine, len, deadline, err);
}

static void sync_peer_addr(void *ctx, int proc, char *buf, size_t len)
{
	const struct job_member *m = job_members(ctx);
	snprintf(buf, len, "%s", job_proc(ctx) == 0 && proc > 0 && proc < job_nprocs(ctx) ? m[proc].addr : "");
}

static const struct bench_sync_ops job_sync_ops = {
	.phase = sync_phase,
	.phase_done = sync_phase_done,
	.progress = sync_progress,
	.barrier = sync_barrier,
	.allreduce_f64 = sync_allreduce_f64,
	.bcast = sync_bcast,
	.gather = sync_gather,
	.scatter = sync_scatter,
	.peer_addr = sync_peer_addr,
};

struct bench_sync job_bench_sync(struct job *j)
{
	return (struct bench_sync){ .ops = &job_sync_ops, .ctx = j, .proc = job_proc(j), .nprocs = job_nprocs(j) };
}
