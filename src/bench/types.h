/* Collectives, data types and reduction operations the benchmark harness
 * knows, with the names nccl-tests prints (`-d`, `-o`). */
#ifndef GPUREADY_BENCH_TYPES_H
#define GPUREADY_BENCH_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dtype {
	DT_INT8, DT_UINT8, DT_INT32, DT_UINT32, DT_INT64, DT_UINT64, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_BFLOAT16,
	DT__COUNT,
};

enum redop { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_AVG, OP__COUNT };

enum coll {
	COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_BROADCAST, COLL_REDUCE, COLL_ALLTOALL,
	COLL_SENDRECV, COLL__COUNT,
};

size_t dtype_size(enum dtype t);
const char *dtype_name(enum dtype t);   /* "float", "bfloat16", "int8" ... */
int dtype_parse(const char *s);         /* -1 if unknown; accepts nccl-tests' names and aliases */
const char *redop_name(enum redop o);   /* "sum", "prod", "max", "min", "avg" */
int redop_parse(const char *s);
const char *coll_name(enum coll c);     /* "all_reduce" ... */
int coll_parse(const char *s);          /* also "all_reduce_perf" */
/* Whether the collective takes a reduction op / a root. */
int coll_has_op(enum coll c);
int coll_has_root(enum coll c);

/* IEEE half and bfloat16 <-> float (round to nearest even), for data
 * initialisation, validation and the backends that reduce on the host. */
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t b);

/* One element as a double and back (integers wrap on store, half and
 * bfloat16 round to nearest even). */
double dtype_load(enum dtype t, const void *p);
void dtype_store(enum dtype t, void *p, double v);
bool dtype_is_float(enum dtype t);

/* Host reduction, for backends that reduce on the host (socket) or lack an
 * op (MPI has no average): acc[i] = acc[i] OP in[i] for count elements of
 * type t. Integer arithmetic wraps (computed unsigned, as NCCL's GPU code
 * and MPI do); half and bfloat16 are reduced in float and rounded back on
 * every step. For OP_AVG this sums; host_avg_finish divides by n
 * afterwards (integers: truncating division, as NCCL does). */
void host_reduce(enum dtype t, enum redop op, void *acc, const void *in, size_t count);
void host_avg_finish(enum dtype t, void *buf, size_t count, int n);

#endif
