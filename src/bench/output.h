/* What a benchmark run prints and writes: the nccl-tests text table, the
 * verdict, and the JSON document (docs/bench.schema.json).
 *
 * The text is nccl-tests' current format (generation D in
 * docs/nccl-tests-format.md: 2.18 and later) column for column, so
 * existing parsers read it unchanged; only the first line names gpuready
 * instead of nccl-tests, and gpuready's own verdict lines follow the
 * footer, each starting with "# ". */
#ifndef GPUREADY_BENCH_OUTPUT_H
#define GPUREADY_BENCH_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "harness.h"

/* One rank's device, as every process reports it to process 0. */
struct bench_dev {
	int rank, proc, pid, ordinal;
	char host[64];
	char bus_id[32];
	char name[96];
};

struct bench_info {
	const char *progname;          /* "all_reduce_perf" */
	const char *version;           /* gpuready's */
	const struct bench_params *p;
	const char *backend, *library;
	int nranks, nprocs;
	const struct bench_dev *devs;  /* nranks entries */
	bool min_bw_set;               /* NCCL_TESTS_MIN_BW */
	double min_bw;
	double expect_busbw;           /* --expect-busbw / expect_busbw; 0 none */
	const char *expect_source;     /* "--expect-busbw", "/etc/gpuready.conf" */
};

/* The run's verdict (computed on process 0 from the result). */
struct bench_verdict {
	double avg_busbw;
	int64_t out_of_bounds;
	int min_bw_ok;                 /* -1 unchecked, 0 below 0.9 x NCCL_TESTS_MIN_BW, 1 ok */
	double large_busbw;            /* busbw at the largest size (best of the two halves) */
	uint64_t large_size;
	int expect_ok;                 /* -1 unchecked, 0 below --expect-busbw, 1 ok */
	bool pass;
	bool has_mem;                  /* -M: the GPU memory line (bench_result.mem) */
	int64_t mem[3];
};

void bench_verdict_compute(const struct bench_info *info, const struct bench_result *res, struct bench_verdict *v);

/* nccl-tests' number format: width 7 for times, 6 for bandwidths, as many
 * decimals as fit (util.cu getFloatStr's rule). */
void bench_format_float(char *buf, size_t len, double value, int width);

void bench_print_header(FILE *out, const struct bench_info *info);
/* timestamp: -S's column (when the row completed) */
void bench_print_row(FILE *out, const struct bench_row *row, bool timestamp);
void bench_print_footer(FILE *out, const struct bench_info *info, const struct bench_verdict *v);

/* Writes the JSON document to path (atomically: a temporary file renamed).
 * error is NULL for a completed run. Returns 0 or -errno. */
int bench_write_json(const char *path, const struct bench_info *info, const struct bench_result *res,
		     const struct bench_verdict *v, const char *error);

/* The SVG plot of busbw and time over the sizes (plot.h), written
 * atomically like the JSON. Returns 0 or -errno. */
int bench_write_plot(const char *path, const struct bench_info *info, const struct bench_result *res);

#endif
