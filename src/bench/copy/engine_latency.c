/* bench copy's latency tests, host_device_latency_sm and
 * device_to_device_latency_sm, run the way nvbandwidth v0.8 runs them
 * (github.com/NVIDIA/nvbandwidth, tag v0.8: testcases_sm.cpp
 * HostDeviceLatencySM and DeviceToDeviceLatencySM, testcase.cpp
 * latencyHelper, kernels.cu ptrChasingKernel and latencyPtrChaseKernel,
 * common.h strideLen and latencyMemAccessCnt, nvbandwidth.cpp for the
 * fixed buffer size):
 *
 * - The buffer is 2 MiB whatever -b says, of 8-byte nodes, node i holding
 *   the address of node (i + 16) mod n: a stride of 128 bytes, so each
 *   access is to another 128-byte line (nvbandwidth: "cacheLine size 128
 *   Bytes"), and the chain comes back to its start after 2 MiB / 128 B =
 *   16384 nodes. The chain is written from the host before the timing:
 *   straight into pinned host memory, with one cuMemcpyHtoD into a GPU's.
 * - host_device_latency_sm: each GPU chases through pinned host memory
 *   (the first 2 MiB of its host buffer, on its NUMA node; one row, a
 *   column per GPU). device_to_device_latency_sm: a buffer in each GPU c's
 *   memory is chased by every GPU r with peer access to it, cell (r, c);
 *   N/A without, and waived with no pair (engine_tests.c).
 * - The timing: the chase kernel (kernels.h) is launched with a block of
 *   one thread per SM, once per SM, each block in turn the one that makes
 *   1,000,000 / SMs hops, each launch between two events on one stream
 *   and waited for. The figure is the elapsed times' sum over the hops
 *   made, in ns per access: lower is better. As in nvbandwidth no spin
 *   kernel holds the stream: a launch's own cost (microseconds) counts in
 *   a window of milliseconds.
 *
 * Differences from nvbandwidth: it divides by 1,000,000 where SMs x
 * (1,000,000 / SMs) hops were made (0.01% fewer on 132 SMs), takes GPU
 * 0's SM count for every GPU, and writes a GPU's chain with one
 * cuMemcpyHtoD per node. */
#include "engine_int.h"

#include "bench/copy/kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAT_BYTES ((size_t)2 << 20) /* nvbandwidth.cpp: 2 * _MiB */
#define LAT_STRIDE 16               /* nodes (8 bytes each): common.h strideLen */
#define LAT_ACCESSES 1000000u       /* common.h latencyMemAccessCnt */

/* Returns 0, or -1 with e->err naming GPU gi and the call that failed. */
static int lat_check(struct ce_engine *e, int gi, const char *fn, CUresult r)
{
	return r == CUDA_SUCCESS ? 0 : ce_fail(e, gi, fn, r);
}

/* Names the call as the deadline's step, then makes it: 0 or -1. */
#define LAT(gi, fn, expr) (ce_step(e, gi, fn), lat_check(e, gi, fn, (expr)))

/* The chain of n nodes in buf, whose first node GPUs address as base. */
static void lat_chain(uint64_t *buf, CUdeviceptr base, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint64_t)base + (uint64_t)((i + LAT_STRIDE) % n) * sizeof(uint64_t);
}

/* The SM loop on one stream: the sum of the launches' times in *ms. */
static int lat_launches(struct ce_engine *e, int gi, CUfunction fn, CUdeviceptr data, CUstream s, CUevent a,
			CUevent b, double *ms)
{
	struct ce_gpu *g = &e->g[gi];
	unsigned blocks = g->sms > 0 ? (unsigned)g->sms : 1, hops = LAT_ACCESSES / blocks;
	unsigned long long size = LAT_BYTES;

	*ms = 0;
	for (unsigned block = 0; block < blocks; block++) {
		void *params[] = { &data, &size, &hops, &block };
		float t = 0;
		if (LAT(gi, "cuEventRecord", e->cu.event_record(a, s)) < 0 ||
		    LAT(gi, "cuLaunchKernel(" CHASE_KERNEL_NAME ")",
			e->cu.launch_kernel(fn, blocks, 1, 1, 1, 1, 1, 0, s, params, NULL)) < 0 ||
		    LAT(gi, "cuEventRecord", e->cu.event_record(b, s)) < 0 ||
		    LAT(gi, "cuStreamSynchronize", e->cu.stream_synchronize(s)) < 0 ||
		    LAT(gi, "cuEventElapsedTime", cuda_api_elapsed(&e->cu, &t, a, b)) < 0)
			return -1;
		if (!(t > 0)) {
			snprintf(e->err, sizeof(e->err), "GPU %d (%s): cuEventElapsedTime: %g ms for %u hops of the chase",
				 e->out->gpus[gi].ordinal, e->out->gpus[gi].bdf, (double)t, hops);
			return -1;
		}
		*ms += t;
	}
	return 0;
}

