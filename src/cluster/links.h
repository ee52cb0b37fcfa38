/* `gpuready cluster links`: the analysis of the pair measurements
 * (docs/cluster.md, "cluster links"). Pure: no I/O.
 *
 * A measurement is one direction of one pair: the rate the receiving node
 * saw from the sending one. The first pass measures every pair of the
 * schedule (schedule.h); the statistics are over its rates:
 *   median and MAD (the median absolute deviation from it) of the rates
 *   that are not already 25% under the median of all (one bad node makes
 *   2/N of the pairs slow, which pulls the median of all down to the
 *   slowest healthy pairs; with noisy healthy pairs the MAD would then
 *   hide it), and a rate is
 *   slow when it is below median − 3 · 1.4826 · MAD (three standard
 *   deviations for normally distributed noise: 1.4826 · MAD estimates the
 *   standard deviation; Leys et al., "Detecting outliers: Do not use
 *   standard deviation around the mean, use absolute deviation around the
 *   median", J. Exp. Soc. Psychol. 2013) AND at least 25% below the median
 *   (noise on a very uniform fabric makes the MAD tiny) AND, when
 *   --expect-gbps is given, below it.
 * A node is a suspect when more than half of the partners it was measured
 * with have a slow direction with it; a pair with a slow direction whose
 * nodes are both no suspects is a suspect path. Known-good nodes have no
 * slow and no failed measurement.
 * The second pass pairs every suspect (node, or node of a suspect path)
 * with up to three known-good nodes (two or more when there are) and
 * measures every suspect path again, in rounds of disjoint pairs. Then:
 *   bad node or its cable: slow with most of its known-good partners;
 *   bad path: both nodes fine with known-good partners, slow together
 *     again;
 *   intermittent: slow in the first pass, fine when measured again;
 *   unclassified: no known-good node to compare with;
 *   failed: a measurement that could not be made (refused, stalled,
 *     reset), with why. */
#ifndef GPUREADY_CLUSTER_LINKS_H
#define GPUREADY_CLUSTER_LINKS_H

#include <stdbool.h>
#include <stddef.h>

#include "cluster/schedule.h"

#define LINKS_MAD_K 3.0
#define LINKS_MAD_SCALE 1.4826
#define LINKS_MIN_DROP 0.25
#define LINKS_GOOD_PARTNERS 3
/* The second pass measures at most 2 suspect paths again per node (the
 * others keep their first measurement), so its plan holds at most this
 * many pairs. */
#define LINKS_PLAN_MAX(n) ((size_t)(n) * (LINKS_GOOD_PARTNERS + 2))

struct links_meas {
	int from, to;  /* sender, receiver */
	int pass;      /* 1 or 2 */
	double gbps;   /* < 0: could not be measured (err says why) */
	char *err;     /* NULL, or why (owned by the caller) */
	int rail;      /* LINKS_RAIL_TCP, or 1 + the index of the RDMA rail (links_rdma.h) */
};

/* The rails a measurement is made on: TCP between the data listeners, or
 * RDMA rail r (1 + r here); at most LINKS_RAILS_MAX RDMA rails per node
 * are measured (a bit each in a uint32_t, TCP's is bit 0). */
#define LINKS_RAIL_TCP 0
#define LINKS_RAILS_MAX 16

struct links_stats {
	double median, mad, threshold; /* Gb/s; threshold: below it a rate is slow */
	double expect;                 /* --expect-gbps, 0 none */
	size_t n;                      /* rates it was computed from */
};

/* Over the pass-1 rates that were measured (gbps >= 0). */
void links_stats_compute(const struct links_meas *m, size_t n_m, double expect, struct links_stats *st);
bool links_is_slow(const struct links_stats *st, double gbps);
/* Room for element n of an array of n elements grown by this: the size
 * doubles at every power of two (the capacity is implied by n). */
void *links_grow(void *v, size_t n, size_t size);
/* The k-th smallest (0-based) of v[0..n), reordering v. */
double links_select(double *v, size_t n, size_t k);

struct links_suspects {
	int n;
	unsigned char *node;     /* per node: slow with most partners */
	unsigned char *good;     /* per node: no slow and no failed measurement */
	int n_good;
	struct sched_pair *edges; /* pass-1 pairs with a slow direction (a < b) */
	size_t n_edges;
};
void links_find_suspects(int n, const struct links_meas *m, size_t n_m, const struct links_stats *st,
			 struct links_suspects *out);
void links_suspects_free(struct links_suspects *s);

/* The second pass: its pairs in rounds of disjoint pairs; round r is
 * pairs[start[r] .. start[r+1]). */
struct links_rounds {
	struct sched_pair *pairs;
	size_t n_pairs;
	size_t *start;
	int n_rounds;
};
void links_second_pass(const struct links_suspects *s, struct links_rounds *out);
void links_rounds_free(struct links_rounds *r);

enum links_kind { LINKS_BAD_NODE, LINKS_BAD_PATH, LINKS_INTERMITTENT, LINKS_UNCLASSIFIED, LINKS_FAILED };
const char *links_kind_name(enum links_kind k); /* "bad_node" ... */

struct links_verdict {
	enum links_kind kind;
	int a, b;           /* the nodes; b = -1 for a node verdict */
	/* path, failed: the first pass a→b and b→a; node: the median of what
	 * a sent and of what it received in the first pass (NAN: none) */
	double ab, ba;
	/* node: the second pass with known-good nodes: its partners, how many
	 * were slow, the lowest and highest rate (either direction) */
	int good_n, good_slow;
	double good_min, good_max;
	double re_ab, re_ba; /* path: the second pass of the same pair (NAN: not measured) */
	bool slow_ab, slow_ba; /* which direction was slow (node: sending, receiving) */
	const char *err;    /* failed: why (points into the measurement) */
	int pass;           /* failed: in which pass */
};

/* The verdicts (malloc'd, *ret_n of them), nodes first, then paths, then
 * failed pairs. m holds both passes. */
void links_classify(int n, const struct links_meas *m, size_t n_m, const struct links_stats *st,
		    const struct links_suspects *s, struct links_verdict **ret, size_t *ret_n);

/* The exit status of a run: 0 no verdict and the median meets
 * --expect-gbps, 1 otherwise. */
int links_exit_code(const struct links_stats *st, const struct links_verdict *v, size_t n_v);

#endif
