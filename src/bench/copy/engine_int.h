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
	CUfunction copy, spin;
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
	volatile unsigned *flag;    /* pinned host word the spin kernels wait on */
	size_t bytes;               /* per copy */
	char err[320];
};

/* One copy stream of a measurement: issued in GPU gpu's context, mult x
 * the plan's copies (1 measured, 2 a load beside it). */
struct ce_xfer {
	int gpu;
	CUdeviceptr dst, src;
	int mult;
};

#define CE_MAX_XFERS (2 * COPY_MAX_GPUS)

/* Times xfers[0..n) together as nvbandwidth does (engine.h); sm: the copy
 * kernel instead of cuMemcpyAsync. total: one figure, every stream's
 * bytes over the first stream's start to the last end, in bw[0]; else
 * bw[i] per stream. Medians over the plan's samples. Returns 0, or -1
 * with e->err naming the GPU and the call. */
int ce_measure(struct ce_engine *e, const struct ce_xfer *xfers, int n, bool sm, bool total, double *bw);

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
