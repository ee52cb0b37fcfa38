/* bench copy's engine: nvbandwidth's timed loop (engine.h); the setup and
 * the deadline are in engine_setup.c, what each test copies in
 * engine_tests.c. */
#define _GNU_SOURCE
#include "engine_int.h"

#include "bench/copy/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ce_step(struct ce_engine *e, int gi, const char *fn)
{
	if (gi < 0)
		isolate_step(e->ictx, "%s", fn);
	else
		isolate_step(e->ictx, "%s on GPU %d (%s)", fn, e->out->gpus[gi].ordinal, e->out->gpus[gi].bdf);
}

int ce_fail(struct ce_engine *e, int gi, const char *fn, CUresult r)
{
	char msg[256];
	cuda_api_format(&e->cu, fn, r, msg, sizeof(msg));
	if (gi < 0)
		snprintf(e->err, sizeof(e->err), "%s", msg);
	else
		snprintf(e->err, sizeof(e->err), "GPU %d (%s): %s", e->out->gpus[gi].ordinal, e->out->gpus[gi].bdf,
			 msg);
	return -1;
}

double copy_median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && v[k - 1] > v[k]; k--) {
			double t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the timed loop ---- */

struct ce_stream {
	CUstream s;
	CUevent start, end;
};

static int ce_enqueue(struct ce_engine *e, const struct ce_xfer *x, bool sm, unsigned count, CUstream s)
{
	if (x->split) {
		/* one thread per 16-byte element, blocks of up to 1024 as nvbandwidth */
		CUdeviceptr dst = x->dst, src = x->src;
		unsigned long long n16 = e->bytes / 16;
		unsigned block = n16 < 1024 ? (unsigned)n16 : 1024;
		void *params[] = { &dst, &src, &count };
		CE_CALL(e, x->gpu, "cuLaunchKernel(" SPLIT_KERNEL_NAME ")",
			e->cu.launch_kernel(e->g[x->gpu].split, (unsigned)(n16 / block), 1, 1, block, 1, 1, 0, s,
					    params, NULL));
		return 0;
	}
	if (sm) {
		CUdeviceptr dst = x->dst, src = x->src;
		unsigned long long n16 = e->bytes / 16;
		void *params[] = { &dst, &src, &n16, &count };
		CE_CALL(e, x->gpu, "cuLaunchKernel(" COPY_KERNEL_NAME ")",
			e->cu.launch_kernel(e->g[x->gpu].copy, (unsigned)e->g[x->gpu].sms, 1, 1, COPY_SM_THREADS, 1,
					    1, 0, s, params, NULL));
		return 0;
	}
	for (unsigned i = 0; i < count; i++)
		CE_CALL(e, x->gpu, "cuMemcpyAsync", e->cu.memcpy_async(x->dst, x->src, e->bytes, s));
	return 0;
}

static int ce_hold(struct ce_engine *e, const struct ce_xfer *x, bool sm, CUstream s)
{
	struct ce_gpu *g = &e->g[x->gpu];
	CUdeviceptr f = g->flag;
	unsigned long long clocks = g->spin_clocks;
	void *params[] = { &f, &clocks };

	CE_CALL(e, x->gpu, "cuCtxSetCurrent", e->cu.ctx_set_current(g->ctx));
	CE_CALL(e, x->gpu, "cuLaunchKernel(" SPIN_KERNEL_NAME ")",
		e->cu.launch_kernel(g->spin, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
	return ce_enqueue(e, x, sm, COPY_WARMUP, s);
}

/* Queues one sample on every stream behind the spin kernels. */
static int ce_queue(struct ce_engine *e, const struct ce_xfer *x, int n, bool sm, bool total, struct ce_stream *st)
{
	unsigned loops = (unsigned)e->plan->loop_count;

	__atomic_store_n(&e->flag[0], 0u, __ATOMIC_RELEASE);
	__atomic_store_n(&e->flag[1], 0u, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++)
		if (ce_hold(e, &x[i], sm, st[i].s) < 0)
			return -1;
	/* the holds above left the last stream's context current */
	CE_CALL(e, x[0].gpu, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[x[0].gpu].ctx));
	CE_CALL(e, x[0].gpu, "cuEventRecord", e->cu.event_record(st[0].start, st[0].s));
	for (int i = 1; i < n; i++) {
		CE_CALL(e, x[i].gpu, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[x[i].gpu].ctx));
		CE_CALL(e, x[i].gpu, "cuStreamWaitEvent", e->cu.stream_wait_event(st[i].s, st[0].start, 0));
		CE_CALL(e, x[i].gpu, "cuEventRecord", e->cu.event_record(st[i].start, st[i].s));
	}
	for (int i = n - 1; i >= 0; i--) {
		CE_CALL(e, x[i].gpu, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[x[i].gpu].ctx));
		if (ce_enqueue(e, &x[i], sm, loops * (unsigned)x[i].mult, st[i].s) < 0)
			return -1;
		if (i > 0 || !total)
			CE_CALL(e, x[i].gpu, "cuEventRecord", e->cu.event_record(st[i].end, st[i].s));
	}
	if (total) {
		/* nvbandwidth's TOTAL_BW: the first stream ends after all */
		for (int i = 1; i < n; i++)
			CE_CALL(e, x[0].gpu, "cuStreamWaitEvent", e->cu.stream_wait_event(st[0].s, st[i].end, 0));
		CE_CALL(e, x[0].gpu, "cuEventRecord", e->cu.event_record(st[0].end, st[0].s));
	}
	return 0;
}