/* GPU gi chases the chain at data: *ns per access. */
static int lat_chase(struct ce_engine *e, int gi, CUdeviceptr data, double *ns)
{
	struct ce_gpu *g = &e->g[gi];
	unsigned blocks = g->sms > 0 ? (unsigned)g->sms : 1;
	CUfunction fn = NULL;
	CUstream s = NULL;
	CUevent a = NULL, b = NULL;
	double ms = 0;

	int r = LAT(gi, "cuCtxSetCurrent", e->cu.ctx_set_current(g->ctx));
	if (r == 0)
		r = LAT(gi, "cuModuleGetFunction", e->cu.module_get_function(&fn, g->mod, CHASE_KERNEL_NAME));
	if (r == 0)
		r = LAT(gi, "cuStreamCreate", e->cu.stream_create(&s, CU_STREAM_DEFAULT));
	if (r == 0)
		r = LAT(gi, "cuEventCreate", e->cu.event_create(&a, CU_EVENT_DEFAULT));
	if (r == 0)
		r = LAT(gi, "cuEventCreate", e->cu.event_create(&b, CU_EVENT_DEFAULT));
	if (r == 0)
		r = lat_launches(e, gi, fn, data, s, a, b, &ms);
	if (r == 0)
		*ns = ms * 1e6 / ((double)(LAT_ACCESSES / blocks) * blocks);
	if (a)
		e->cu.event_destroy_v2(a);
	if (b)
		e->cu.event_destroy_v2(b);
	if (s)
		e->cu.stream_destroy_v2(s);
	return r;
}

/* host_device_latency_sm: GPU g's chase through host memory, each in
 * cell (0, g). The host buffers are the engine's when they hold 2 MiB
 * (on each GPU's NUMA node), else allocated here. */
static int lat_host(struct ce_engine *e, struct copy_engine_test *res)
{
	for (int gi = 0; gi < e->n; gi++) {
		struct ce_gpu *g = &e->g[gi];
		void *h = e->bytes >= LAT_BYTES ? g->h1 : NULL, *own = NULL;
		CUdeviceptr d = 0;
		int r = LAT(gi, "cuCtxSetCurrent", e->cu.ctx_set_current(g->ctx));
		if (r == 0 && !h) {
			r = LAT(gi, "cuMemHostAlloc", e->cu.mem_host_alloc(&own, LAT_BYTES, CU_MEMHOSTALLOC_PORTABLE));
			h = own;
			snprintf(res->message, sizeof(res->message),
				 "the 2 MiB host buffers were allocated apart (%s), under the default NUMA policy",
				 g->h1 ? "-b is below 2 MiB" : "the engine holds no host buffer");
		}
		if (r == 0)
			r = LAT(gi, "cuMemHostGetDevicePointer", e->cu.mem_host_get_device_pointer_v2(&d, h, 0));
		if (r == 0) {
			lat_chain(h, d, LAT_BYTES / sizeof(uint64_t));
			r = lat_chase(e, gi, d, &res->value[0][gi]);
		}
		if (own)
			e->cu.mem_free_host(own);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* device_to_device_latency_sm: a chain in GPU c's memory, chased by each
 * GPU r with peer access to c into cell (r, c). */
static int lat_peer_col(struct ce_engine *e, int c, uint64_t *chain, struct copy_engine_test *res)
{
	CUdeviceptr buf = 0;
	bool any = false;
	for (int rw = 0; rw < e->n; rw++)
		any |= rw != c && e->peer[rw][c];
	if (!any)
		return 0;
	int r = LAT(c, "cuCtxSetCurrent", e->cu.ctx_set_current(e->g[c].ctx));
	if (r == 0)
		r = LAT(c, "cuMemAlloc", e->cu.mem_alloc_v2(&buf, LAT_BYTES));
	if (r == 0 && !e->cu.memcpy_htod_v2)
		r = LAT(c, "cuMemcpyHtoD", CUDA_ERROR_NOT_FOUND);
	if (r == 0) {
		lat_chain(chain, buf, LAT_BYTES / sizeof(uint64_t));
		r = LAT(c, "cuMemcpyHtoD", e->cu.memcpy_htod_v2(buf, chain, LAT_BYTES));
	}
	for (int rw = 0; r == 0 && rw < e->n; rw++)
		if (rw != c && e->peer[rw][c])
			r = lat_chase(e, rw, buf, &res->value[0][rw * e->n + c]);
	if (buf) {
		e->cu.ctx_set_current(e->g[c].ctx);
		e->cu.mem_free_v2(buf);
	}
	return r;
}

static int lat_peers(struct ce_engine *e, struct copy_engine_test *res)
{
	uint64_t *chain = malloc(LAT_BYTES);
	int r = 0;

	if (!chain) {
		snprintf(e->err, sizeof(e->err), "out of memory");
		return -1;
	}
	for (int c = 0; r == 0 && c < e->n; c++)
		r = lat_peer_col(e, c, chain, res);
	free(chain);
	return r;
}

int ce_latency(struct ce_engine *e, bool peers, struct copy_engine_test *res)
{
	return peers ? lat_peers(e, res) : lat_host(e, res);
}
