/* The collectives the harness benchmarks, each a small table entry: how a
 * message size becomes element counts and buffer offsets, how many bytes
 * the algorithm bandwidth counts, the bus-bandwidth factor, and what each
 * rank puts in and must get out (STYLE practice 12, after nccl-tests'
 * testColl). Counts, offsets and factors are nccl-tests' (src/<coll>.cu
 * *GetCollByteCount and *GetBw; docs/nccl-tests-format.md §2). */
#ifndef GPUREADY_BENCH_COLL_H
#define GPUREADY_BENCH_COLL_H

#include <stdbool.h>
#include <stddef.h>

#include "data.h"
#include "types.h"

/* Element counts for one message size. */
struct coll_counts {
	size_t param;            /* the count passed to the library, printed as "count" */
	size_t send, recv;       /* elements in each rank's send and receive buffers */
	size_t send_inplace;     /* in place: send = recv + send_inplace * rank elements */
	size_t recv_inplace;     /* in place: recv = recv + recv_inplace * rank elements */
};

/* One rank's view of one run, for init and expect. */
struct coll_run {
	struct coll_counts cc;
	struct data_spec data;   /* data.op: the op, or DATA_COPY */
	int rank, nranks, root;
	bool in_place;
};

struct coll_def {
	enum coll id;
	bool has_op, has_root;
	bool inplace_checked;    /* false: nccl-tests reports N/A in place (alltoall, sendrecv) */
	/* count = message bytes / element size */
	void (*counts)(size_t count, int nranks, size_t elt_size, struct coll_counts *out);
	/* bytes the algorithm bandwidth divides by the time */
	double (*alg_bytes)(const struct coll_counts *cc, size_t elt_size, int nranks);
	double (*bus_factor)(int nranks);
	/* rank's send buffer (cc.send elements) */
	void (*init)(const struct coll_run *r, void *send);
	/* what rank's receive region (cc.recv elements) must hold afterwards;
	 * send is what init wrote (for reduce's non-root ranks in place) */
	void (*expect)(const struct coll_run *r, const void *send, void *exp);
};

const struct coll_def *coll_get(enum coll c);

/* The printed size column: max(send, recv) bytes. */
size_t coll_size_bytes(const struct coll_counts *cc, size_t elt_size);

#endif
