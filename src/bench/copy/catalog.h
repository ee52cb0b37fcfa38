/* The copy tests of `gpuready bench copy`: nvbandwidth's, under its names,
 * in its order (so an index given to -t means the same test as in
 * nvbandwidth -l), with what each matrix is called in its output.
 *
 * Source: NVIDIA/nvbandwidth v0.8 (github.com/NVIDIA/nvbandwidth, tag
 * v0.8): the registration order in nvbandwidth.cpp createTestcases(), the
 * names in testcase.h, and each matrix's description line and SUM key in
 * testcases_ce.cpp and testcases_sm.cpp. The multi-node tests (built only
 * with -DMULTINODE) are not part of gpuready. */
#ifndef GPUREADY_BENCH_COPY_CATALOG_H
#define GPUREADY_BENCH_COPY_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

/* The shape of a test's matrices: one row (labelled 0) and a column per
 * GPU, or a row and a column per GPU. */
enum copy_shape {
	COPY_SHAPE_ROW,    /* 1 x GPUs */
	COPY_SHAPE_SQUARE, /* GPUs x GPUs */
};

/* Which way data moves in a cell (row r, column c), for naming it. */
enum copy_flow {
	COPY_FLOW_GPU,       /* one-row tests: cell c is GPU c (with the host, its peers, or itself) */
	COPY_FLOW_COL_TO_ROW, /* read tests: GPU c -> GPU r, issued by r */
	COPY_FLOW_ROW_TO_COL, /* write tests: GPU r -> GPU c, issued by r */
	COPY_FLOW_PAIR,      /* both directions between GPU r and GPU c */
};

/* The site expectation (--expect-h2d, --expect-d2h, --expect-p2p) a
 * test's cells are held to. Only the unidirectional copy-engine tests
 * are: the SM variants differ from them by design (H100 host_to_device
 * about 35 against 56 GB/s, nvbandwidth issue #24), and the bidirectional,
 * all-GPU and aggregate tests measure a copy under other traffic, so a
 * figure calibrated on one copy would fail a healthy node there. */
enum copy_expect_kind {
	COPY_EXPECT_NONE,
	COPY_EXPECT_H2D,
	COPY_EXPECT_D2H,
	COPY_EXPECT_P2P,
};

enum copy_unit {
	COPY_UNIT_GBPS, /* 10^9 bytes/s, as nvbandwidth */
	COPY_UNIT_NS,   /* the latency tests */
};

#define COPY_MAX_MATRICES 3

struct copy_test {
	const char *name;        /* "host_to_device_memcpy_ce" */
	const char *summary;     /* one line in our words, for -t's help and `bench copy --list` */
	enum copy_shape shape;
	enum copy_flow flow;
	enum copy_expect_kind expect;
	enum copy_unit unit;
	bool peers;              /* needs peer access between GPU pairs (waived without) */
	int n_matrices;          /* 1, or 3 for the bidirectional device-to-device tests */
	const char *key_suffix[COPY_MAX_MATRICES];  /* appended to the name in the SUM line */
	const char *header[COPY_MAX_MATRICES];      /* nvbandwidth's description line */
};

/* All tests in nvbandwidth's order; *n gets their count. */
const struct copy_test *copy_tests(size_t *n);
/* The test named `name`, or given by its index ("0" ... "34") as
 * nvbandwidth -t takes it; NULL when none. */
const struct copy_test *copy_test_find(const char *name);
/* The index of t in copy_tests(). */
int copy_test_index(const struct copy_test *t);

#endif
