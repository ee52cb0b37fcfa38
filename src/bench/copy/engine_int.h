/* Inside bench copy's engine (engine.h): the child's state, shared by
 * engine.c (setup, the timed loop, the child and the parent's side) and
 * engine_tests.c (what each test copies). */
#ifndef GPUREADY_BENCH_COPY_ENGINE_INT_H
#define GPUREADY_BENCH_COPY_ENGINE_INT_H

#include "bench/copy/engine.h"
#include "core/isolate.h"
#include "lib/cuda_api.h"

#include <stdbool.h>
#include <stddef.h>

struct ce_gpu {
	CUdevice dev;
	CUcontext ctx;
	CUfunction copy, spin, split;
	CUmodule mod;
	CUdeviceptr a, b;           /* device buffers: a the source, b the destination */
	void *h1, *h2;              /* pinned host buffers (NULL when no host test runs) */
	CUdeviceptr flag;           /* the spin flag as this GPU addresses it */
	unsigned long long spin_clocks;
	int sms;
	bool retained;
};

struct ce_engine {
	struct cuda_api cu;
	struct isolate_ctx *ictx;
	const struct copy_plan *plan;
	struct copy_engine_out *out;
	int n;
	struct ce_gpu g[COPY_MAX_GPUS];
	bool peer[COPY_MAX_GPUS][COPY_MAX_GPUS]; /* both directions allowed and enabled */
	/* pinned host words: [0] the spin kernels wait on it, [1] a spin
	 * kernel that gave up waiting sets it (kernels.h) */
	volatile unsigned *flag;
	int spin_timeouts;          /* samples of the current test with [1] set */
	/* why a pair is not in peer[][]: 0 peer access works, 1
	 * cuDeviceCanAccessPeer said no, 2 cuCtxEnablePeerAccess failed */
	unsigned char no_peer[COPY_MAX_GPUS][COPY_MAX_GPUS];
	char peer_err[200];         /* the first cuCtxEnablePeerAccess failure */
	/* the data check (engine_verify.c): the pattern every source gets, a
	 * buffer to read device destinations back into; the current fan
	 * test's extra buffers on GPU extra_gpu */
	void *pattern, *scratch;
	CUdeviceptr extra[COPY_MAX_GPUS];
	int n_extra, extra_gpu;
	int bad_cells;              /* cells of the current test whose data check failed */
	char bad_msg[320];          /* the first of them */
	size_t bytes;               /* per copy */
	char err[320];
};

/* One copy stream of a measurement: issued in GPU gpu's context, mult x
 * the plan's copies (1 measured, 2 a load beside it). */
struct ce_xfer {
	int gpu;
	CUdeviceptr dst, src;
	int mult;
	bool split;                 /* the split-warp kernel: half each way (kernels.h) */
};

#define CE_MAX_XFERS (2 * COPY_MAX_GPUS)

/* Sets e->err to fn's failure on GPU gi (-1: none) and returns -1. */
int ce_fail(struct ce_engine *e, int gi, const char *fn, CUresult r);

/* Names the call about to be made as the deadline's step: the GPU by its
 * CUDA index and PCI address (what an operator resets); gi < 0 none. */
void ce_step(struct ce_engine *e, int gi, const char *fn);

/* Names the call (the deadline's step), makes it, and returns -1 from the
 * calling function with e->err set when it fails. */
#define CE_CALL(e, gi, fn, expr)                                                                       \
	do {                                                                                           \
		ce_step(e, gi, fn);                                                                    \
		CUresult r_ = (expr);                                                                  \
		if (r_ != CUDA_SUCCESS)                                                                \
			return ce_fail(e, gi, fn, r_);                                                 \
	} while (0)

/* Times xfers[0..n) together as nvbandwidth does (engine.h); sm: the copy
 * kernel instead of cuMemcpyAsync. total: one figure, every stream's
 * bytes over the first stream's start to the last end, in bw[0]; else
 * bw[i] per stream. Medians over the plan's samples, the data checked
 * after them. Returns 0; -1 with e->err naming the GPU and the call; -2
 * with e->err naming the copy whose data differs. */
int ce_measure(struct ce_engine *e, const struct ce_xfer *xfers, int n, bool sm, bool total, double *bw);

/* The data check (engine_verify.c), each a no-op under -s: the pattern
 * buffers; the sources' pattern and the destinations' other value before
 * a measurement; the destinations after it: -2 with e->err naming the
 * copy when one differs. All return -1 with e->err on a CUDA error. */
int ce_verify_setup(struct ce_engine *e);
/* The GPU that holds a buffer of the engine's, or -1 for host memory. */
int ce_owner(const struct ce_engine *e, CUdeviceptr p);
int ce_verify_fill(struct ce_engine *e, const struct ce_xfer *x, int n);
int ce_verify_check(struct ce_engine *e, const struct ce_xfer *x, int n);

/* The latency tests (engine_latency.c): peers, device_to_device_latency_sm
 * for the pairs with peer access, else host_device_latency_sm; figures in
 * ns into res->value[0]. Returns 0, or -1 with e->err set. */
int ce_latency(struct ce_engine *e, bool peers, struct copy_engine_test *res);

/* Runs test t into *res (its matrices NAN where nothing was measured). */
void ce_run_test(struct ce_engine *e, const struct copy_test *t, struct copy_engine_test *res);

/* The host buffer as a device address (unified addressing). */
static inline CUdeviceptr ce_host(void *p)
{
	return (CUdeviceptr)(unsigned long)p;
}

#endif
