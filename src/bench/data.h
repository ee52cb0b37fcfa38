/* Benchmark data whose results are known exactly.
 *
 * Every rank fills its input from a cheap hash of (seed, rank, element
 * index), in a value range chosen per type, op and rank count so that the
 * reduction has one right answer whatever order the library reduces in
 * (nccl-tests' verifiable data does the same, nccl-tests src/common.cu):
 *   sum   v = c(i) + d(r, i mod 8), |c|, |d| <= L / 2n: every partial sum
 *         is exact;
 *   prod  ones and twos, at most B twos per element: a power of two;
 *   max, min  v = c + d with |c|, |d| <= L / 2;
 *   avg   only ranks 0 and 1 contribute, with values of one sign (as
 *         nccl-tests does), so the library's pre-multiplied sum
 *         x·(1/n) + y·(1/n) rounds twice at most;
 *   copy  (gather, alltoall, broadcast, sendrecv) any representable integer.
 * L is the largest integer the type holds exactly (bfloat16 256, half 2048,
 * int8 127, ...), B the largest power of two it holds without overflow.
 * Sums stay exact up to L / 2 ranks (bfloat16: 128, half: 1024); integers
 * wrap exactly beyond that.
 *
 * Expected results are computed independently of any backend, in exact
 * integer or double arithmetic, then stored in the type: the reduced data's
 * form (a base per element plus a rank offset per element class) gives
 * them in closed form, so checking costs O(count + ranks), not
 * O(count x ranks), at any scale. Comparison is bit-exact, except that floating-point
 * averages may differ by 2 units in the last place (nccl-tests' tolerance:
 * the library may pre-multiply by 1/n). */
#ifndef GPUREADY_BENCH_DATA_H
#define GPUREADY_BENCH_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* "copy" data (no reduction) is asked for with op = OP__COUNT. */
#define DATA_COPY OP__COUNT

struct data_spec {
	enum dtype t;
	int op;          /* enum redop or DATA_COPY */
	int nranks;
	uint64_t seed;
};

/* Rank `rank`'s input: count elements starting at element index first. */
void data_fill(const struct data_spec *s, int rank, size_t first, void *buf, size_t count);
/* The reduction over every rank of their inputs at the same indices. */
void data_expect_reduce(const struct data_spec *s, size_t first, void *buf, size_t count);
/* Counts elements of got that differ from exp (see the tolerance above). */
size_t data_compare(enum dtype t, int op, const void *got, const void *exp, size_t count);

/* The exact-range bounds above, exposed for tests. */
int64_t data_exact_limit(enum dtype t);
int data_pow2_limit(enum dtype t);

#endif