/* How long waiting for a sample's copies may take beyond the step
 * deadline: the bytes queued (warm-up included) on the busiest GPU, the
 * one that issues or holds the most of them, at COPY_DEADLINE_FLOOR_GBPS:
 * the GPUs' links run side by side. */
static double ce_sample_extra_s(const struct ce_engine *e, const struct ce_xfer *x, int n)
{
	double most = 0;
	for (int g = 0; g < e->n; g++) {
		double copies = 0;
		for (int i = 0; i < n; i++)
			if (x[i].gpu == g || ce_owner(e, x[i].src) == g || ce_owner(e, x[i].dst) == g)
				copies += (double)e->plan->loop_count * x[i].mult + COPY_WARMUP;
		most = copies > most ? copies : most;
	}
	return most * (double)e->bytes / (COPY_DEADLINE_FLOOR_GBPS * 1e9);
}

/* One sample: queue, release, wait, read the times into v[i] (GB/s). */
static int ce_sample(struct ce_engine *e, const struct ce_xfer *x, int n, bool sm, bool total, struct ce_stream *st,
		     double *v)
{
	double per_copy = (double)e->bytes * e->plan->loop_count;
	double all = 0, extra = ce_sample_extra_s(e, x, n);

	if (ce_queue(e, x, n, sm, total, st) < 0)
		return -1;
	__atomic_store_n(&e->flag[0], 1u, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++) {
		const struct copy_engine_gpu *g = &e->out->gpus[x[i].gpu];
		isolate_step_longer(e->ictx, extra, "cuStreamSynchronize on GPU %d (%s) with up to %.0f MB queued",
				    g->ordinal, g->bdf, extra * COPY_DEADLINE_FLOOR_GBPS * 1e3);
		CUresult r = e->cu.stream_synchronize(st[i].s);
		if (r != CUDA_SUCCESS)
			return ce_fail(e, x[i].gpu, "cuStreamSynchronize", r);
	}
	/* the spin kernel ended on its timeout before the flag was set: the
	 * copies may have started while the others were still being queued */
	if (__atomic_load_n(&e->flag[1], __ATOMIC_ACQUIRE))
		e->spin_timeouts++;
	for (int i = 0; i < n; i++)
		all += per_copy * x[i].mult;
	for (int i = 0; i < (total ? 1 : n); i++) {
		float ms = 0;
		CE_CALL(e, x[i].gpu, "cuEventElapsedTime", cuda_api_elapsed(&e->cu, &ms, st[i].start, st[i].end));
		if (!(ms > 0)) {
			snprintf(e->err, sizeof(e->err), "GPU %d (%s): cuEventElapsedTime: %g ms for %d copies",
				 e->out->gpus[x[i].gpu].ordinal, e->out->gpus[x[i].gpu].bdf, (double)ms,
				 e->plan->loop_count);
			return -1;
		}
		v[i] = (total ? all : per_copy * x[i].mult) / (ms * 1e-3) / 1e9;
	}
	return 0;
}

