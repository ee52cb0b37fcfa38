/* The collective benchmark harness: size sweep, warm-up, timed loops,
 * validation, statistics, and the rows the report prints.
 *
 * It follows nccl-tests' procedure (docs/nccl-tests-format.md §3-§5) so
 * numbers compare one to one: per (type, op, root) a warm-up of every
 * power-of-two size; per size an out-of-place and an in-place half-row,
 * each: data initialised, one untimed launch, a barrier, `iters` timed
 * iterations of `agg` launches, the mean time per launch combined over
 * processes as -a says, algbw = bytes / time, busbw = algbw × the
 * collective's factor; then `check` validation launches compared with
 * independently computed results.
 *
 * The harness owns no process setup: it gets a ready backend and control
 * plane, and reports each row through a callback as it completes. Every
 * wait has a deadline and every step is a named phase of the job
 * (sync.h), so a stall is reported with the culprit. */
#ifndef GPUREADY_BENCH_HARNESS_H
#define GPUREADY_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "sync.h"
#include "types.h"

/* nccl-tests' defaults (docs/nccl-tests-format.md §8): bench_params_default
 * and the option table (opts/bench.c) both state them through these. */
#define BENCH_DEFAULT_MIN_BYTES (32ull << 20)  /* -b */
#define BENCH_DEFAULT_MAX_BYTES (32ull << 20)  /* -e */
#define BENCH_DEFAULT_STEP_BYTES (1ull << 20)  /* -i */
#define BENCH_DEFAULT_STEP_FACTOR 1            /* -f */
#define BENCH_DEFAULT_ITERS 20                 /* -n */
#define BENCH_DEFAULT_WARMUP 1                 /* -w */
#define BENCH_DEFAULT_AGG 1                    /* -m */
#define BENCH_DEFAULT_CHECK 1                  /* -c */
#define BENCH_DEFAULT_AVERAGE 1                /* -a */
#define BENCH_DEFAULT_ROOT 0                   /* -r */
#define BENCH_DEFAULT_NGPUS 1                  /* -g */
#define BENCH_DEFAULT_OP "sum"                 /* -o, OP_SUM */
#define BENCH_DEFAULT_DTYPE "float"            /* -d, DT_FLOAT */

/* Everything a run is told (nccl-tests flags, same meaning and defaults). */
struct bench_params {
	enum coll coll;
	uint64_t min_bytes, max_bytes, step_bytes;  /* -b -e -i */
	int step_factor;                            /* -f (> 1: multiply) */
	int iters, warmup, agg;                     /* -n -w -m */
	int check;                                  /* -c: validation launches, 0 off */
	int average;                                /* -a: 0 rank 0, 1 mean, 2 min, 3 max */
	int blocking;                               /* -z: 1 wait + barrier per launch, 2 wait, 3 wait per
						     * launch + barrier per -n iteration (left out of the time) */
	int root;                                   /* -r; -1 every root */
	int ngpus;                                  /* -g */
	int graph;                                  /* -G: CUDA graph launches (NCCL backend); 0 off */
	double timeout;                             /* -T seconds per wait; 0 automatic */
	int cycles;                                 /* -N: sweeps per (type, op, root); 0 until interrupted */
	int unalign;                                /* -u: buffers start this many elements late */
	bool cputime;                               /* -C: rows report the host time issuing the launches */
	bool timestamps;                            /* -S: rows carry the time they completed */
	bool per_iter;                              /* -I: each -n iteration timed on its own */
	int per_iter_skip;                          /* -K: leading iterations left out of -I's statistics */
	bool memory;                                /* -M: GPU memory used per phase (NCCL backend) */
	int reg;                                    /* -R: 1 local, 2 symmetric buffer registration (NCCL) */
	enum dtype dtypes[DT__COUNT];               /* -d (all: every type) */
	size_t n_dtypes;
	enum redop ops[OP__COUNT];                  /* -o */
	size_t n_ops;
};

void bench_params_default(struct bench_params *p, enum coll c);
/* Checks the combination; returns NULL or a message (malloc'd). */
char *bench_params_check(const struct bench_params *p);
/* The message sizes of the sweep, in order, into *ret (malloc'd). */
size_t bench_sizes(const struct bench_params *p, uint64_t **ret);

/* -I: one half-row's per-iteration times (nccl-tests' per-iteration
 * report), on process 0. Times are seconds per launch (an iteration's time
 * over -m), each the longest over the local ranks and then the processes. */
struct bench_iter {
	int n, skipped;                /* -n samples; -K leading ones left out of the statistics */
	int nprocs;
	double *times;                 /* n */
	double *procs;                 /* nprocs x n, each process's own; NULL for one process */
	double min, max, avg, p50, p95, p99, stdev;  /* over times[skipped..n-1] */
};

/* nccl-tests 2.19.6 util.cu computeIterStats over times[skipped..]. */
void bench_iter_stats(struct bench_iter *it);
void bench_iter_free(struct bench_iter *it);
/* The coefficient of variation in percent (stdev / avg x 100; 0 for avg 0). */
double bench_iter_cv(const struct bench_iter *it);

/* One half of a row. */
struct bench_half {
	double time_us, algbw, busbw;  /* GB/s = 1e9 B/s */
	int64_t wrong;                 /* -1: not checked (N/A) */
};

struct bench_row {
	uint64_t size;                 /* bytes, the printed size */
	uint64_t count;                /* elements passed to the library */
	enum dtype type;
	enum redop op;
	bool has_op;
	int root;                      /* -1 none */
	struct bench_half half[2];     /* out of place, in place */
	struct bench_iter *iter[2];    /* -I (process 0), else NULL; freed with the result */
	int64_t done;                  /* when it completed (Unix seconds), for -S */
};

struct bench_result {
	struct bench_row *rows;
	size_t n_rows;
	double busbw_sum;              /* for "Avg bus bandwidth": every half-row */
	size_t busbw_n;
	int64_t out_of_bounds;         /* half-rows x processes with wrong elements */
	bool has_mem;                  /* -M: mem[] holds the GPU memory each phase took, the most of
					* any GPU (nccl-tests' Initialization, User-Allocated, Collective) */
	int64_t mem[3];
};

typedef void (*bench_row_fn)(void *ctx, const struct bench_row *row);

struct bench_ctx {
	const struct bench_params *p;
	struct backend *b;
	struct bench_sync sync;        /* the job that runs the processes (sync.h) */
	int nranks, local, proc;
	bench_row_fn on_row;           /* called on process 0 only */
	void *row_ctx;
};

/* Runs the whole sweep. Returns 0 (the result says whether it passed) or
 * -errno with *err when the run could not go on (a backend error; stalls
 * and lost ranks end the process through the job instead). */
int bench_run(const struct bench_ctx *ctx, struct bench_result *res, char **err);
void bench_result_free(struct bench_result *res);

/* busbw = algbw × factor; exposed for tests. */
double bench_busbw(enum coll c, double algbw, int nranks);

#endif
