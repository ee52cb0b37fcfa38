/* What `gpuready bench copy` prints: nvbandwidth's text, test by test,
 * each followed by gpuready's one-line verdict, and the JSON document
 * (docs/bench-copy.schema.json).
 *
 * The text reproduces nvbandwidth v0.8's layout (output.cpp and
 * inline_common.h of github.com/NVIDIA/nvbandwidth): "Running NAME.", the
 * description line, a matrix whose corner is two spaces, column labels
 * right-aligned in 10 characters, row labels in 2, cells in 10 with two
 * decimals and "N/A" where nothing was measured; a blank line, "SUM KEY
 * TOTAL" (N/A counted as 0) and a blank line. A test that could not run
 * prints "Waived: " or "Error: MESSAGE" as nvbandwidth does. gpuready's
 * verdict follows, one line starting with "# " (as after nccl-tests'
 * table, bench/output.h), so readers of nvbandwidth's text skip it.
 *
 * The engine fills the plain structs below and owns every pointer in them;
 * nothing here allocates what it returns except copy_json. */
#ifndef GPUREADY_BENCH_COPY_OUTPUT_H
#define GPUREADY_BENCH_COPY_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "bench/copy/catalog.h"
#include "bench/copy/expect.h"

enum copy_status {
	COPY_RAN,     /* measured (cells may still be N/A: pairs without peer access) */
	COPY_WAIVED,  /* not applicable here (no GPU pair with peer access) */
	COPY_ERROR,   /* failed part-way or could not start */
	COPY_BAD_DATA, /* a copy's destination did not hold its source's data after it */
};

/* One test's outcome. The matrices are rows x cols (1 x GPUs or GPUs x
 * GPUs, by the test's shape), row-major, one per matrix of the test
 * (catalog.h n_matrices); a cell that was not measured is NAN and prints
 * as N/A. limit[m] holds each cell's limit (the same shape), or is NULL
 * when the test has no link limit (device_local_copy, latency). A limit
 * is per direction of one copy's path; where a cell adds several copies
 * (a bidirectional Total matrix, all_to_one and one_to_all) the engine
 * states the sum's limit (copy_limit_both; all of a GPU's NVLinks), since
 * a share of one direction would exceed 100%. */
struct copy_result {
	const char *test;                /* nvbandwidth's name */
	enum copy_status status;
	const char *message;             /* WAIVED: why (may be NULL); ERROR: what failed;
					  * RAN: a note (why cells are N/A) or NULL */
	int rows, cols;
	const double *value[COPY_MAX_MATRICES];
	const struct copy_limit *limit[COPY_MAX_MATRICES];
};

struct copy_gpu {
	const char *name;   /* "NVIDIA H100 80GB HBM3" */
	const char *bdf;    /* "0000:18:00.0" */
	int numa_node;      /* where its pinned host buffers were placed; -1 unknown */
	bool index_known;   /* index is its CUDA device index (-d picks by it): the label */
	int index;          /* without it, the GPU's position in the run labels it */
	const char *numa_note; /* why not on its own node (a node without memory); NULL none */
};

/* The site's expectations; 0 is none given. */
struct copy_expect {
	double h2d, d2h, p2p;
};

struct copy_run {
	const char *version;          /* gpuready's */
	const char *host;             /* host name; NULL unknown */
	const char *driver;           /* "535.104.05"; NULL unknown */
	int cuda_driver;              /* cuDriverGetVersion, 12020; 0 unknown */
	int n_gpus;
	const struct copy_gpu *gpus;
	uint64_t size_mib;            /* buffer per copy, MiB */
	int loop_count, samples;      /* copies per sample; samples (the median is reported) */
	const char *numa;             /* --numa as given: "auto" or a node */
	bool host_buffers;            /* a test copied to or from pinned host memory */
	struct copy_expect expect;
	int n_results;
	const struct copy_result *results;
};

enum copy_verdict_status {
	COPY_VERDICT_NONE,  /* no expectation applies: figures only */
	COPY_VERDICT_PASS,  /* every measured cell meets its expectation */
	COPY_VERDICT_FAIL,  /* a cell is below it, or was not measured (waived, N/A, an error) */
	COPY_VERDICT_SKIP,  /* an expectation applies but nothing was measured */
};

struct copy_verdict {
	enum copy_verdict_status status;
	double expect;        /* the expectation held to; 0 none */
	const char *option;   /* "--expect-h2d" ...; NULL none */
	int measured, below;  /* cells measured; of them below the expectation */
	int missing;          /* cells held to the expectation but not measured (N/A off the diagonal) */
	int lo_m, lo_r, lo_c; /* the weakest cell: lowest share of its limit, else lowest value (highest for ns); -1 none */
	double lo_value;
	const struct copy_limit *lo_limit; /* its limit; NULL none */
};

/* The verdict of one result (test r->test must be in the catalog). */
void copy_verdict_compute(const struct copy_run *run, const struct copy_result *r, struct copy_verdict *v);

/* The one-line verdict, without the leading "# " and the newline, e.g.
 * "host_to_device_memcpy_ce: 52.10 GB/s, 83% of PCIe Gen5 x16 (63.02 GB/s
 * encoded, 55.45 GB/s expected)", or for a latency test "highest 812.4 ns
 * (GPU 3) per access, lower is better". malloc'd. */
char *copy_verdict_line(const struct copy_run *run, const struct copy_result *r, const struct copy_verdict *v);

/* The run's outcome: "fail" when a test is below its expectation or
 * failed its data check, else
 * "error" when a test could not run, else "pass". */
const char *copy_run_result(const struct copy_run *run);

/* The lines before the first test: versions, host and GPUs. */
void copy_print_header(FILE *out, const struct copy_run *run);
/* One test: nvbandwidth's block, then the verdict line. */
void copy_print_result(FILE *out, const struct copy_run *run, const struct copy_result *r);
/* The whole text: header, every result, nvbandwidth's closing note. */
void copy_print_text(FILE *out, const struct copy_run *run);

/* The JSON document (docs/bench-copy.schema.json); the caller puts it. */
json_object *copy_json(const struct copy_run *run);

#endif