/* After a failed call part-way through a sample, the streams queued so
 * far still hold their spin kernel and copies: destroying them would not
 * wait (cuStreamDestroy releases a stream once its work is done), so they
 * would run inside the next measurement. Release the spin kernels and
 * wait for every stream, errors ignored (the first one is the report). */
static void ce_drain(struct ce_engine *e, const struct ce_xfer *x, int n, struct ce_stream *st)
{
	double extra = ce_sample_extra_s(e, x, n);
	__atomic_store_n(&e->flag[0], 1u, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++) {
		if (!st[i].s)
			continue;
		isolate_step_longer(e->ictx, extra, "cuStreamSynchronize on GPU %d (%s), draining after: %.60s",
				    e->out->gpus[x[i].gpu].ordinal, e->out->gpus[x[i].gpu].bdf, e->err);
		if (e->cu.ctx_set_current(e->g[x[i].gpu].ctx) == CUDA_SUCCESS)
			(void)e->cu.stream_synchronize(st[i].s);
	}
}

static void ce_streams_free(struct ce_engine *e, const struct ce_xfer *x, int n, struct ce_stream *st)
{
	for (int i = 0; i < n; i++) {
		e->cu.ctx_set_current(e->g[x[i].gpu].ctx);
		if (st[i].start)
			e->cu.event_destroy_v2(st[i].start);
		if (st[i].end)
			e->cu.event_destroy_v2(st[i].end);
		if (st[i].s)
			e->cu.stream_destroy_v2(st[i].s);
	}
}

static int ce_streams(struct ce_engine *e, const struct ce_xfer *x, int n, struct ce_stream *st)
{
	for (int i = 0; i < n; i++) {
		CE_CALL(e, x[i].gpu, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[x[i].gpu].ctx));
		CE_CALL(e, x[i].gpu, "cuStreamCreate", e->cu.stream_create(&st[i].s, CU_STREAM_NON_BLOCKING));
		CE_CALL(e, x[i].gpu, "cuEventCreate", e->cu.event_create(&st[i].start, CU_EVENT_DEFAULT));
		CE_CALL(e, x[i].gpu, "cuEventCreate", e->cu.event_create(&st[i].end, CU_EVENT_DEFAULT));
	}
	return 0;
}

int ce_measure(struct ce_engine *e, const struct ce_xfer *x, int n, bool sm, bool total, double *bw)
{
	struct ce_stream st[CE_MAX_XFERS];
	int ns = e->plan->samples, r = 0;
	double *v = calloc((size_t)n * (size_t)ns, sizeof(*v)), row[CE_MAX_XFERS];

	memset(st, 0, sizeof(st));
	if (!v) {
		snprintf(e->err, sizeof(e->err), "out of memory");
		return -1;
	}
	r = ce_verify_fill(e, x, n);
	if (r == 0)
		r = ce_streams(e, x, n, st);
	for (int k = 0; r == 0 && k < ns; k++) {
		r = ce_sample(e, x, n, sm, total, st, row);
		for (int i = 0; r == 0 && i < n; i++)
			v[(size_t)i * (size_t)ns + (size_t)k] = row[i];
	}
	if (r == -1)
		ce_drain(e, x, n, st);
	ce_streams_free(e, x, n, st);
	for (int i = 0; r == 0 && i < (total ? 1 : n); i++)
		bw[i] = copy_median(v + (size_t)i * (size_t)ns, ns);
	if (r == 0)
		r = ce_verify_check(e, x, n);
	free(v);
	return r;
}
